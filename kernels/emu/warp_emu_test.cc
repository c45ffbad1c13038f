// Tests of the CPU warp emulator's own rules: the launch checks the CUDA runtime makes,
// barriers that exited threads no longer hold, collectives and atomics, and the Hopper
// primitives (mbarrier phases, TMA landing / zero fill / swizzle, wgmma descriptors).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "kernels/common/cuda_util.cuh"
#include "kernels/common/hopper.cuh"
#include "kernels/common/mma.cuh"
#include "kernels/common/host_util.h"
#include "kernels/prefill/prefill_hopper_plan.h"

namespace {

__global__ void write_lane_kernel(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }

__global__ void count_kernel(int* total) { atomicAdd(total, 1); }

// Half of the block returns early; the other half still meets at __syncthreads.
__global__ void early_exit_kernel(int* out) {
  if (threadIdx.x >= 64) return;
  __shared__ int seen[64];
  seen[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = seen[63 - threadIdx.x];
}

// Lanes 16..31 return, then lanes 0..15 shuffle with the full mask: undefined on a GPU.
__global__ void bad_shuffle_kernel(float* out) {
  if ((threadIdx.x & 31) >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
}

__global__ void ballot_kernel(unsigned* out) {
  const unsigned b = __ballot_sync(0xffffffffu, (threadIdx.x & 3) == 0);
  const int down = __shfl_down_sync(0xffffffffu, static_cast<int>(threadIdx.x), 4);
  if (threadIdx.x == 0) out[0] = b;
  out[1 + threadIdx.x] = static_cast<unsigned>(down);
}

// One warpgroup. Thread 0 copies a 64 x 64 box of X (only `rows` rows exist) and a
// 128 x 64 box of W by TMA; record[0] is what it reads before waiting, record[1] after.
// Then S = X[:, 0:32] W[:, 0:32]^T by two wgmma k-steps on the plan's descriptors.
struct HopperProbe {
  const servesim_emu::EmuTensorMap* x;
  const servesim_emu::EmuTensorMap* w;
  uint16_t record[2];
  float* s;  // [64][128]
};

__global__ void hopper_probe_kernel(HopperProbe* probe) {
  using namespace servesim::kernels;
  SERVESIM_DYNAMIC_SHARED(unsigned char, smem);
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem + 3 * 16384);
  const int tid = threadIdx.x;
  if (tid == 0) {
    hopper::mbar_init(bar, 1);
    smem[0] = 0xAB;  // sentinel, to be overwritten when the copy lands
    smem[1] = 0xCD;
  }
  __syncthreads();
  if (tid == 0) {
    hopper::mbar_arrive_expect_tx(bar, 64 * 128 + 128 * 128);
    hopper::tma_load_3d(smem, probe->x, bar, 0, 0, 0);
    hopper::tma_load_3d(smem + 16384, probe->w, bar, 0, 0, 0);
    std::memcpy(&probe->record[0], smem, 2);  // nobody waited yet: still the sentinel
  }
  __syncthreads();  // no thread waits (and so lands the copies) before thread 0 has read
  hopper::mbar_wait(bar, 0);
  if (tid == 0) std::memcpy(&probe->record[1], smem, 2);
  float d[16][4];
  for (int kk = 0; kk < 2; ++kk)
    hopper::wgmma_m64n128k16_ss(d, hopper_wgmma_desc(hopper_kmajor_addr(0, kk), kHopperKmajorLbo, kHopperSbo),
                                hopper_wgmma_desc(hopper_kmajor_addr(16384, kk), kHopperKmajorLbo, kHopperSbo), kk > 0);
  const int w = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  for (int j = 0; j < 16; ++j)
    for (int e = 0; e < 4; ++e) probe->s[(16 * w + g + 8 * (e / 2)) * 128 + 8 * j + 2 * t + e % 2] = d[j][e];
}

// Warp 0 waits at a 64-thread named barrier only it reaches, the others at __syncthreads,
// which needs warp 0: a hang on a GPU.
__global__ void crossed_barriers_kernel(int* out) {
  if (threadIdx.x < 32)
    servesim::kernels::hopper::named_barrier_sync(1, 64);
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}

// An mbarrier expecting 64 transaction bytes that never arrive.
__global__ void missing_tx_kernel(int*) {
  SERVESIM_DYNAMIC_SHARED(unsigned char, smem);
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem);
  if (threadIdx.x == 0) {
    servesim::kernels::hopper::mbar_init(bar, 1);
    servesim::kernels::hopper::mbar_arrive_expect_tx(bar, 64);
  }
  __syncthreads();
  servesim::kernels::hopper::mbar_wait(bar, 0);
}

__global__ void float_atomic_kernel(float* total) { atomicAdd(total, 1.0f / float(1 + blockIdx.x * blockDim.x + threadIdx.x)); }

__global__ void throwing_kernel(int*) {
  __syncthreads();
  if (threadIdx.x == 37) throw std::runtime_error("thread 37 gave up");
  __syncthreads();
}

}  // namespace

TEST_CASE("emulated deadlocks are reported at once, not waited for: crossed barriers and missing TMA bytes") {
  std::vector<int> out(128, 0);
  try {
    SERVESIM_LAUNCH(crossed_barriers_kernel, 1, 128, 0, nullptr, out.data());
    FAIL("no error");
  } catch (const std::logic_error& e) {
    CHECK(std::string(e.what()).find("never completed") != std::string::npos);
  }
  CHECK(out[1] == 1);  // the other threads ran to the end
  CHECK_THROWS_WITH_AS(servesim_emu::launch(1, 64, 64, [&] { missing_tx_kernel(out.data()); }),
                       doctest::Contains("never completed"), std::logic_error);
}

