// Dense causal prefill family: check (both tile widths vs prefill_ref in double on the
// same bf16 inputs) and bench (full prompts, chunk x cached prefix, batched and varlen
// prompts, Llama-3-8B and -70B head shapes). Rows: kernel "prefill", variant "fa2" (the
// tile width the launcher would choose) plus diagnostic rows "fa2_m64" / "fa2_m128"
// (both widths forced) on the full-prompt sweep.
#include <cstdio>
#include <string>

#include "kernels/bench/check_report.h"
#include "kernels/bench/device_info.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_device.cuh"
#include "kernels/prefill/prefill.cuh"
#include "kernels/prefill/prefill_check.cuh"
#include "kernels/prefill/prefill_ref.h"

namespace servesim::kernels {
namespace {

struct PrefillCheckCase {
  std::string name;
  std::vector<int> kv_lens, q_lens;  // kv_lens include the chunk
  AttentionHeads heads;
};

std::vector<PrefillCheckCase> check_cases(bool quick) {
  std::vector<PrefillCheckCase> cases = {
      {"full prompt gqa4 d128", {200}, {200}, {32, 8, 128}},
      {"chunk over a 223-token cached prefix", {300}, {77}, {32, 8, 128}},
      {"varlen batch of prompts and chunks", {64, 1, 130, 500}, {64, 1, 30, 129}, {32, 8, 128}},
      {"gqa8 d64", {100, 257}, {100, 57}, {16, 2, 64}},
      {"mha d128", {150}, {150}, {8, 8, 128}},
  };
  if (!quick) {
    cases.push_back({"1000-row chunk over a 500-token prefix", {1500}, {1000}, {4, 1, 128}});
    std::vector<int> kv(16), ql(16);
    SplitMix64 g(91);
    for (int i = 0; i < 16; ++i) {
      ql[i] = static_cast<int>(g.uniform_int(1, 300));
      kv[i] = ql[i] + static_cast<int>(g.uniform_int(0, 400));
    }
    cases.push_back({"varlen batch of 16 random chunks", kv, ql, {8, 2, 128}});
  }
  return cases;
}

int check_prefill(const CheckOptions& opts) {
  CheckReport report("prefill", opts.verbose);
  int index = 0;
  for (const PrefillCheckCase& c : check_cases(opts.quick)) {
    const uint64_t seed = derive_seed(opts.seed, 2000 + index++);
    PrefillCheckSetup setup(c.kv_lens, c.q_lens, c.heads, seed);
    for (int rows_per_tile : {64, 128, 0}) {  // 0: variant fa2_qreg (64-row tiles)
      const bool qreg = rows_per_tile == 0;
      if (qreg) rows_per_tile = 64;
      setup.poison();
      const PrefillRunner runner(plan_prefill(setup.q_indptr, setup.kv.kv_lens, rows_per_tile), c.heads);
      const PrefillArgs args = setup.args();
      qreg ? runner.run_qreg(args, nullptr) : runner.run(args, nullptr);
      SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
      setup.expect(report, c.name + (qreg ? " (fa2_qreg)" : " (m" + std::to_string(rows_per_tile) + ")"));
    }
  }
  return report.failures();
}

struct PrefillModel {
  const char* name;
  AttentionHeads heads;
};

// One measured point. rows_per_tile 0 = the launcher's choice (variant "fa2").
void bench_point(const BenchOptions& opts, ProfileWriter& out, GpuTimer& timer, KvPagePool& pool,
                 const PrefillModel& model, const std::vector<int32_t>& kv_lens, const std::vector<int32_t>& q_lens,
                 bool ragged, int rows_per_tile, int sms, uint64_t seed) {
  const AttentionHeads& h = model.heads;
  const int batch = static_cast<int>(kv_lens.size());
  std::vector<int32_t> q_indptr(1, 0);
  int64_t kv_sum = 0, pages = 0;
  for (int i = 0; i < batch; ++i) {
    q_indptr.push_back(q_indptr.back() + q_lens[i]);
    kv_sum += kv_lens[i];
    pages += pages_for_tokens(kv_lens[i]);
  }
  const int64_t rows = q_indptr.back();
  if (!bench_admit(opts, std::string("prefill ") + model.name + " B=" + std::to_string(batch) + " q=" +
                             std::to_string((rows + batch / 2) / batch) + " ctx=" + std::to_string((kv_sum + batch / 2) / batch) +
                             (ragged ? " ragged" : "") +
                             (rows_per_tile > 0 ? " m" + std::to_string(rows_per_tile) : rows_per_tile < 0 ? " qreg" : "")))
    return;
  // rows_per_tile < 0: variant fa2_qreg (64-row tiles).
  const bool qreg = rows_per_tile < 0;
  const int chosen = qreg ? 64 : rows_per_tile ? rows_per_tile : choose_prefill_rows_per_tile(q_indptr, h.num_q_heads, sms);
  const std::string variant = qreg ? "fa2_qreg" : rows_per_tile ? "fa2_m" + std::to_string(rows_per_tile) : "fa2";

  pool.reserve(std::max<int64_t>(pool.pages_of_shape(h.num_kv_heads, h.head_dim), pages), h.num_kv_heads, h.head_dim, opts.seed);
  const DevicePageTable table = pool.draw_table(kv_lens, seed);
  const PrefillPlan plan = plan_prefill(q_indptr, kv_lens, chosen);
  const PrefillRunner runner(plan, h);
  DeviceBuffer<int32_t> dq_indptr;
  dq_indptr.upload(q_indptr);
  DeviceBuffer<__nv_bfloat16> q(size_t(rows) * h.num_q_heads * h.head_dim), o(q.size());
  DeviceBuffer<float> lse(size_t(rows) * h.num_q_heads);
  fill_bf16_uniform_device(q.get(), q.size(), seed, -1, 1);
  PrefillArgs args;
  args.q = q.get();
  args.k_cache = pool.k();
  args.v_cache = pool.v();
  args.kv = table.view();
  args.q_indptr = dq_indptr.get();
  args.heads = h;
  args.out = o.get();
  args.lse = lse.get();
  const TimingStats s =
      timer.measure(opts, [&](cudaStream_t st) { qreg ? runner.run_qreg(args, st) : runner.run(args, st); });

  ProfileRow row;
  row.kernel = "prefill";
  row.variant = variant;
  row.batch = batch;
  row.ctx = (kv_sum + batch / 2) / batch;
  row.q_len = (rows + batch / 2) / batch;
  row.prefix = row.ctx - row.q_len;
  row.heads = h.num_q_heads;
  row.kv_heads = h.num_kv_heads;
  row.head_dim = h.head_dim;
  row.page_size = kPageSize;
  row.params = std::string("model=") + model.name + ";ragged=" + (ragged ? "1" : "0") + ";q_sum=" +
               std::to_string(rows) + ";ctx_sum=" + std::to_string(kv_sum) + ";rows_per_tile=" +
               std::to_string(chosen) + ";tiles=" + std::to_string(plan.num_tiles());
  row.bytes = double(kv_sum) * h.num_kv_heads * h.head_dim * 4 + 2.0 * rows * h.num_q_heads * h.head_dim * 2 +
              4.0 * rows * h.num_q_heads;
  row.flops = prefill_flops(q_indptr, kv_lens, h.num_q_heads, h.head_dim);
  fill_timing(row, s);
  out.write_row(row);
  std::printf("  prefill %-8s %-10s B=%-3d q=%-6ld prefix=%-6ld %10.1f us %6.1f TFLOP/s\n", variant.c_str(),
              model.name, batch, long(row.q_len), long(row.prefix), s.median_us, row.flops / (s.median_us * 1e6));
  std::fflush(stdout);
}

void bench_prefill(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  KvPagePool pool;
  const int sms = current_device_sm_count();
  const PrefillModel l8b{"llama3-8b", {32, 8, 128}};
  const PrefillModel l70b{"llama3-70b", {64, 8, 128}};
  const PrefillModel l70b_tp8{"llama3-70b-tp8", {8, 1, 128}};
  const PrefillModel l70b_tp4{"llama3-70b-tp4", {16, 2, 128}};  // one GPU's share at TP 4
  const PrefillModel l70b_tp2{"llama3-70b-tp2", {32, 4, 128}};  // at TP 2
  const PrefillModel l2_7b{"llama2-7b", {32, 32, 128}};         // multi-head attention
  uint64_t seed = derive_seed(opts.seed, 0xF111);
  auto point = [&](const PrefillModel& m, int batch, int q_len, int prefix, int rows_per_tile = 0) {
    bench_point(opts, out, timer, pool, m, std::vector<int32_t>(batch, q_len + prefix), std::vector<int32_t>(batch, q_len),
                false, rows_per_tile, sms, ++seed);
  };
  auto varlen = [&](const PrefillModel& m, int batch, int max_q, int max_prefix) {
    SplitMix64 g(++seed);
    std::vector<int32_t> kv(batch), ql(batch);
    for (int i = 0; i < batch; ++i) {
      ql[i] = static_cast<int32_t>(g.uniform_int(128, max_q));
      kv[i] = ql[i] + static_cast<int32_t>(g.uniform_int(0, max_prefix));
    }
    bench_point(opts, out, timer, pool, m, kv, ql, true, 0, sms, ++seed);
  };
  if (opts.quick) {
    for (int len : {512, 2048}) point(l8b, 1, len, 0);
    point(l8b, 1, 512, 4096);
    varlen(l8b, 4, 1024, 4096);
    return;
  }
  const std::vector<int> prompts = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
  for (int len : prompts) point(l8b, 1, len, 0);
  for (int chunk : {256, 512, 1024, 2048, 4096, 8192})
    for (int prefix : {1024, 4096, 16384, 32768, 65536, 131072}) point(l8b, 1, chunk, prefix);
  for (int batch : {4, 16})
    for (int len : {512, 2048}) point(l8b, batch, len, 0);
  for (int batch : {4, 16}) varlen(l8b, batch, 2048, 16384);
  for (int len : {1024, 4096, 16384}) {
    point(l70b, 1, len, 0);
    point(l70b_tp8, 1, len, 0);
    point(l70b_tp4, 1, len, 0);
    point(l70b_tp2, 1, len, 0);
  }
  for (const PrefillModel* m : {&l70b_tp4, &l70b_tp2}) point(*m, 1, 2048, 16384);  // a chunk over a cached prefix
  for (int len : {512, 1024, 2048, 4096}) point(l2_7b, 1, len, 0);  // llama-2-7b: 4K context
  point(l2_7b, 1, 512, 2048);
  point(l2_7b, 4, 1024, 0);
  for (int len : prompts) {  // diagnostics: both tile widths forced
    point(l8b, 1, len, 0, 64);
    point(l8b, 1, len, 0, 128);
    point(l8b, 1, len, 0, -1);  // variant fa2_qreg
  }
}

}  // namespace
}  // namespace servesim::kernels

SERVESIM_REGISTER_KERNEL_FAMILY(prefill, {.name = "prefill",
                                          .description = "dense causal prefill (chunked, varlen), mma.sync flash attention",
                                          .check = servesim::kernels::check_prefill,
                                          .bench = servesim::kernels::bench_prefill,
                                          .order = 40});
