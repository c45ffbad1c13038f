// GEMM family: cuBLASLt bf16 linear layers of every model in configs/models (shipped_models(): Llama-3-8B,
// Llama-3-70B, Llama-2-7B) at TP 1/2/4/8 over the token grid M = 1 ... 16384 (costmodel/gemm_shapes.h) plus
// off-grid probe M (params probe=1, what `servesim calibrate validate` holds out). Rows:
// kernel "gemm", variant "cublaslt", m/n/k, params "model=..;layer=..;tp=..". A (m, n, k) shared by two
// labels (e.g. the same matrix in two models) is measured once and reported under both.
//
// gemm_dense family: the same rows for Llama-3-8B at TP 1 (the replayed model) at the M the
// grid skips, dense enough to see cuBLASLt's algorithm choice change with M (its time is
// not monotone in M: e.g. gate_up at M=448 measured 287 us on an H100, at M=512 157 us).
// M: every token 1-64, every 4 to 512, every 8 to 2,048, every 32 to 4,096 (the LM head,
// whose M is the logit rows, to 512), less the M the gemm family measures, so no
// (m, n, k) is measured by both. Params add ";dense=1".
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "costmodel/gemm_shapes.h"
#include "kernels/bench/check_report.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/common/cuda_util.cuh"
#include "kernels/common/host_util.h"
#include "kernels/gemm/gemm_cublaslt.cuh"
#include "kernels/gemm/gemm_ref.h"
#include "kernels/gemm/linear_shapes.h"

