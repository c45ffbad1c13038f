#include "kernels/common/cuda_util.cuh"

#include <cmath>
#include <string>

#include "kernels/common/host_util.h"

namespace servesim::kernels {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                           cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

DeviceBuffer<__nv_bfloat16> upload_bf16(const std::vector<uint16_t>& bits) {
  DeviceBuffer<__nv_bfloat16> buf(bits.size());
  if (!bits.empty())
    SERVESIM_CUDA_CHECK(cudaMemcpy(buf.get(), bits.data(), bits.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  return buf;
}

std::vector<float> download_bf16_as_float(const __nv_bfloat16* ptr, size_t count) {
  std::vector<uint16_t> bits(count);
  if (count > 0) SERVESIM_CUDA_CHECK(cudaMemcpy(bits.data(), ptr, count * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  return from_bf16_bits(bits);
}

namespace {

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void fill_uniform_kernel(__nv_bfloat16* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t h = mix64(seed + 0x9E3779B97F4A7C15ull * (i + 1));
    const float unit = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    p[i] = __float2bfloat16(lo + (hi - lo) * unit);
  }
}

template <typename T>
__global__ void fill_value_kernel(T* p, size_t n, T value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    p[i] = value;
}

int fill_blocks(size_t n) { return static_cast<int>(std::min<size_t>((n + 255) / 256, 65536)); }

}  // namespace

void fill_bf16_uniform_device(__nv_bfloat16* ptr, size_t count, uint64_t seed, float lo, float hi,
                              cudaStream_t stream) {
  if (count == 0) return;
  SERVESIM_LAUNCH(fill_uniform_kernel, fill_blocks(count), 256, 0, stream, ptr, count, seed, lo, hi);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void fill_nan_device(__nv_bfloat16* ptr, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  SERVESIM_LAUNCH(fill_value_kernel<__nv_bfloat16>, fill_blocks(count), 256, 0, stream, ptr, count, __float2bfloat16(NAN));
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void fill_nan_device(float* ptr, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  SERVESIM_LAUNCH(fill_value_kernel<float>, fill_blocks(count), 256, 0, stream, ptr, count, float(NAN));
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels
