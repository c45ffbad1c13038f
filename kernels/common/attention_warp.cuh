// Warp-level FlashAttention step on tensor cores, shared by dense decode and dense
// prefill (and available to the sparse kernels).
//
// A warp owns MT*16 query rows and, per key tile, NK keys staged in shared memory. For
// each tile it computes S = Q K^T with mma.m16n8k16 (Q and K fragments via ldmatrix),
// folds S into the running online softmax (seed 004: m_new = max(m, rowmax S);
// l = l * 2^(m - m_new) + sum 2^(S - m_new); O = O * 2^(m - m_new) + P V), and
// accumulates P V with P taken straight from the S accumulators (the C layout of one
// mma is the A layout of the next, so P never touches shared memory).
//
// Scores are kept in the log2 domain (S * scale * log2 e) so exp is one ex2 instruction.
// Rows whose keys are all masked so far keep m = -inf; the update then uses 0 as the base
// so no (-inf) - (-inf) NaN appears, and such rows contribute nothing.
//
// Shared-memory tiles are row-major with rows of D + 8 bf16 (kSmemRowPad): the 16-byte
// pad staggers rows across banks so ldmatrix and cp.async are conflict-free.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/common/mma.cuh"

namespace servesim::kernels {

inline constexpr int kSmemRowPad = 8;
template <int D>
inline constexpr int kSmemStride = D + kSmemRowPad;  // elements per shared-memory row

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

// Running state of MT m16 row tiles: this thread's part of O (C layout: o[mt][j] covers
// dims 8j..8j+7; elements 0,1 row g, elements 2,3 row g + 8) and, per row half, the
// running max m and the running denominator l (this thread's columns only until
// finalize_row_sums()).
template <int D, int MT>
struct WarpAttnState {
  float o[MT][D / 8][4];
  float m[MT][2];
  float l[MT][2];

  __device__ __forceinline__ void init() {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int j = 0; j < D / 8; ++j) o[mt][j][0] = o[mt][j][1] = o[mt][j][2] = o[mt][j][3] = 0.0f;
      m[mt][0] = m[mt][1] = -INFINITY;
      l[mt][0] = l[mt][1] = 0.0f;
    }
  }

  // Sums l over the four threads of a quad (the threads that share a row).
  __device__ __forceinline__ void finalize_row_sums() {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        l[mt][h] += __shfl_xor_sync(0xffffffffu, l[mt][h], 1);
        l[mt][h] += __shfl_xor_sync(0xffffffffu, l[mt][h], 2);
      }
  }
};

// s = Q K^T for the warp's MT*16 rows (q_smem points at the first) and NK keys (k_smem
// points at the first). Both tiles use kSmemStride<D>.
template <int D, int MT, int NK>
__device__ __forceinline__ void warp_qk(float (&s)[MT][NK / 8][4], const __nv_bfloat16* q_smem,
                                        const __nv_bfloat16* k_smem, int lane) {
  constexpr int S = kSmemStride<D>;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < NK / 8; ++j) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
  // A (Q): matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
  const int a_row = (lane & 7) + ((lane >> 3) & 1) * 8;
  const int a_col = (lane >> 4) * 8;
  // B (K rows = keys): matrices (keys 0-7, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 0-7), (keys 8-15, d 8-15).
  const int b_row = (lane & 7) + (lane >> 4) * 8;
  const int b_col = ((lane >> 3) & 1) * 8;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    uint32_t a[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) ptx::ldmatrix_x4(a[mt], q_smem + (mt * 16 + a_row) * S + kk * 16 + a_col);
#pragma unroll
    for (int nn = 0; nn < NK / 16; ++nn) {
      uint32_t b[4];
      ptx::ldmatrix_x4(b, k_smem + (nn * 16 + b_row) * S + kk * 16 + b_col);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        ptx::mma_bf16_16816(s[mt][2 * nn], a[mt], b[0], b[1]);
        ptx::mma_bf16_16816(s[mt][2 * nn + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// Scales s into the log2 domain, masks it when `masked` (valid(row, key) with row in
// [0, MT*16) and key in [0, NK) relative to the warp's tile), updates m and l, rescales
// O, and leaves the unnormalised probabilities 2^(s - m) in s.
template <int D, int MT, int NK, class Valid>
__device__ __forceinline__ void warp_online_softmax(WarpAttnState<D, MT>& st, float (&s)[MT][NK / 8][4],
                                                    float scale_log2, bool masked, const Valid& valid, int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = mt * 16 + g + 8 * h;
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < NK / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float x = s[mt][j][2 * h + e] * scale_log2;
          if (masked && !valid(row, j * 8 + 2 * t + e)) x = -INFINITY;
          s[mt][j][2 * h + e] = x;
          mx = fmaxf(mx, x);
        }
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(st.m[mt][h], mx);
      const float base = (m_new == -INFINITY) ? 0.0f : m_new;
      const float correction = ptx::exp2_approx(st.m[mt][h] - base);
      st.m[mt][h] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < NK / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = ptx::exp2_approx(s[mt][j][2 * h + e] - base);
          s[mt][j][2 * h + e] = p;
          sum += p;
        }
      }
      st.l[mt][h] = st.l[mt][h] * correction + sum;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        st.o[mt][j][2 * h] *= correction;
        st.o[mt][j][2 * h + 1] *= correction;
      }
    }
  }
}

