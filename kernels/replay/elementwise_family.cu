// Family `elementwise`: the GPU replay's small kernels (replay_kernels.cuh, launched by
// replay_launch.cuh exactly as the replay launches them) timed alone, so the calibrated
// cost model prices norms, RoPE, KV append, SiLU·mul, the embedding gather and greedy
// sampling from measurements instead of bytes over a copy bandwidth. The first GPU replay
// (docs/costmodel.md, "Fidelity against real execution") showed why: at a few tokens these
// launches take microseconds each whatever their bytes, ~30 % of a decode iteration.
//
// Rows: kernel `elementwise`, variant = the kernel (add_rmsnorm, rope, kv_append, silu_mul,
// embedding, argmax), m = rows (tokens; logit rows for argmax), params model=llama3-8b;
// bytes = the replay plan's bytes of that launch (replay_plan.h, the same numbers as the
// cost model's operation list), so the fitted curve (µs over bytes, kernel_fits.h) prices
// any model's launch by its bytes. Check: each kernel at a few row counts against the CPU
// references of tiny_model.h on random inputs (outputs poisoned with NaN first).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/bench/spin_kernel.cuh"
#include "kernels/common/cuda_util.cuh"
#include "kernels/common/host_util.h"
#include "kernels/common/layout.h"
#include "kernels/replay/replay_launch.cuh"
#include "kernels/replay/replay_plan.h"
#include "kernels/replay/tiny_model.h"

