// Small CUDA host helpers shared by every kernel family (dense and sparse).
//
//  * SERVESIM_CUDA_CHECK(expr): throws std::runtime_error naming file:line and the CUDA
//    error. Errors at this edge become exceptions; only main turns them into exit codes.
//  * DeviceBuffer<T>: owning RAII device allocation (move-only). Not zero-initialised.
//  * fill_bf16_uniform_device / fill_nan: device-side fills for bench inputs too large to
//    generate on the host, and for poisoning outputs before a check.
//  * SERVESIM_LAUNCH(kernel, grid, block, smem, stream, args...): `kernel<<<grid, block,
//    smem, stream>>>(args...)`. Launchers write it this way so that the same source also
//    compiles for the CPU warp emulator (kernels/emu/), where it becomes an emulated
//    launch with the CUDA runtime's configuration checks.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace servesim::kernels {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

#define SERVESIM_CUDA_CHECK(expr)                                                    \
  do {                                                                               \
    cudaError_t servesim_err_ = (expr);                                              \
    if (servesim_err_ != cudaSuccess)                                                \
      ::servesim::kernels::throw_cuda_error(servesim_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// Checks the last launch (launch-configuration errors) without synchronising.
#define SERVESIM_CUDA_CHECK_LAUNCH() SERVESIM_CUDA_CHECK(cudaGetLastError())

#if defined(SERVESIM_WARP_EMULATION)
#define SERVESIM_LAUNCH(kernel, grid, block, smem, stream, ...)                                               \
  ::servesim_emu::launch_kernel(reinterpret_cast<const void*>(&kernel), dim3(grid), dim3(block), size_t(smem), \
                                [&] { kernel(__VA_ARGS__); })
#else
#define SERVESIM_LAUNCH(kernel, grid, block, smem, stream, ...) kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { resize(count); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  // Reallocates (contents lost) unless the current allocation already has `count` elements.
  void resize(size_t count) {
    if (count == count_) return;
    reset();
    if (count > 0) SERVESIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
    count_ = count;
  }
  void reset() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  void upload(const std::vector<T>& host) {
    resize(host.size());
    if (!host.empty()) SERVESIM_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) SERVESIM_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// Uploads a host vector of bf16 bit patterns (host_util.h) as device __nv_bfloat16.
DeviceBuffer<__nv_bfloat16> upload_bf16(const std::vector<uint16_t>& bits);
// Downloads device bf16 as float values.
std::vector<float> download_bf16_as_float(const __nv_bfloat16* ptr, size_t count);

// Fills `count` bf16 values with a deterministic hash of (seed, index) mapped to
// [lo, hi). Runs on the device: used for multi-GiB bench inputs.
void fill_bf16_uniform_device(__nv_bfloat16* ptr, size_t count, uint64_t seed, float lo, float hi,
                              cudaStream_t stream = nullptr);
// Poisons outputs before a check: every element becomes a quiet NaN.
void fill_nan_device(__nv_bfloat16* ptr, size_t count, cudaStream_t stream = nullptr);
void fill_nan_device(float* ptr, size_t count, cudaStream_t stream = nullptr);

}  // namespace servesim::kernels
