// Stand-in for CUDA's <cuda_bf16.h> when kernel sources are compiled by the host compiler
// for the CPU warp emulator (SERVESIM_WARP_EMULATION; see warp_emu.h). Provides the bf16
// and vector types and conversions the kernels use, and maps the CUDA C++ keywords and
// built-ins (threadIdx, __shared__, __syncthreads, __syncwarp, shuffles, ballots,
// atomics, ...) onto the emulator. The host runtime API is in cuda_runtime.h beside it.
// Only the emulator test target puts this directory on its include path.
//
// __shared__ becomes `static`: one instance per kernel function, shared by all emulated
// threads - a block's shared memory, since blocks run one after another.
#pragma once

#ifndef SERVESIM_WARP_EMULATION
#error "kernels/emu/shim is only for the CPU warp emulator build"
#endif

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

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

struct float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return {__bfloat162float(h.x), __bfloat162float(h.y)}; }

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static

#define threadIdx (::servesim_emu::current().thread_idx)
#define blockIdx (::servesim_emu::current().block_idx)
#define blockDim (::servesim_emu::current().block_dim)
#define gridDim (::servesim_emu::current().grid_dim)

inline void __syncthreads() { ::servesim_emu::sync_block(); }
inline void __syncwarp(unsigned = 0xffffffffu) { ::servesim_emu::sync_warp(); }
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) { return ::servesim_emu::shfl_xor(v, lane_mask); }
template <typename T>
inline T emu_shfl_cast(uint32_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
template <typename T>
inline uint32_t emu_bits(T v) {
  static_assert(sizeof(T) == 4, "the emulator shuffles 32-bit values");
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}
inline int __shfl_xor_sync(unsigned, int v, int lane_mask) {
  return emu_shfl_cast<int>(::servesim_emu::shfl_xor_bits(emu_bits(v), lane_mask));
}
inline unsigned __shfl_xor_sync(unsigned, unsigned v, int lane_mask) {
  return ::servesim_emu::shfl_xor_bits(v, lane_mask);
}
inline unsigned long long __shfl_xor_sync(unsigned, unsigned long long v, int lane_mask) {
  const uint32_t lo = ::servesim_emu::shfl_xor_bits(uint32_t(v), lane_mask);
  const uint32_t hi = ::servesim_emu::shfl_xor_bits(uint32_t(v >> 32), lane_mask);
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}
inline int __shfl_down_sync(unsigned, int v, unsigned delta) {
  return emu_shfl_cast<int>(::servesim_emu::shfl_down_bits(emu_bits(v), delta));
}
inline float __shfl_down_sync(unsigned, float v, unsigned delta) {
  return emu_shfl_cast<float>(::servesim_emu::shfl_down_bits(emu_bits(v), delta));
}
inline unsigned __ballot_sync(unsigned, bool predicate) { return ::servesim_emu::ballot(predicate); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
// Emulated threads are fibers on one OS thread (warp_emu.h); atomic_ref keeps these correct
// should that ever change.
inline int atomicAdd(int* p, int v) { return std::atomic_ref<int>(*p).fetch_add(v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_add(v); }
inline float atomicAdd(float* p, float v) { return std::atomic_ref<float>(*p).fetch_add(v); }
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
inline float __expf(float x) { return std::exp(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int __shfl_sync(unsigned, int v, int src_lane) {
  return emu_shfl_cast<int>(::servesim_emu::shfl_idx_bits(emu_bits(v), src_lane));
}
