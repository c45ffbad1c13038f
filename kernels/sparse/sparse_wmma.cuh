// Warp-level bf16 tensor-core tiles (nvcuda::wmma, m16n16k16, fp32 accumulation) used by
// the MInference estimate/attention and the AnDPro scoring kernels. Each call is made by
// one full warp. Pointers must be 32-byte aligned and leading dimensions multiples of 8
// (bf16) or 4 (float) elements, as WMMA requires.
#pragma once

#include <cuda_bf16.h>
#include <mma.h>

namespace servesim::kernels::sparse {

inline constexpr int kWmmaDim = 128;  // head_dim the tiles are written for

using WmmaA = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __nv_bfloat16, nvcuda::wmma::row_major>;
using WmmaBCol = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, __nv_bfloat16, nvcuda::wmma::col_major>;
using WmmaBRow = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, __nv_bfloat16, nvcuda::wmma::row_major>;
using WmmaAcc = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>;

// The 8 k-steps of a 16 x 128 row-major A operand (e.g. 16 query rows).
__device__ __forceinline__ void wmma_load_rows16(WmmaA (&a)[kWmmaDim / 16], const __nv_bfloat16* p, int ld) {
#pragma unroll
  for (int k = 0; k < kWmmaDim / 16; ++k) nvcuda::wmma::load_matrix_sync(a[k], p + k * 16, ld);
}

// c[16][64] = a[16][128] * b[64][128]^T  (b: 64 key rows, row-major with leading dim ldb).
__device__ __forceinline__ void wmma_abt_16x64(const WmmaA (&a)[kWmmaDim / 16], const __nv_bfloat16* b, int ldb,
                                               float* c, int ldc) {
  WmmaAcc acc[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) nvcuda::wmma::fill_fragment(acc[j], 0.0f);
#pragma unroll
  for (int k = 0; k < kWmmaDim / 16; ++k) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      WmmaBCol fb;
      nvcuda::wmma::load_matrix_sync(fb, b + j * 16 * ldb + k * 16, ldb);
      nvcuda::wmma::mma_sync(acc[j], a[k], fb, acc[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) nvcuda::wmma::store_matrix_sync(c + j * 16, acc[j], ldc, nvcuda::wmma::mem_row_major);
}

// c[16][64] = p[16][64] * v[64][dim0 .. dim0 + 64)  (v: 64 key rows, row-major, ldv).
__device__ __forceinline__ void wmma_ab_16x64(const __nv_bfloat16* p, int ldp, const __nv_bfloat16* v, int ldv,
                                              int dim0, float* c, int ldc) {
  WmmaAcc acc[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) nvcuda::wmma::fill_fragment(acc[j], 0.0f);
#pragma unroll
  for (int k = 0; k < 64; k += 16) {
    WmmaA fa;
    nvcuda::wmma::load_matrix_sync(fa, p + k, ldp);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      WmmaBRow fb;
      nvcuda::wmma::load_matrix_sync(fb, v + k * ldv + dim0 + j * 16, ldv);
      nvcuda::wmma::mma_sync(acc[j], fa, fb, acc[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) nvcuda::wmma::store_matrix_sync(c + j * 16, acc[j], ldc, nvcuda::wmma::mem_row_major);
}

// Cooperative copy of 64 rows of 128 bf16 into a [64][dst_ld] shared tile: row r comes
// from row_src(r) (16-byte aligned), or is zero-filled when row_src(r) returns nullptr.
// All threads of the block call it.
template <typename RowSrc>
__device__ __forceinline__ void load_tile64(__nv_bfloat16* dst, int dst_ld, RowSrc row_src) {
  for (int idx = threadIdx.x; idx < 64 * (kWmmaDim / 8); idx += blockDim.x) {
    const int r = idx / (kWmmaDim / 8), c = (idx % (kWmmaDim / 8)) * 8;
    const __nv_bfloat16* src = row_src(r);
    uint4 val = make_uint4(0, 0, 0, 0);
    if (src) val = *reinterpret_cast<const uint4*>(src + c);
    *reinterpret_cast<uint4*>(dst + r * dst_ld + c) = val;
  }
}

}  // namespace servesim::kernels::sparse