namespace servesim::kernels {
namespace {

using namespace replay_detail;

constexpr float kEps = 1e-5f;
constexpr float kTheta = 500000.0f;

// Bytes of the first launch named `name` in the replay plan of a decode iteration of
// `rows` sequences (every row one token and one logit row).
double plan_bytes(const ReplayModel& m, const std::string& name, int64_t rows) {
  RecordedIteration it;
  it.decodes.assign(static_cast<size_t>(rows), 64);
  for (const Launch& l : plan_iteration(m, 1, it).launches)
    if (l.name == name) return l.bytes;
  throw std::runtime_error("elementwise: the replay plan has no launch named " + name);
}

std::vector<float> down(const DeviceBuffer<__nv_bfloat16>& b) { return download_bf16_as_float(b.get(), b.size()); }

int check_elementwise(const CheckOptions& opts) {
  CheckReport report("elementwise", opts.verbose);
  const int h = 4096, hq = 32, hk = 8, d = 128, inter = 14336, vocab = 128256;
  for (int rows : {1, 3, opts.quick ? 17 : 300}) {
    const std::string tag = " rows=" + std::to_string(rows);
    const uint64_t seed = derive_seed(opts.seed, 0xE1E0 + rows);
    // add + RMSNorm
    {
      const auto x = random_uniform(size_t(rows) * h, seed), res = random_uniform(size_t(rows) * h, seed + 1),
                 w = random_uniform(h, seed + 2, 0.5f, 1.5f);
      auto dx = upload_bf16(to_bf16_bits(x)), dres = upload_bf16(to_bf16_bits(res)), dw = upload_bf16(to_bf16_bits(w));
      DeviceBuffer<__nv_bfloat16> out(size_t(rows) * h);
      fill_nan_device(out.get(), out.size());
      launch_add_rmsnorm(dx.get(), dres.get(), dw.get(), out.get(), rows, h, kEps, 1, nullptr);
      SERVESIM_CUDA_CHECK_LAUNCH();
      std::vector<float> sum(size_t(rows) * h), ref;
      for (size_t i = 0; i < sum.size(); ++i) sum[i] = round_to_bf16(res[i] + x[i]);
      rms_norm_ref(sum, w, rows, h, &ref);
      report.expect_close("add_rmsnorm" + tag, down(out), ref, 1e-2);
    }
    // SiLU·mul
    {
      const auto gu = random_uniform(size_t(rows) * 2 * inter, seed + 3, -4, 4);
      auto dgu = upload_bf16(to_bf16_bits(gu));
      DeviceBuffer<__nv_bfloat16> act(size_t(rows) * inter);
      fill_nan_device(act.get(), act.size());
      launch_silu_mul(dgu.get(), act.get(), rows, inter, nullptr);
      SERVESIM_CUDA_CHECK_LAUNCH();
      std::vector<float> ref;
      for (int r = 0; r < rows; ++r)
        for (int i = 0; i < inter; ++i) {
          const float g = gu[size_t(r) * 2 * inter + i], u = gu[size_t(r) * 2 * inter + inter + i];
          ref.push_back(round_to_bf16(round_to_bf16(silu_ref(g)) * u));
        }
      report.expect_close("silu_mul" + tag, down(act), ref, 1e-2);
    }
    // RoPE (q out, k in place)
    {
      const int n = (hq + 2 * hk) * d;
      const auto qkv = random_uniform(size_t(rows) * n, seed + 4);
      auto dqkv = upload_bf16(to_bf16_bits(qkv));
      std::vector<int32_t> pos(rows);
      for (int r = 0; r < rows; ++r) pos[r] = 17 * r + 5;
      DeviceBuffer<int32_t> dpos;
      dpos.upload(pos);
      DeviceBuffer<__nv_bfloat16> q(size_t(rows) * hq * d);
      fill_nan_device(q.get(), q.size());
      launch_rope(dqkv.get(), dpos.get(), q.get(), rows, hq, hk, d, kTheta, nullptr);
      SERVESIM_CUDA_CHECK_LAUNCH();
      std::vector<float> ref = qkv, q_ref, k_ref, k_got;
      const std::vector<float> got = down(dqkv);
      for (int r = 0; r < rows; ++r) {
        rope_ref(ref.data() + size_t(r) * n, hq, d, pos[r]);
        rope_ref(ref.data() + size_t(r) * n + hq * d, hk, d, pos[r]);
        q_ref.insert(q_ref.end(), ref.begin() + size_t(r) * n, ref.begin() + size_t(r) * n + hq * d);
        k_ref.insert(k_ref.end(), ref.begin() + size_t(r) * n + hq * d, ref.begin() + size_t(r) * n + (hq + hk) * d);
        k_got.insert(k_got.end(), got.begin() + size_t(r) * n + hq * d, got.begin() + size_t(r) * n + (hq + hk) * d);
      }
      report.expect_close("rope q" + tag, down(q), q_ref, 1e-2);
      report.expect_close("rope k" + tag, k_got, k_ref, 1e-2);
    }
    // greedy argmax over the full vocabulary: a planted maximum per row
    {
      auto logits = random_uniform(size_t(rows) * vocab, seed + 5, -1, 1);
      std::vector<int32_t> want(rows);
      for (int r = 0; r < rows; ++r) {
        want[r] = static_cast<int32_t>((uint64_t(r) * 7919 + seed) % vocab);
        logits[size_t(r) * vocab + want[r]] = 8;
      }
      auto dl = upload_bf16(to_bf16_bits(logits));
      DeviceBuffer<int32_t> sampled(rows);
      SERVESIM_CUDA_CHECK(cudaMemset(sampled.get(), 0xFF, sampled.bytes()));
      launch_argmax(dl.get(), rows, vocab, sampled.get(), nullptr);
      SERVESIM_CUDA_CHECK_LAUNCH();
      report.expect_true("argmax" + tag, sampled.download() == want, "the planted maximum of every row");
    }
  }
  return report.failures();
}

// The replay's small launches on Llama-3-8B buffers sized for `max_rows` rows (logit rows
// capped at 1,024), each launched as replay_launch.cuh launches it.
class ElementwiseOps {
 public:
  struct Op {
    const char* variant;     // the kernel, as the cost model names it
    const char* plan_name;   // its launch in the replay plan (bytes)
    bool logit_rows;         // rows are logit rows (capped at max_logit_rows())
    std::function<void(int, cudaStream_t)> launch;
  };

