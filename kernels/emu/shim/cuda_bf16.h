// Stand-in for CUDA's <cuda_bf16.h> when kernel sources are compiled by the host compiler
// for the CPU warp emulator (SERVESIM_WARP_EMULATION; see warp_emu.h). Provides the bf16
// types and conversions the kernels use, and maps the CUDA C++ keywords and built-ins
// (threadIdx, __syncthreads, __shfl_xor_sync, ...) onto the emulator.
// Only the emulator test target puts this directory on its include path.
#pragma once

#ifndef SERVESIM_WARP_EMULATION
#error "kernels/emu/shim is only for the CPU warp emulator build"
#endif

#include <cmath>
#include <cstdint>

#include "kernels/common/host_util.h"
#include "kernels/emu/warp_emu.h"

struct __nv_bfloat16 {
  uint16_t bits;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
inline __nv_bfloat16 __float2bfloat16(float f) { return {servesim::kernels::float_to_bf16_bits(f)}; }
inline float __bfloat162float(__nv_bfloat16 h) { return servesim::kernels::bf16_bits_to_float(h.bits); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__float2bfloat16(a), __float2bfloat16(b)}; }

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

#define threadIdx (::servesim_emu::current().thread_idx)
#define blockIdx (::servesim_emu::current().block_idx)
#define blockDim (::servesim_emu::current().block_dim)
#define gridDim (::servesim_emu::current().grid_dim)

inline void __syncthreads() { ::servesim_emu::sync_block(); }
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) { return ::servesim_emu::shfl_xor(v, lane_mask); }
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
inline float __expf(float x) { return std::exp(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
