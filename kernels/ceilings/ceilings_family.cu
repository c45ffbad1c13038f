// Ceilings: the measured physical limits every kernel is judged against.
//  * device-to-device copy bandwidth: cudaMemcpyAsync (copy engine / driver kernel) and a
//    16-byte-vector copy kernel; bytes = read + written.
//  * read bandwidth: a streaming read-only reduction (decode is read-dominated).
//  * large bf16 GEMM rate: cuBLASLt at m = n = k = 8192 (and 16384 in the full sweep).
//  * launch cost: an empty kernel timed alone between two events (variant launch_alone:
//    what every isolated row of the profile carries besides its kernel's own duration),
//    and kLaunchStream empty kernels back to back in one sample (variant launch_stream,
//    params launches=N; median_us is the whole sample's: divide by N for the per-launch
//    cost of back-to-back launches, which the host's launch rate may bound). Then the same
//    two behind a 3 ms spin kernel inside the sample (launch_queued_spin: the spin alone;
//    launch_queued: the spin and N empty kernels), so that the host has enqueued all N
//    before the GPU reaches them: (launch_queued - launch_queued_spin) / N is the GPU's own
//    per-launch cost in a queued stream, as in an engine's forward pass. launch_alone minus
//    that is what an isolated row overstates per launch (docs/costmodel.md, "Long context
//    on an H200").
// CPU "reference" here is the identity (copy) and a host checksum (read).
#include <cstdio>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/bench/device_info.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/bench/spin_kernel.cuh"
#include "kernels/common/cuda_util.cuh"
#include "kernels/common/host_util.h"
#include "kernels/gemm/gemm_cublaslt.cuh"

namespace servesim::kernels {
namespace {

constexpr int kUnroll = 4;

// Each thread moves kUnroll 16-byte vectors per iteration, all loads issued before the
// stores so several requests are in flight per thread.
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

// Sum of all 32-bit words (mod 2^64), one atomic per block.
__global__ void read_kernel(const uint4* __restrict__ src, size_t n, unsigned long long* sum) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  unsigned long long acc = 0;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += 0ull + v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n; i += stride) acc += 0ull + src[i].x + src[i].y + src[i].z + src[i].w;
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ unsigned long long part[32];
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int w = 0; w < int(blockDim.x / 32); ++w) total += part[w];
    atomicAdd(sum, total);
  }
}

__global__ void empty_kernel() {}

constexpr int kLaunchStream = 256;

int stream_blocks() { return current_device_sm_count() * 4; }