  ElementwiseOps(const BenchOptions& opts, int64_t max_rows)
      : m_(replay_model_by_name("llama3-8b")), max_logit_rows_(std::min<int64_t>(max_rows, 1024)) {
    const int h = int(m_.hidden), hq = int(m_.q_heads), hk = int(m_.kv_heads), d = int(m_.head_dim),
              inter = int(m_.intermediate), vocab = int(m_.vocab);
    const uint64_t seed = derive_seed(opts.seed, 0xE1E);
    x_.resize(size_t(max_rows) * h);
    res_.resize(size_t(max_rows) * h);
    w_.resize(h);
    qkv_.resize(size_t(max_rows) * (hq + 2 * hk) * d);
    q_.resize(size_t(max_rows) * hq * d);
    gu_.resize(size_t(max_rows) * 2 * inter);
    act_.resize(size_t(max_rows) * inter);
    table_.resize(size_t(vocab) * h);
    logits_.resize(size_t(max_logit_rows_) * vocab);
    const size_t cache = size_t((max_rows + kPageSize - 1) / kPageSize) * hk * kPageSize * d;
    kc_.resize(cache);
    vc_.resize(cache);
    for (auto* b : {&x_, &res_, &w_, &qkv_, &gu_, &table_, &logits_, &kc_, &vc_})
      fill_bf16_uniform_device(b->get(), b->size(), seed + reinterpret_cast<uintptr_t>(b) % 97, -1, 1);
    std::vector<int32_t> pos(max_rows), tok(max_rows);
    std::vector<int64_t> slot(max_rows);
    SplitMix64 g(seed);
    for (int64_t i = 0; i < max_rows; ++i) {
      pos[i] = static_cast<int32_t>(g.next() % 8192);
      tok[i] = static_cast<int32_t>(g.next() % static_cast<uint64_t>(vocab));
      slot[i] = i;  // token i in page i / 16, slot i % 16: every row its own cache line
    }
    sampled_.resize(max_logit_rows_);
    dpos_.upload(pos);
    dtok_.upload(tok);
    dslot_.upload(slot);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    ops_ = {
        {"add_rmsnorm", "attn_norm", false,
         [=, this](int r, cudaStream_t st) { launch_add_rmsnorm(x_.get(), res_.get(), w_.get(), x_.get(), r, h, kEps, 1, st); }},
        {"rope", "rope", false,
         [=, this](int r, cudaStream_t st) { launch_rope(qkv_.get(), dpos_.get(), q_.get(), r, hq, hk, d, kTheta, st); }},
        {"kv_append", "kv_append", false,
         [=, this](int r, cudaStream_t st) {
           launch_kv_append(qkv_.get(), dslot_.get(), kc_.get(), vc_.get(), r, hq, hk, d, st);
         }},
        {"silu_mul", "silu_mul", false,
         [=, this](int r, cudaStream_t st) { launch_silu_mul(gu_.get(), act_.get(), r, inter, st); }},
        {"embedding", "embedding", false,
         [=, this](int r, cudaStream_t st) { launch_embedding(dtok_.get(), table_.get(), x_.get(), r, h, st); }},
        {"argmax", "sampling", true,
         [=, this](int r, cudaStream_t st) { launch_argmax(logits_.get(), r, vocab, sampled_.get(), st); }},
    };
  }
  ElementwiseOps(const ElementwiseOps&) = delete;
  ElementwiseOps& operator=(const ElementwiseOps&) = delete;

  const std::vector<Op>& ops() const { return ops_; }
  const ReplayModel& model() const { return m_; }
  int64_t max_logit_rows() const { return max_logit_rows_; }