namespace servesim::kernels {
namespace {

// One profile row of a linear layer at M = m: params "model=..;layer=..;tp=.." + extra.
ProfileRow gemm_row(const LinearShape& shape, int64_t m, const std::string& extra, const TimingStats& stats) {
  ProfileRow row;
  row.kernel = "gemm";
  row.variant = "cublaslt";
  row.m = m;
  row.n = shape.n;
  row.k = shape.k;
  row.params = "model=" + shape.model + ";layer=" + shape.layer + ";tp=" + std::to_string(shape.tp) + extra;
  row.bytes = 2.0 * (double(m) * shape.k + double(shape.n) * shape.k + double(m) * shape.n);
  row.flops = 2.0 * double(m) * shape.n * shape.k;
  fill_timing(row, stats);
  return row;
}

int check_gemm(const CheckOptions& opts) {
  CheckReport report("gemm", opts.verbose);
  LtGemm gemm;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes = {{1, 256, 512}, {33, 136, 64}, {128, 768, 1024}};
  if (!opts.quick) shapes.push_back({300, 1024, 4096});
  int index = 0;
  for (const auto& [m, n, k] : shapes) {
    const auto x = random_uniform(size_t(m * k), derive_seed(opts.seed, 100 + index));
    const auto w = random_uniform(size_t(n * k), derive_seed(opts.seed, 200 + index));
    ++index;
    auto dx = upload_bf16(to_bf16_bits(x)), dw = upload_bf16(to_bf16_bits(w));
    DeviceBuffer<__nv_bfloat16> dy(size_t(m * n));
    fill_nan_device(dy.get(), dy.size());
    gemm.run(dx.get(), dw.get(), dy.get(), m, n, k, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> ref;
    gemm_ref(x, w, m, n, k, &ref);
    report.expect_close("cublaslt m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k),
                        download_bf16_as_float(dy.get(), dy.size()), ref, kBf16RelTol);
  }
  return report.failures();
}

void bench_gemm(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  LtGemm gemm;
  const int64_t max_m = opts.quick ? 1024 : 16384;
  // The grid plus the off-grid probes (params probe=1, held out by validation).
  std::vector<int64_t> ms = opts.quick ? std::vector<int64_t>{1, 64, 1024} : servesim::gemm_bench_tokens(max_m);
  std::map<std::tuple<int64_t, int64_t, int64_t>, TimingStats> measured;
  DeviceBuffer<__nv_bfloat16> x, w, y;
  for (const LinearShape& shape : gemm_bench_shapes(opts.quick)) {  // every model x TP x layer (linear_shapes.h)
    const int tp = shape.tp;
    bool allocated = false;
    for (int64_t m : ms) {
      const auto key = std::make_tuple(m, shape.n, shape.k);
      if (!measured.count(key)) {
        if (!bench_admit(opts, "gemm " + shape.model + " tp" + std::to_string(tp) + " " + shape.layer +
                                   " m=" + std::to_string(m) + " n=" + std::to_string(shape.n) +
                                   " k=" + std::to_string(shape.k)))
          continue;
        if (!allocated) {
          x.resize(size_t(max_m * shape.k));
          w.resize(size_t(shape.n * shape.k));
          y.resize(size_t(max_m * shape.n));
          fill_bf16_uniform_device(x.get(), x.size(), opts.seed, -1, 1);
          fill_bf16_uniform_device(w.get(), w.size(), opts.seed + 1, -0.05f, 0.05f);
          allocated = true;
        }
        measured[key] = timer.measure(
            opts, [&](cudaStream_t s) { gemm.run(x.get(), w.get(), y.get(), m, shape.n, shape.k, s); });
      }
      out.write_row(gemm_row(shape, m, servesim::is_gemm_probe_token(m) ? ";probe=1" : "", measured[key]));
    }
    const auto last_key = std::make_tuple(ms.back(), shape.n, shape.k);
    if (!measured.count(last_key)) continue;
    const TimingStats& last = measured[last_key];
    std::printf("  gemm %s tp%d %-8s n=%-6ld k=%-6ld m=%ld: %.1f us (%.0f TFLOP/s)\n", shape.model.c_str(), tp,
                shape.layer.c_str(), long(shape.n), long(shape.k), long(ms.back()), last.median_us,
                2.0 * ms.back() * shape.n * shape.k / (last.median_us * 1e6));
    std::fflush(stdout);
  }
}

// M of the gemm_dense family for a layer (see the header), ascending, none of them in the
// gemm family's grid or probes.
std::vector<int64_t> gemm_dense_tokens(const std::string& layer) {
  const auto grid = servesim::gemm_bench_tokens(16384);
  const int64_t top = layer == "lm_head" ? 512 : 4096;
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= top; m += m < 64 ? 1 : m < 512 ? 4 : m < 2048 ? 8 : 32)
    if (std::find(grid.begin(), grid.end(), m) == grid.end()) ms.push_back(m);
  return ms;
}

void bench_gemm_dense(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  LtGemm gemm;
  DeviceBuffer<__nv_bfloat16> x, w, y;
  const int64_t max_m = 4096;
  for (const LinearShape& shape : linear_layer_shapes(llama3_8b(), 1)) {
    std::vector<int64_t> ms = gemm_dense_tokens(shape.layer);
    if (opts.quick) ms.resize(std::min<size_t>(ms.size(), 3));
    x.resize(size_t(max_m * shape.k));
    w.resize(size_t(shape.n * shape.k));
    y.resize(size_t(max_m * shape.n));
    fill_bf16_uniform_device(x.get(), x.size(), opts.seed, -1, 1);
    fill_bf16_uniform_device(w.get(), w.size(), opts.seed + 1, -0.05f, 0.05f);
    int written = 0;
    for (int64_t m : ms) {
      if (!bench_admit(opts, "gemm_dense " + shape.layer + " m=" + std::to_string(m))) continue;
      const TimingStats stats = timer.measure(
          opts, [&](cudaStream_t s) { gemm.run(x.get(), w.get(), y.get(), m, shape.n, shape.k, s); });
      out.write_row(gemm_row(shape, m, ";dense=1", stats));
      ++written;
    }
    std::printf("  gemm_dense %-8s n=%-6ld k=%-6ld: %d of %zu M\n", shape.layer.c_str(), long(shape.n), long(shape.k),
                written, ms.size());
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace servesim::kernels

SERVESIM_REGISTER_KERNEL_FAMILY(gemm_dense, {.name = "gemm_dense",
                                             .description = "cuBLASLt bf16 linear layers of Llama-3-8B TP 1 at every M the grid skips (1-4,096)",
                                             .check = nullptr,  // gemm's kernel: checked by family gemm
                                             .bench = servesim::kernels::bench_gemm_dense,
                                             .order = 21});

SERVESIM_REGISTER_KERNEL_FAMILY(gemm, {.name = "gemm",
                                       .description = "cuBLASLt bf16 linear layers (Llama-3-8B/70B, Llama-2-7B; TP 1/2/4/8)",
                                       .check = servesim::kernels::check_gemm,
                                       .bench = servesim::kernels::bench_gemm,
                                       .order = 20});