// O += P V with P the probabilities left in s and V the NK-key tile at v_smem.
template <int D, int MT, int NK>
__device__ __forceinline__ void warp_pv(WarpAttnState<D, MT>& st, const float (&p)[MT][NK / 8][4],
                                        const __nv_bfloat16* v_smem, int lane) {
  constexpr int S = kSmemStride<D>;
  // B (V rows = keys, transposed): matrices (keys 0-7, d 0-7), (keys 8-15, d 0-7),
  // (keys 0-7, d 8-15), (keys 8-15, d 8-15) -> regs {b0,b1} of dim tile 2dn, then of 2dn+1.
  const int v_row = (lane & 7) + ((lane >> 3) & 1) * 8;
  const int v_col = (lane >> 4) * 8;
#pragma unroll
  for (int kk = 0; kk < NK / 16; ++kk) {
    uint32_t a[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      a[mt][0] = ptx::pack_bf16x2(p[mt][2 * kk][0], p[mt][2 * kk][1]);
      a[mt][1] = ptx::pack_bf16x2(p[mt][2 * kk][2], p[mt][2 * kk][3]);
      a[mt][2] = ptx::pack_bf16x2(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
      a[mt][3] = ptx::pack_bf16x2(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
    }
#pragma unroll
    for (int dn = 0; dn < D / 16; ++dn) {
      uint32_t b[4];
      ptx::ldmatrix_x4_trans(b, v_smem + (kk * 16 + v_row) * S + dn * 16 + v_col);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        ptx::mma_bf16_16816(st.o[mt][2 * dn], a[mt], b[0], b[1]);
        ptx::mma_bf16_16816(st.o[mt][2 * dn + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// Block-cooperative cp.async of `rows` rows of D bf16 into a padded shared tile. Row r is
// read from src + r * src_row_stride when r < valid_rows, else zero-filled.
template <int D, int THREADS>
__device__ __forceinline__ void load_rows_async(__nv_bfloat16* dst, const __nv_bfloat16* src, int64_t src_row_stride,
                                                int rows, int valid_rows, int tid) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  for (int idx = tid; idx < rows * kChunks; idx += THREADS) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool ok = r < valid_rows;
    const __nv_bfloat16* from = ok ? src + r * src_row_stride + c * 8 : src;
    ptx::cp_async_16(dst + r * kSmemStride<D> + c * 8, from, ok);
  }
}

// Block-cooperative cp.async of keys [k0, k0 + KEYS) of one sequence and KV head from the
// paged cache into K and V tiles. Keys >= valid_end are zero-filled and never read (the
// slots past a sequence's length may hold anything, NaN included).
// REQUIRES: k0 % kPageSize == 0, valid_end <= the sequence's kv_len.
template <int D, int KEYS, int THREADS>
__device__ __forceinline__ void load_kv_tile_async(__nv_bfloat16* k_dst, __nv_bfloat16* v_dst,
                                                   const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                                                   const int32_t* seq_pages, int num_kv_heads, int kv_head, int k0,
                                                   int valid_end, int tid) {
  constexpr int kChunks = D / 8;
  for (int idx = tid; idx < KEYS * kChunks; idx += THREADS) {
    const int r = idx / kChunks, c = idx % kChunks;
    const int token = k0 + r;
    const bool ok = token < valid_end;
    int64_t off = 0;
    if (ok) off = kv_cache_offset(__ldg(seq_pages + token / kPageSize), kv_head, token % kPageSize, c * 8, num_kv_heads, D);
    ptx::cp_async_16(k_dst + r * kSmemStride<D> + c * 8, k_cache + off, ok);
    ptx::cp_async_16(v_dst + r * kSmemStride<D> + c * 8, v_cache + off, ok);
  }
}

// Block-cooperative cp.async of keys [k0, k0 + KEYS) of one sequence and KV head from
// one paged cache (K or V alone: a pipeline may wait for K before V). Keys >= valid_end
// are zero-filled. REQUIRES: k0 % kPageSize == 0, valid_end <= the sequence's kv_len.
template <int D, int KEYS, int THREADS>
__device__ __forceinline__ void load_cache_tile_async(__nv_bfloat16* dst, const __nv_bfloat16* cache,
                                                      const int32_t* seq_pages, int num_kv_heads, int kv_head, int k0,
                                                      int valid_end, int tid) {
  constexpr int kChunks = D / 8;
  for (int idx = tid; idx < KEYS * kChunks; idx += THREADS) {
    const int r = idx / kChunks, c = idx % kChunks;
    const int token = k0 + r;
    const bool ok = token < valid_end;
    int64_t off = 0;
    if (ok) off = kv_cache_offset(__ldg(seq_pages + token / kPageSize), kv_head, token % kPageSize, c * 8, num_kv_heads, D);
    ptx::cp_async_16(dst + r * kSmemStride<D> + c * 8, cache + off, ok);
  }
}

// The A (Q) fragments of a warp's 16 rows for all D / 16 k-steps, loaded once into
// registers (FA2 keeps Q in registers instead of re-reading it from shared memory per tile).
template <int D>
__device__ __forceinline__ void warp_load_q_frags(uint32_t (&qf)[D / 16][4], const __nv_bfloat16* q_smem, int lane) {
  const int a_row = (lane & 7) + ((lane >> 3) & 1) * 8;
  const int a_col = (lane >> 4) * 8;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) ptx::ldmatrix_x4(qf[kk], q_smem + a_row * kSmemStride<D> + kk * 16 + a_col);
}

// s = Q K^T for one m16 tile with Q from registers (warp_load_q_frags) and NK keys at k_smem.
template <int D, int NK>
__device__ __forceinline__ void warp_qk_qreg(float (&s)[1][NK / 8][4], const uint32_t (&qf)[D / 16][4],
                                             const __nv_bfloat16* k_smem, int lane) {
  constexpr int S = kSmemStride<D>;
#pragma unroll
  for (int j = 0; j < NK / 8; ++j) s[0][j][0] = s[0][j][1] = s[0][j][2] = s[0][j][3] = 0.0f;
  const int b_row = (lane & 7) + (lane >> 4) * 8;
  const int b_col = ((lane >> 3) & 1) * 8;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
    for (int nn = 0; nn < NK / 16; ++nn) {
      uint32_t b[4];
      ptx::ldmatrix_x4(b, k_smem + (nn * 16 + b_row) * S + kk * 16 + b_col);
      ptx::mma_bf16_16816(s[0][2 * nn], qf[kk], b[0], b[1]);
      ptx::mma_bf16_16816(s[0][2 * nn + 1], qf[kk], b[2], b[3]);
    }
  }
}

// Block-cooperative cp.async of KEYS arbitrary keys of one sequence and KV head (a
// gathered tile: sparse columns, ranges, padding) into K and V tiles. key_of(r) gives the
// position of tile row r, or -1 for a zero-filled padding row; positions go through the
// sequence's page table, so neighbouring rows may come from any page.
template <int D, int KEYS, int THREADS, class KeyOf>
__device__ __forceinline__ void load_gathered_kv_tile_async(__nv_bfloat16* k_dst, __nv_bfloat16* v_dst,
                                                            const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                                                            const int32_t* seq_pages, int num_kv_heads, int kv_head,
                                                            const KeyOf& key_of, int tid) {
  constexpr int kChunks = D / 8;
  for (int idx = tid; idx < KEYS * kChunks; idx += THREADS) {
    const int r = idx / kChunks, c = idx % kChunks;
    const int token = key_of(r);
    const bool ok = token >= 0;
    int64_t off = 0;
    if (ok) off = kv_cache_offset(__ldg(seq_pages + token / kPageSize), kv_head, token % kPageSize, c * 8, num_kv_heads, D);
    ptx::cp_async_16(k_dst + r * kSmemStride<D> + c * 8, k_cache + off, ok);
    ptx::cp_async_16(v_dst + r * kSmemStride<D> + c * 8, v_cache + off, ok);
  }
}

}  // namespace servesim::kernels
