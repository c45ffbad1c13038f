// Tests of the CPU warp emulator's own rules: the launch checks the CUDA runtime makes,
// barriers that exited threads no longer hold, collectives and atomics.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "kernels/common/cuda_util.cuh"

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

}  // namespace

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

TEST_CASE("emulated threads that return no longer hold __syncthreads; atomics are atomic") {
  std::vector<int> out(64, -1);
  SERVESIM_LAUNCH(early_exit_kernel, 1, 128, 0, nullptr, out.data());
  CHECK(out[0] == 63);
  CHECK(out[63] == 0);
  int total = 0;
  SERVESIM_LAUNCH(count_kernel, 3, 256, 0, nullptr, &total);
  CHECK(total == 768);
}

TEST_CASE("emulated ballots and down-shuffles follow CUDA; a full-mask shuffle after lanes returned is an error") {
  std::vector<unsigned> out(33, 0);
  SERVESIM_LAUNCH(ballot_kernel, 1, 32, 0, nullptr, out.data());
  CHECK(out[0] == 0x11111111u);
  CHECK(out[1 + 3] == 7);    // lane 3 reads lane 7
  CHECK(out[1 + 30] == 30);  // source lane 34 does not exist: own value
  std::vector<float> f(32, 0);
  CHECK_THROWS_AS(SERVESIM_LAUNCH(bad_shuffle_kernel, 1, 32, 0, nullptr, f.data()), std::logic_error);
}
