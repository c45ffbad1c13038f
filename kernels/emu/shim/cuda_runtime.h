// Stand-in for CUDA's <cuda_runtime.h> in the CPU warp emulator build (see warp_emu.h):
// "device" memory is host memory, copies are memcpy, streams are ignored (everything runs
// in order, synchronously), and kernel launches go through SERVESIM_LAUNCH
// (kernels/common/cuda_util.cuh) to servesim_emu::launch_kernel, which checks the launch
// configuration as the runtime does and leaves failures for cudaGetLastError().
// Only what the kernels' host code uses is provided.
#pragma once

#ifndef SERVESIM_WARP_EMULATION
#error "kernels/emu/shim is only for the CPU warp emulator build"
#endif

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "kernels/emu/warp_emu.h"

using dim3 = ::servesim_emu::Dim3;
struct CUstream_st;
using cudaStream_t = CUstream_st*;

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize };

inline const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
  }
  return "cudaErrorUnknown";
}
inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaErrorInvalidConfiguration ? "invalid configuration argument (emulated launch check)" : cudaGetErrorName(e);
}
inline cudaError_t cudaGetLastError() { return static_cast<cudaError_t>(::servesim_emu::take_last_error()); }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  if (bytes) std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t = nullptr) {
  return cudaMemcpy(dst, src, bytes, kind);
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  if (bytes) std::memset(p, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t = nullptr) {
  return cudaMemset(p, value, bytes);
}
template <typename Kernel>
inline cudaError_t cudaFuncSetAttribute(Kernel* kernel, cudaFuncAttribute, int value) {
  return static_cast<cudaError_t>(::servesim_emu::set_max_dynamic_smem(reinterpret_cast<const void*>(kernel), value));
}
