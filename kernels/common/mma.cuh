// PTX wrappers for the sm_80+ tensor-core path used by the attention kernels:
// cp.async (global -> shared, 16 B, zero-fill), ldmatrix (x4, optionally transposed),
// mma.sync m16n8k16 bf16 x bf16 -> fp32, and ex2.approx.
//
// Fragment layouts of mma.m16n8k16 (PTX ISA "Matrix Fragments for mma.m16n8k16"), with
// g = lane / 4 and t = lane % 4; each 32-bit register holds two bf16, the lower column
// (or k) index in the low half:
//   A (16x16, row major)  a0: (row g,   k 2t..2t+1)   a1: (row g+8, k 2t..2t+1)
//                         a2: (row g,   k 2t+8..+9)   a3: (row g+8, k 2t+8..+9)
//   B (16x8, "col")       b0: (k 2t..2t+1, col g)     b1: (k 2t+8..+9, col g)
//   C/D (16x8 fp32)       c0,c1: (row g, col 2t..2t+1) c2,c3: (row g+8, col 2t..2t+1)
// ldmatrix .x4: lanes 8i..8i+7 give the 8 row addresses (16 B each) of matrix i; lane L
// receives, in register i, row L/4, columns 2(L%4)..+1 of matrix i (with .trans: rows
// 2(L%4)..+1 of column L/4, i.e. the transposed matrix).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#if defined(SERVESIM_WARP_EMULATION)
// CPU warp emulator (kernels/emu/): the same functions, implemented from the PTX spec.
#include "kernels/emu/ptx_emu.h"
#else

// Dynamic shared memory of a kernel, 16-byte aligned (cp.async / ldmatrix rows).
#define SERVESIM_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]

namespace servesim::kernels::ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes global -> shared asynchronously; when !valid the 16 bytes are zeroed
// and nothing is read (src must still be a valid address; callers pass a base pointer).
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem_dst)), "l"(gmem_src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}

// d += a * b  (m16n8k16, bf16 inputs, fp32 accumulate)
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats -> one register of two bf16 (lo in the low half), round to nearest.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// 2^x with the hardware approximation (rel. error ~2^-22); ex2(-inf) = +0.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace servesim::kernels::ptx

#endif  // SERVESIM_WARP_EMULATION
