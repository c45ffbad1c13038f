// Family prefill_hopper: prefill variant hopper_wgmma (prefill_hopper.cuh), sm_90a only.
// Its own family (not a variant inside `prefill`) so that gpu_calibrate.sh runs its check
// and bench in their own processes: a sticky CUDA error of this new kernel cannot cost the
// prefill family its rows.
//
//  check: the prefill family's shapes at head_dim 128 (full prompts, a chunk over a cached
//         prefix, varlen batches, GQA and MHA, several key-tile rounds per stage) against
//         prefill_ref in double on the same bf16 inputs, outputs poisoned with NaN, spare
//         cache slots NaN. On a GPU that is not compute capability 9.0 it prints one SKIP
//         line and passes (nothing to check there).
//  bench: validate, then time. The quick check runs first inside the bench process; if any
//         case fails (or the device cannot run sm_90a code) the family writes no row and
//         says so, so a kernel that fails its first GPU check costs the profile nothing.
//         Rows: kernel "prefill", variant "hopper_wgmma", the same columns and params as
//         the prefill family's rows (rows_per_tile=128). The cost model fits variant fa2
//         only (costmodel/kernel_fits.cc), so these rows are measured, not yet used.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_device.cuh"
#include "kernels/prefill/prefill_check.cuh"
#include "kernels/prefill/prefill_hopper.cuh"
#include "kernels/prefill/prefill_hopper_plan.h"
#include "kernels/prefill/prefill_ref.h"