TEST_CASE("emulated kernels are deterministic: float atomics sum in the same order every launch, and a thrown exception reaches the launcher") {
  float first = 0, second = 0;
  SERVESIM_LAUNCH(float_atomic_kernel, 4, 256, 0, nullptr, &first);
  SERVESIM_LAUNCH(float_atomic_kernel, 4, 256, 0, nullptr, &second);
  CHECK(std::memcmp(&first, &second, sizeof(float)) == 0);
  float sequential = 0;  // fibers run in thread order: the sum is the sequential one
  for (int i = 0; i < 4 * 256; ++i) sequential += 1.0f / float(1 + i);
  CHECK(std::memcmp(&first, &sequential, sizeof(float)) == 0);
  CHECK_THROWS_WITH_AS(SERVESIM_LAUNCH(throwing_kernel, 1, 64, 0, nullptr, nullptr), "thread 37 gave up", std::runtime_error);
}

TEST_CASE("emulated Hopper primitives: TMA lands at the wait, zero-fills past the tensor and swizzles, and wgmma reads it back") {
  using namespace servesim::kernels;
  const int rows = 50;  // X has 50 rows: the box's rows 50..63 are zero-filled
  const std::vector<float> xf = random_uniform(size_t(rows) * 64, 5), wf = random_uniform(128 * 64, 6);
  const std::vector<uint16_t> x = to_bf16_bits(xf), w = to_bf16_bits(wf);
  auto map = [](const void* base, uint64_t r) {
    servesim_emu::EmuTensorMap m;
    m.base = base;
    m.rank = 3;
    m.dims[0] = 64, m.dims[1] = 1, m.dims[2] = r;
    m.strides[1] = 128, m.strides[2] = 128;
    m.box[0] = 64, m.box[1] = 1, m.box[2] = uint32_t(r == 128 ? 128 : 64);
    m.swizzle128 = true;
    return m;
  };
  const auto mx = map(x.data(), rows), mw = map(w.data(), 128);
  std::vector<float> s(64 * 128, NAN);
  HopperProbe probe{&mx, &mw, {0, 0}, s.data()};
  servesim_emu::launch(1, 128, 3 * 16384 + 64, [&] { hopper_probe_kernel(&probe); });
  CHECK(probe.record[0] == 0xCDAB);  // read before the wait: the copy had not landed
  CHECK(probe.record[1] == x[0]);    // after the wait: X[0][0] (chunk 0 of row 0 is not moved)
  int wrong = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 128; ++c) {
      double ref = 0;
      for (int k = 0; k < 32; ++k)
        ref += (r < rows ? double(bf16_bits_to_float(x[r * 64 + k])) : 0.0) * bf16_bits_to_float(w[c * 64 + k]);
      wrong += std::abs(s[r * 128 + c] - ref) > 1e-4;
    }
  CHECK(wrong == 0);
}

TEST_CASE("emulated launches fail as on a GPU: oversized blocks, and dynamic shared memory above 48 KiB without opt-in") {
  std::vector<int> out(2048, -1);
  SERVESIM_LAUNCH(write_lane_kernel, 2, 64, 0, nullptr, out.data());
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(out[64 + 5] == 5);
  SERVESIM_LAUNCH(write_lane_kernel, 1, 2048, 0, nullptr, out.data());
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaSuccess);  // reading the error clears it
  SERVESIM_LAUNCH(write_lane_kernel, 1, 32, 64 * 1024, nullptr, out.data());
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaFuncSetAttribute(write_lane_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) == cudaSuccess);
  SERVESIM_LAUNCH(write_lane_kernel, 1, 32, 64 * 1024, nullptr, out.data());
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaFuncSetAttribute(write_lane_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024) ==
        cudaErrorInvalidValue);  // above the 227 KiB of sm_90
  SERVESIM_LAUNCH(write_lane_kernel, dim3(1, 70000), 32, 0, nullptr, out.data());  // grid.y <= 65535
  CHECK_THROWS_AS(SERVESIM_CUDA_CHECK_LAUNCH(), std::runtime_error);
}

TEST_CASE("emulated threads that return no longer hold __syncthreads, atomics are atomic") {
  std::vector<int> out(64, -1);
  SERVESIM_LAUNCH(early_exit_kernel, 1, 128, 0, nullptr, out.data());
  CHECK(out[0] == 63);
  CHECK(out[63] == 0);
  int total = 0;
  SERVESIM_LAUNCH(count_kernel, 3, 256, 0, nullptr, &total);
  CHECK(total == 768);
}

TEST_CASE("emulated ballots and down-shuffles follow CUDA, a full-mask shuffle after lanes returned is an error") {
  std::vector<unsigned> out(33, 0);
  SERVESIM_LAUNCH(ballot_kernel, 1, 32, 0, nullptr, out.data());
  CHECK(out[0] == 0x11111111u);
  CHECK(out[1 + 3] == 7);    // lane 3 reads lane 7
  CHECK(out[1 + 30] == 30);  // source lane 34 does not exist: own value
  std::vector<float> f(32, 0);
  CHECK_THROWS_AS(SERVESIM_LAUNCH(bad_shuffle_kernel, 1, 32, 0, nullptr, f.data()), std::logic_error);
}
