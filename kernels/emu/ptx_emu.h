// The ptx:: wrappers of kernels/common/mma.cuh implemented on the CPU warp emulator.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/emu/warp_emu.h"

#define SERVESIM_DYNAMIC_SHARED(type, name) type* name = reinterpret_cast<type*>(::servesim_emu::dynamic_smem())

namespace servesim::kernels::ptx {

inline void cp_async_16(void* smem_dst, const void* gmem_src, bool valid) {
  servesim_emu::cp_async_16(smem_dst, gmem_src, valid);
}
inline void cp_async_commit() { servesim_emu::cp_async_commit(); }
template <int N>
inline void cp_async_wait() {
  servesim_emu::cp_async_wait(N);
}
inline void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) { servesim_emu::ldmatrix_x4(r, smem_row, false); }
inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void* smem_row) { servesim_emu::ldmatrix_x4(r, smem_row, true); }
inline void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  servesim_emu::mma_bf16_16816(d, a, b0, b1);
}
inline uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return uint32_t(v.x.bits) | (uint32_t(v.y.bits) << 16);
}
inline float exp2_approx(float x) { return std::exp2(x); }

}  // namespace servesim::kernels::ptx