namespace servesim::kernels {
namespace {

struct HopperCheckCase {
  std::string name;
  std::vector<int> kv_lens, q_lens;  // kv_lens include the chunk
  AttentionHeads heads;
};

std::vector<HopperCheckCase> hopper_check_cases(bool quick) {
  std::vector<HopperCheckCase> cases = {
      {"full prompt gqa4", {200}, {200}, {32, 8, 128}},
      {"chunk over a 223-token cached prefix", {300}, {77}, {32, 8, 128}},
      {"varlen batch of prompts and chunks", {64, 1, 130, 500}, {64, 1, 30, 129}, {32, 8, 128}},
      {"mha", {150}, {150}, {8, 8, 128}},
      {"5 key tiles: both stages reused", {600}, {600}, {4, 1, 128}},
  };
  if (!quick) {
    cases.push_back({"1000-row chunk over a 500-token prefix", {1500}, {1000}, {4, 1, 128}});
    std::vector<int> kv(16), ql(16);
    SplitMix64 g(93);
    for (int i = 0; i < 16; ++i) {
      ql[i] = static_cast<int>(g.uniform_int(1, 300));
      kv[i] = ql[i] + static_cast<int>(g.uniform_int(0, 400));
    }
    cases.push_back({"varlen batch of 16 random chunks", kv, ql, {8, 2, 128}});
  }
  return cases;
}

int run_hopper_checks(bool quick, uint64_t base_seed, bool verbose) {
  CheckReport report("prefill_hopper", verbose);
  int index = 0;
  for (const HopperCheckCase& c : hopper_check_cases(quick)) {
    const uint64_t seed = derive_seed(base_seed, 2600 + index++);
    PrefillCheckSetup setup(c.kv_lens, c.q_lens, c.heads, seed);
    const AttentionHeads& h = c.heads;
    setup.poison();
    const PrefillArgs args = setup.args();
    const int64_t cache_pages = int64_t(setup.dkv.k.size()) / (int64_t(h.num_kv_heads) * kPageSize * h.head_dim);
    const PrefillHopperRunner runner(plan_prefill(setup.q_indptr, setup.kv.kv_lens, kHopperRows), args,
                                     int64_t(setup.rows), cache_pages);
    runner.run(nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    setup.expect(report, c.name + " (hopper_wgmma)");
  }
  return report.failures();
}

int check_prefill_hopper(const CheckOptions& opts) {
  std::string why;
  if (!prefill_hopper_available(&why)) {
    std::printf("[SKIP] prefill_hopper/hopper_wgmma: %s\n", why.c_str());
    return 0;
  }
  return run_hopper_checks(opts.quick, opts.seed, opts.verbose);
}

struct HopperModel {
  const char* name;
  AttentionHeads heads;
};

void bench_point(const BenchOptions& opts, ProfileWriter& out, GpuTimer& timer, KvPagePool& pool, const HopperModel& model,
                 int batch, int q_len, int prefix, uint64_t seed) {
  const AttentionHeads& h = model.heads;
  const std::vector<int32_t> kv_lens(batch, q_len + prefix), q_lens(batch, q_len);
  std::vector<int32_t> q_indptr(1, 0);
  int64_t kv_sum = 0, pages = 0;
  for (int i = 0; i < batch; ++i) {
    q_indptr.push_back(q_indptr.back() + q_lens[i]);
    kv_sum += kv_lens[i];
    pages += pages_for_tokens(kv_lens[i]);
  }
  const int64_t rows = q_indptr.back();
  if (!bench_admit(opts, std::string("prefill hopper_wgmma ") + model.name + " B=" + std::to_string(batch) +
                             " q=" + std::to_string(q_len) + " ctx=" + std::to_string(q_len + prefix)))
    return;
  pool.reserve(std::max<int64_t>(pool.pages_of_shape(h.num_kv_heads, h.head_dim), pages), h.num_kv_heads, h.head_dim, opts.seed);
  const DevicePageTable table = pool.draw_table(kv_lens, seed);
  const PrefillPlan plan = plan_prefill(q_indptr, kv_lens, kHopperRows);
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
  const PrefillHopperRunner runner(plan, args, rows, pool.num_pages());
  const TimingStats s = timer.measure(opts, [&](cudaStream_t st) { runner.run(st); });

  ProfileRow row;
  row.kernel = "prefill";
  row.variant = "hopper_wgmma";
  row.batch = batch;
  row.ctx = q_len + prefix;
  row.q_len = q_len;
  row.prefix = prefix;
  row.heads = h.num_q_heads;
  row.kv_heads = h.num_kv_heads;
  row.head_dim = h.head_dim;
  row.page_size = kPageSize;
  row.params = std::string("model=") + model.name + ";ragged=0;q_sum=" + std::to_string(rows) +
               ";ctx_sum=" + std::to_string(kv_sum) + ";rows_per_tile=" + std::to_string(kHopperRows) +
               ";tiles=" + std::to_string(plan.num_tiles());
  row.bytes = double(kv_sum) * h.num_kv_heads * h.head_dim * 4 + 2.0 * rows * h.num_q_heads * h.head_dim * 2 +
              4.0 * rows * h.num_q_heads;
  row.flops = prefill_flops(q_indptr, kv_lens, h.num_q_heads, h.head_dim);
  fill_timing(row, s);
  out.write_row(row);
  std::printf("  prefill hopper_wgmma %-10s B=%-3d q=%-6d prefix=%-6d %10.1f us %6.1f TFLOP/s\n", model.name, batch, q_len,
              prefix, s.median_us, row.flops / (s.median_us * 1e6));
  std::fflush(stdout);
}

void bench_prefill_hopper(const BenchOptions& opts, ProfileWriter& out) {
  std::string why;
  if (!prefill_hopper_available(&why)) {
    std::printf("prefill_hopper: not benched: %s\n", why.c_str());
    return;
  }
  // Validate, then time: a variant that fails its first check writes no row.
  const int failures = run_hopper_checks(true, opts.seed, false);
  if (failures != 0) {
    std::printf("prefill_hopper: %d check case(s) failed, variant hopper_wgmma dropped from the bench\n", failures);
    return;
  }
  GpuTimer timer;
  KvPagePool pool;
  const HopperModel l8b{"llama3-8b", {32, 8, 128}};
  const HopperModel l70b{"llama3-70b", {64, 8, 128}};
  const HopperModel l70b_tp8{"llama3-70b-tp8", {8, 1, 128}};
  const HopperModel l70b_tp4{"llama3-70b-tp4", {16, 2, 128}};
  const HopperModel l70b_tp2{"llama3-70b-tp2", {32, 4, 128}};
  const HopperModel l2_7b{"llama2-7b", {32, 32, 128}};
  uint64_t seed = derive_seed(opts.seed, 0xF190);
  if (opts.quick) {
    for (int len : {512, 2048}) bench_point(opts, out, timer, pool, l8b, 1, len, 0, ++seed);
    bench_point(opts, out, timer, pool, l8b, 1, 512, 4096, ++seed);
    return;
  }
  // The target range (8K - 16K causal, head_dim 128) first, then the prefill family's sweep.
  for (int len : {8192, 16384, 256, 512, 1024, 2048, 4096, 32768, 65536, 131072})
    bench_point(opts, out, timer, pool, l8b, 1, len, 0, ++seed);
  for (int chunk : {512, 2048, 8192})
    for (int prefix : {4096, 32768}) bench_point(opts, out, timer, pool, l8b, 1, chunk, prefix, ++seed);
  for (int len : {1024, 4096, 16384})
    for (const HopperModel* m : {&l70b, &l70b_tp8, &l70b_tp4, &l70b_tp2}) bench_point(opts, out, timer, pool, *m, 1, len, 0, ++seed);
  for (int len : {1024, 4096}) bench_point(opts, out, timer, pool, l2_7b, 1, len, 0, ++seed);
}

}  // namespace
}  // namespace servesim::kernels

SERVESIM_REGISTER_KERNEL_FAMILY(prefill_hopper,
                                {.name = "prefill_hopper",
                                 .description = "dense causal prefill, Hopper path: TMA + mbarrier pipeline, warp-specialised wgmma (sm_90a, variant hopper_wgmma)",
                                 .check = servesim::kernels::check_prefill_hopper,
                                 .bench = servesim::kernels::bench_prefill_hopper,
                                 .order = 45});