 private:
  ReplayModel m_;
  int64_t max_logit_rows_;
  DeviceBuffer<__nv_bfloat16> x_, res_, w_, qkv_, q_, gu_, act_, table_, logits_, kc_, vc_;
  DeviceBuffer<int32_t> dpos_, dtok_, sampled_;
  DeviceBuffer<int64_t> dslot_;
  std::vector<Op> ops_;
};

void bench_elementwise(const BenchOptions& opts, ProfileWriter& out) {
  std::vector<int64_t> grid = opts.quick ? std::vector<int64_t>{1, 16, 512}
                                         : std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096,
                                                                8192, 16384};
  const ElementwiseOps e(opts, grid.back());
  GpuTimer timer;
  for (const ElementwiseOps::Op& op : e.ops()) {
    for (int64_t rows : grid) {
      if (op.logit_rows && rows > e.max_logit_rows()) continue;
      const std::string point = std::string("elementwise ") + op.variant + " rows=" + std::to_string(rows);
      if (!bench_admit(opts, point)) continue;
      const TimingStats s = timer.measure(opts, [&](cudaStream_t st) {
        op.launch(static_cast<int>(rows), st);
        SERVESIM_CUDA_CHECK_LAUNCH();
      });
      ProfileRow row;
      row.kernel = "elementwise";
      row.variant = op.variant;
      row.m = rows;
      row.params = "model=llama3-8b";
      row.bytes = plan_bytes(e.model(), op.plan_name, rows);
      fill_timing(row, s);
      out.write_row(row);
      std::printf("  elementwise/%-12s rows=%-6lld %9.2f us %8.1f GB/s\n", op.variant, static_cast<long long>(rows),
                  s.median_us, row.bytes / (s.median_us * 1e3));
    }
  }
}

// Family `elementwise_queued`: the same launches as a queued stream, as in a forward pass.
// Each sample is a 3 ms spin kernel followed by kQueuedLaunches launches of one kernel at
// one row count (the host enqueues them all while the spin holds the GPU; the first
// launch runs on a flushed L2, the others on the L2 its predecessor left, as kernels of a
// layer do); a sample of the spin alone is taken beside it. Rows: kernel
// `elementwise_queued` (no fit reads it yet: kept apart from the isolated rows that price
// these kernels), variant and m as in `elementwise`, median_us / p10_us / p90_us = (that
// statistic of the queued samples - the median of the spin samples) / launches, the
// per-launch cost in a stream; bytes as in `elementwise`. Small row counts only (1-512),
// where an isolated row's launch and cold-cache costs are most of the time.
constexpr int kQueuedLaunches = 64;

void bench_elementwise_queued(const BenchOptions& opts, ProfileWriter& out) {
  const std::vector<int64_t> grid =
      opts.quick ? std::vector<int64_t>{1, 16} : std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  const ElementwiseOps e(opts, grid.back());
  GpuTimer timer;
  for (const ElementwiseOps::Op& op : e.ops()) {
    for (int64_t rows : grid) {
      const std::string point = std::string("elementwise_queued ") + op.variant + " rows=" + std::to_string(rows);
      if (!bench_admit(opts, point)) continue;
      const TimingStats spin = timer.measure(opts, [&](cudaStream_t st) {
        spin_kernel<<<1, 1, 0, st>>>(kSpinNs);
        SERVESIM_CUDA_CHECK_LAUNCH();
      });
      const TimingStats q = timer.measure(opts, [&](cudaStream_t st) {
        spin_kernel<<<1, 1, 0, st>>>(kSpinNs);
        for (int i = 0; i < kQueuedLaunches; ++i) op.launch(static_cast<int>(rows), st);
        SERVESIM_CUDA_CHECK_LAUNCH();
      });
      auto per_launch = [&](double us) { return (us - spin.median_us) / kQueuedLaunches; };
      ProfileRow row;
      row.kernel = "elementwise_queued";
      row.variant = op.variant;
      row.m = rows;
      row.params = "model=llama3-8b;launches=" + std::to_string(kQueuedLaunches) + ";spin_ns=" + std::to_string(kSpinNs);
      row.bytes = plan_bytes(e.model(), op.plan_name, rows);
      fill_timing(row, q);
      row.median_us = per_launch(q.median_us);
      row.p10_us = per_launch(q.p10_us);
      row.p90_us = per_launch(q.p90_us);
      row.min_us = per_launch(q.min_us);
      row.max_us = per_launch(q.max_us);
      out.write_row(row);
      std::printf("  elementwise_queued/%-12s rows=%-6lld %9.2f us per launch (spin %.1f us)\n", op.variant,
                  static_cast<long long>(rows), row.median_us, spin.median_us);
    }
  }
}

}  // namespace
}  // namespace servesim::kernels

SERVESIM_REGISTER_KERNEL_FAMILY(elementwise,
                                {.name = "elementwise",
                                 .description = "the replay's norms, RoPE, KV append, SiLU·mul, embedding, argmax (llama3-8b)",
                                 .check = servesim::kernels::check_elementwise,
                                 .bench = servesim::kernels::bench_elementwise,
                                 .order = 25});

SERVESIM_REGISTER_KERNEL_FAMILY(elementwise_queued,
                                {.name = "elementwise_queued",
                                 .description = "the same small launches queued back to back behind a spin kernel: per-launch cost in a stream",
                                 .check = nullptr,  // elementwise's kernels: checked by family elementwise
                                 .bench = servesim::kernels::bench_elementwise_queued,
                                 .order = 26});
