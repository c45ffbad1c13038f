// Dense paged decode family: check (GPU split-KV decode vs decode_ref in double on the
// same bf16 inputs) and bench (batch x context grid of the spec, Llama-3-8B and -70B
// head shapes, ragged batches). Rows: kernel "decode", variant "splitkv".
#include <cmath>
#include <cstdio>
#include <string>

#include "kernels/bench/check_report.h"
#include "kernels/bench/device_info.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_device.cuh"
#include "kernels/decode/decode.cuh"
#include "kernels/decode/decode_ref.h"

namespace servesim::kernels {
namespace {

struct DecodeCheckCase {
  std::string name;
  std::vector<int> lens;
  AttentionHeads heads;
  int split_tokens = 0;  // 0 = the planner's choice
};

std::vector<DecodeCheckCase> check_cases(bool quick) {
  std::vector<DecodeCheckCase> cases = {
      {"gqa4 d128 ragged, planner splits", {1, 17, 300, 64}, {32, 8, 128}, 0},
      {"gqa4 d128 ragged, 64-token splits", {1, 17, 300, 64, 129}, {32, 8, 128}, 64},
      {"gqa8 d64, 128-token splits", {1000, 5, 129}, {16, 2, 64}, 128},
      {"mha d128", {77, 256}, {4, 4, 128}, 0},
      {"group16 d128, 64-token splits", {500, 33}, {16, 1, 128}, 64},
      {"gqa4 d128 one split per sequence (no merge)", {50, 700}, {8, 2, 128}, 1024},
  };
  if (!quick) {
    cases.push_back({"gqa4 d128 long contexts", {4096, 8191, 1, 12000}, {32, 8, 128}, 0});
    std::vector<int> lens(64);
    SplitMix64 g(77);
    for (auto& l : lens) l = static_cast<int>(g.uniform_int(1, 2000));
    cases.push_back({"gqa4 d128 batch of 64 random lengths", lens, {32, 8, 128}, 0});
  }
  return cases;
}

int check_decode(const CheckOptions& opts) {
  CheckReport report("decode", opts.verbose);
  const int sms = current_device_sm_count();
  int index = 0;
  for (const DecodeCheckCase& c : check_cases(opts.quick)) {
    const uint64_t seed = derive_seed(opts.seed, 1000 + index++);
    const HostPagedKv kv = make_random_paged_kv(c.lens, c.heads.num_kv_heads, c.heads.head_dim, seed);
    const std::vector<float> q = random_uniform(c.lens.size() * c.heads.num_q_heads * c.heads.head_dim, seed + 1);
    const DecodePlan plan = plan_decode(kv.kv_lens, c.heads.num_kv_heads, sms, c.split_tokens);

    DevicePagedKv dkv;
    dkv.upload(kv);
    auto dq = upload_bf16(to_bf16_bits(q));
    DeviceBuffer<__nv_bfloat16> dout(q.size());
    DeviceBuffer<float> dlse(c.lens.size() * c.heads.num_q_heads);
    fill_nan_device(dout.get(), dout.size());
    fill_nan_device(dlse.get(), dlse.size());

    DecodeRunner runner(plan, c.heads);
    DecodeArgs args;
    args.q = dq.get();
    args.k_cache = dkv.k.get();
    args.v_cache = dkv.v.get();
    args.kv = dkv.table.view();
    args.heads = c.heads;
    args.out = dout.get();
    args.lse = dlse.get();
    runner.run(args, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> ref, ref_lse;
    decode_ref({&kv, &q, c.heads.num_q_heads, c.heads.default_scale()}, &ref, &ref_lse);
    const std::string name = c.name + " (split " + std::to_string(plan.split_tokens) + ", " +
                             std::to_string(plan.num_work()) + " work items)";
    report.expect_close(name + " out", download_bf16_as_float(dout.get(), dout.size()), ref, kBf16RelTol);
    report.expect_close(name + " lse", dlse.download(), ref_lse, 1e-3);
  }
  return report.failures();
}

struct DecodeModel {
  const char* name;
  AttentionHeads heads;
};

void bench_point(const BenchOptions& opts, ProfileWriter& out, GpuTimer& timer, KvPagePool& pool,
                 const DecodeModel& model, const std::vector<int32_t>& lens, bool ragged, int sms, uint64_t seed,
                 const std::string& extra_params = "") {
  const AttentionHeads& h = model.heads;
  const int batch = static_cast<int>(lens.size());
  int64_t tokens = 0, pages = 0, lo = lens[0], hi = lens[0];
  for (int32_t l : lens) {
    tokens += l;
    pages += pages_for_tokens(l);
    lo = std::min<int64_t>(lo, l);
    hi = std::max<int64_t>(hi, l);
  }
  if (!bench_admit(opts, std::string("decode ") + model.name + " B=" + std::to_string(batch) + " ctx=" +
                             std::to_string((tokens + batch / 2) / batch) + (ragged ? " ragged" : "")))
    return;
  pool.reserve(std::max<int64_t>(pool.pages_of_shape(h.num_kv_heads, h.head_dim), pages), h.num_kv_heads, h.head_dim, opts.seed);
  const DevicePageTable table = pool.draw_table(lens, seed);
  const DecodePlan plan = plan_decode(lens, h.num_kv_heads, sms);
  const DecodeRunner runner(plan, h);
  DeviceBuffer<__nv_bfloat16> q(size_t(batch) * h.num_q_heads * h.head_dim), o(q.size());
  DeviceBuffer<float> lse(size_t(batch) * h.num_q_heads);
  fill_bf16_uniform_device(q.get(), q.size(), seed, -1, 1);
  DecodeArgs args;
  args.q = q.get();
  args.k_cache = pool.k();
  args.v_cache = pool.v();
  args.kv = table.view();
  args.heads = h;
  args.out = o.get();
  args.lse = lse.get();
  const TimingStats s = timer.measure(opts, [&](cudaStream_t st) { runner.run(args, st); });

  ProfileRow row;
  row.kernel = "decode";
  row.variant = "splitkv";
  row.batch = batch;
  row.ctx = (tokens + batch / 2) / batch;
  row.q_len = 1;
  row.heads = h.num_q_heads;
  row.kv_heads = h.num_kv_heads;
  row.head_dim = h.head_dim;
  row.page_size = kPageSize;
  row.params = std::string("model=") + model.name + ";ragged=" + (ragged ? "1" : "0") +
               ";ctx_min=" + std::to_string(lo) + ";ctx_max=" + std::to_string(hi) + ";ctx_sum=" +
               std::to_string(tokens) + ";split_tokens=" + std::to_string(plan.split_tokens) +
               ";work_items=" + std::to_string(plan.num_work()) + extra_params;
  const double kv_bytes = double(tokens) * h.num_kv_heads * h.head_dim * 2 /*K,V*/ * 2 /*bf16*/;
  row.bytes = kv_bytes + 2.0 * batch * h.num_q_heads * h.head_dim * 2 /*q,out*/ + 4.0 * (pages + 2 * batch);
  row.flops = 4.0 * h.head_dim * h.num_q_heads * double(tokens);
  fill_timing(row, s);
  out.write_row(row);
  std::printf("  decode %-10s B=%-4d ctx=%-7ld %9.1f us %7.0f GB/s\n", model.name, batch, long(row.ctx), s.median_us,
              row.bytes / (s.median_us * 1e3));
  std::fflush(stdout);
}

// Uniform batches (every sequence at one KV length) over batches x KV lengths, KV
// lengths outermost, the points with batch x KV <= cap; one seed per point.
void bench_uniform_grid(const BenchOptions& opts, ProfileWriter& out, GpuTimer& timer, KvPagePool& pool,
                        const DecodeModel& m, const std::vector<int>& batches, const std::vector<int>& ctxs, int64_t cap,
                        int sms, uint64_t& seed, const std::string& extra_params = "") {
  for (int c : ctxs)
    for (int b : batches)
      if (int64_t(b) * c <= cap)
        bench_point(opts, out, timer, pool, m, std::vector<int32_t>(b, c), false, sms, ++seed, extra_params);
}

void bench_decode(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  KvPagePool pool;
  const int sms = current_device_sm_count();
  const int64_t max_tokens = int64_t{1} << 21;  // B * ctx bound: 8 GiB of KV at 8 KV heads x 128
  const DecodeModel l8b{"llama3-8b", {32, 8, 128}};
  const DecodeModel l70b{"llama3-70b", {64, 8, 128}};
  const DecodeModel l70b_tp8{"llama3-70b-tp8", {8, 1, 128}};
  const DecodeModel l70b_tp4{"llama3-70b-tp4", {16, 2, 128}};  // one GPU's share at TP 4
  const DecodeModel l70b_tp2{"llama3-70b-tp2", {32, 4, 128}};  // at TP 2
  const DecodeModel l2_7b{"llama2-7b", {32, 32, 128}};         // multi-head attention
  uint64_t seed = derive_seed(opts.seed, 0xDEC0DE);
  auto grid = [&](const DecodeModel& m, const std::vector<int>& batches, const std::vector<int>& ctxs, int64_t cap) {
    bench_uniform_grid(opts, out, timer, pool, m, batches, ctxs, cap, sms, seed);
  };
  auto ragged = [&](const DecodeModel& m, int batch, int lo, int hi) {
    SplitMix64 g(++seed);
    std::vector<int32_t> lens(batch);
    for (auto& l : lens) l = static_cast<int32_t>(std::exp(g.uniform(std::log(double(lo)), std::log(double(hi)))));
    bench_point(opts, out, timer, pool, m, lens, true, sms, ++seed);
  };
  if (opts.quick) {
    grid(l8b, {1, 16}, {1024, 8192}, max_tokens);
    ragged(l8b, 16, 256, 8192);
    return;
  }
  pool.reserve(max_tokens / kPageSize, 8, 128, opts.seed);  // allocate the largest pool up front
  grid(l8b, {1, 2, 4, 8, 16, 32, 64, 128, 256}, {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072}, max_tokens);
  for (int b : {8, 32, 128}) ragged(l8b, b, 256, 32768);
  ragged(l8b, 256, 512, 4096);
  grid(l70b, {1, 8, 32, 128}, {1024, 8192, 32768, 131072}, max_tokens);
  grid(l70b_tp8, {1, 8, 32, 128, 256}, {1024, 8192, 32768, 131072}, max_tokens);
  grid(l70b_tp4, {1, 8, 32, 128, 256}, {1024, 8192, 32768, 131072}, max_tokens);
  grid(l70b_tp2, {1, 8, 32, 128}, {1024, 8192, 32768, 131072}, max_tokens);
  // MHA: 4x the KV bytes per token of llama3-8b, so a quarter of the token bound (8 GiB of KV).
  grid(l2_7b, {1, 4, 16, 64, 256}, {512, 1024, 2048, 4096, 8192, 32768}, max_tokens / 4);
}

// decode_ragged: ragged batches against the uniform batch of the same size at their mean
// KV length (the cost model prices a ragged batch as that uniform one: docs/costmodel.md,
// "Decode rows and launch excess"), Llama-3-8B heads. Each ragged row carries
// dist=<shape> and its uniform partner dist=<shape>-uniform. Kept apart from the `decode`
// family so a profile can gain it as a family of its own (merge --sessions).
void bench_decode_ragged(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  KvPagePool pool;
  const int sms = current_device_sm_count();
  const DecodeModel l8b{"llama3-8b", {32, 8, 128}};
  uint64_t seed = derive_seed(opts.seed, 0xDEC0DE + 7);
  struct Dist {
    const char* name;
    int lo, hi;      // log-uniform in [lo, hi], or
    int base, long_; // all at base but one at long_ (lo == 0)
  };
  const std::vector<Dist> dists = {{"loguniform_128_4096", 128, 4096, 0, 0},
                                   {"loguniform_512_16384", 512, 16384, 0, 0},
                                   {"loguniform_256_32768", 256, 32768, 0, 0},
                                   {"one_long_1024_32768", 0, 0, 1024, 32768},
                                   {"halves_512_8192", 0, 0, 512, 8192}};
  const std::vector<int> batches = opts.quick ? std::vector<int>{16, 128}
                 : std::vector<int>{16, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 192, 256};
  pool.reserve((int64_t{1} << 21) / kPageSize, 8, 128, opts.seed);
  for (const Dist& d : dists) {
    for (int b : batches) {
      SplitMix64 g(++seed);
      std::vector<int32_t> lens(b);
      for (int i = 0; i < b; ++i) {
        if (d.lo > 0)
          lens[i] = static_cast<int32_t>(std::exp(g.uniform(std::log(double(d.lo)), std::log(double(d.hi)))));
        else if (d.name[0] == 'o')
          lens[i] = i == b / 2 ? d.long_ : d.base;
        else
          lens[i] = i % 2 ? d.long_ : d.base;
      }
      int64_t sum = 0;
      for (int32_t l : lens) sum += l;
      bench_point(opts, out, timer, pool, l8b, lens, true, sms, ++seed, std::string(";dist=") + d.name);
      const auto mean = static_cast<int32_t>((sum + b / 2) / b);
      bench_point(opts, out, timer, pool, l8b, std::vector<int32_t>(b, mean), false, sms, ++seed,
                  std::string(";dist=") + d.name + "-uniform");
    }
  }
}

// decode_batches: uniform Llama-3-8B decode batches at the batch sizes between the
// `decode` family's powers of two (3 to 240), where the split-KV plan's wave count, and so
// the time, is not smooth in the batch size (a batch of 8 x B blocks is one wave of the
// 3 x SMs slots at B <= 49, then 1.3 waves at 64, 1.9 at 96, 2.6 at 128 on 132 SMs).
// Rows are ordinary `decode` rows (ragged=0, params grid=batches): the cost model's grid
// (costmodel/decode_grid.h) gains these batch sizes instead of interpolating across them.
void bench_decode_batches(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  KvPagePool pool;
  const int sms = current_device_sm_count();
  const DecodeModel l8b{"llama3-8b", {32, 8, 128}};
  const int64_t max_tokens = int64_t{1} << 21;
  uint64_t seed = derive_seed(opts.seed, 0xDEC0DE + 11);
  const std::vector<int> batches =
      opts.quick ? std::vector<int>{24, 96}
                 : std::vector<int>{3, 6, 12, 24, 40, 48, 56, 72, 80, 88, 96, 104, 112, 120, 144, 160, 176, 192, 208, 224, 240};
  const std::vector<int> ctxs = opts.quick ? std::vector<int>{1024} : std::vector<int>{512, 1024, 2048, 4096, 8192, 16384, 32768};
  pool.reserve(max_tokens / kPageSize, 8, 128, opts.seed);
  bench_uniform_grid(opts, out, timer, pool, l8b, batches, ctxs, max_tokens, sms, seed, ";grid=batches");
}

}  // namespace
}  // namespace servesim::kernels

SERVESIM_REGISTER_KERNEL_FAMILY(decode_batches, {.name = "decode_batches",
                                                 .description = "dense decode: uniform batches between the decode family's powers of two",
                                                 .check = nullptr,  // decode's kernel: checked by family decode
                                                 .bench = servesim::kernels::bench_decode_batches,
                                                 .order = 32});

SERVESIM_REGISTER_KERNEL_FAMILY(decode_ragged, {.name = "decode_ragged",
                                                .description = "dense decode: ragged batches vs the uniform batch at their mean KV length",
                                                .check = nullptr,  // decode's kernel: checked by family decode
                                                .bench = servesim::kernels::bench_decode_ragged,
                                                .order = 31});

SERVESIM_REGISTER_KERNEL_FAMILY(decode, {.name = "decode",
                                         .description = "dense paged decode, split-KV + merge, GQA (page 16)",
                                         .check = servesim::kernels::check_decode,
                                         .bench = servesim::kernels::bench_decode,
                                         .order = 30});