void launch_copy(const void* src, void* dst, size_t bytes, cudaStream_t s) {
  copy_kernel<<<stream_blocks(), 512, 0, s>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes / 16);
  SERVESIM_CUDA_CHECK_LAUNCH();
}
void launch_read(const void* src, size_t bytes, unsigned long long* sum, cudaStream_t s) {
  read_kernel<<<stream_blocks(), 512, 0, s>>>(static_cast<const uint4*>(src), bytes / 16, sum);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

int check_ceilings(const CheckOptions& opts) {
  CheckReport report("ceilings", opts.verbose);
  const size_t words = opts.quick ? (size_t{1} << 20) : (size_t{16} << 20);  // 32-bit words
  std::vector<uint32_t> host(words);
  SplitMix64 g(derive_seed(opts.seed, 0xCE11));
  for (auto& w : host) w = static_cast<uint32_t>(g.next());
  DeviceBuffer<uint32_t> src, dst(words);
  src.upload(host);
  SERVESIM_CUDA_CHECK(cudaMemset(dst.get(), 0xFF, dst.bytes()));
  launch_copy(src.get(), dst.get(), src.bytes(), nullptr);
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
  report.expect_true("copy_kernel " + std::to_string(src.bytes() >> 20) + " MiB", dst.download() == host,
                     "bitwise equal to the source");

  DeviceBuffer<unsigned long long> sum(1);
  SERVESIM_CUDA_CHECK(cudaMemset(sum.get(), 0, sizeof(unsigned long long)));
  launch_read(src.get(), src.bytes(), sum.get(), nullptr);
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long expect = 0;
  for (uint32_t w : host) expect += w;
  const unsigned long long got = sum.download()[0];
  report.expect_true("read_kernel checksum", got == expect, got == expect ? "equal to the host sum" : "differs from the host sum");
  return report.failures();
}

void bench_ceilings(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  const size_t bytes = opts.quick ? (size_t{256} << 20) : (size_t{1} << 30);
  DeviceBuffer<uint8_t> src(bytes), dst(bytes);
  SERVESIM_CUDA_CHECK(cudaMemset(src.get(), 0x3C, bytes));
  SERVESIM_CUDA_CHECK(cudaMemset(dst.get(), 0, bytes));
  DeviceBuffer<unsigned long long> sum(1);
  const std::string params = "buffer_bytes=" + std::to_string(bytes);

  auto emit = [&](const char* variant, double moved, const TimingStats& s) {
    ProfileRow row;
    row.kernel = "ceiling";
    row.variant = variant;
    row.params = params;
    row.bytes = moved;
    fill_timing(row, s);
    out.write_row(row);
    std::printf("  ceiling/%-12s %8.1f GB/s\n", variant, moved / (s.median_us * 1e3));
  };
  emit("copy_memcpy", 2.0 * bytes, timer.measure(opts, [&](cudaStream_t s) {
         SERVESIM_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
       }));
  emit("copy_kernel", 2.0 * bytes,
       timer.measure(opts, [&](cudaStream_t s) { launch_copy(src.get(), dst.get(), bytes, s); }));
  emit("read_kernel", 1.0 * bytes,
       timer.measure(opts, [&](cudaStream_t s) { launch_read(src.get(), bytes, sum.get(), s); }));

  struct LaunchRow {
    const char* variant;
    bool spin;
    int launches;
  };
  for (const LaunchRow& r : {LaunchRow{"launch_alone", false, 1}, LaunchRow{"launch_stream", false, kLaunchStream},
                             LaunchRow{"launch_queued_spin", true, 0}, LaunchRow{"launch_queued", true, kLaunchStream}}) {
    const TimingStats s = timer.measure(opts, [&](cudaStream_t st) {
      if (r.spin) spin_kernel<<<1, 1, 0, st>>>(kSpinNs);
      for (int i = 0; i < r.launches; ++i) empty_kernel<<<1, 32, 0, st>>>();
      SERVESIM_CUDA_CHECK_LAUNCH();
    });
    ProfileRow row;
    row.kernel = "ceiling";
    row.variant = r.variant;
    row.params = "launches=" + std::to_string(r.launches) + (r.spin ? ";spin_ns=" + std::to_string(kSpinNs) : "");
    fill_timing(row, s);
    out.write_row(row);
    std::printf("  ceiling/%-18s %10.3f us (%d launches%s)\n", r.variant, s.median_us, r.launches,
                r.spin ? " behind a 3 ms spin" : "");
  }

  LtGemm gemm;
  std::vector<int64_t> sizes = {opts.quick ? int64_t{4096} : int64_t{8192}};
  if (!opts.quick) sizes.push_back(16384);
  for (int64_t n : sizes) {
    if (!bench_admit(opts, "ceilings gemm_bf16 " + std::to_string(n) + "^3")) continue;
    DeviceBuffer<__nv_bfloat16> a(size_t(n * n)), b(size_t(n * n)), c(size_t(n * n));
    fill_bf16_uniform_device(a.get(), a.size(), opts.seed, -1, 1);
    fill_bf16_uniform_device(b.get(), b.size(), opts.seed + 1, -1, 1);
    const TimingStats s = timer.measure(opts, [&](cudaStream_t st) { gemm.run(a.get(), b.get(), c.get(), n, n, n, st); });
    ProfileRow row;
    row.kernel = "ceiling";
    row.variant = "gemm_bf16";
    row.m = row.n = row.k = n;
    row.params = "library=cublaslt";
    row.bytes = 3.0 * n * n * 2;
    row.flops = 2.0 * n * n * n;
    fill_timing(row, s);
    out.write_row(row);
    std::printf("  ceiling/gemm_bf16 %ld^3 %8.1f TFLOP/s\n", long(n), row.flops / (s.median_us * 1e6));
  }
}

}  // namespace
}  // namespace servesim::kernels

SERVESIM_REGISTER_KERNEL_FAMILY(ceilings, {.name = "ceilings",
                                           .description = "copy/read bandwidth and large bf16 GEMM rate (the roofline)",
                                           .check = servesim::kernels::check_ceilings,
                                           .bench = servesim::kernels::bench_ceilings,
                                           .order = 10});
