// Device code of dense causal prefill (see prefill.cuh for the algorithm and contracts).
// Kept in a header so that the launcher (prefill_kernel.cu) and the CPU warp emulator
// test (kernels/emu/) compile the very same kernel source.
#pragma once

#include "kernels/common/attention_warp.cuh"
#include "kernels/prefill/prefill_args.h"
#include "kernels/prefill/prefill_plan.h"

namespace servesim::kernels::detail {

constexpr int kPrefillWarps = 4;
constexpr int kPrefillThreads = kPrefillWarps * 32;

struct PrefillParams {
  PrefillArgs a;
  const int32_t* tile_seq;
  const int32_t* tile_q_begin;
  float scale_log2;
};

template <int D, int MT>
constexpr size_t prefill_smem_bytes() {
  return (size_t{kPrefillWarps} * 16 * MT + 4 * kPrefillTileK) * kSmemStride<D> * sizeof(__nv_bfloat16);
}

template <int D, int MT>
__global__ void __launch_bounds__(kPrefillThreads) prefill_kernel(const PrefillParams p) {
  constexpr int kRowsPerWarp = 16 * MT;
  constexpr int kRows = kPrefillWarps * kRowsPerWarp;
  constexpr int kStage = kPrefillTileK * kSmemStride<D>;
  // Keys per online-softmax step: 64, or 32 with two m-tiles per warp so that the score
  // fragments (MT * keys / 2 registers) fit next to the output accumulator without spills.
  constexpr int kSubKeys = (MT == 2 && D == 128) ? 32 : kPrefillTileK;
  SERVESIM_DYNAMIC_SHARED(unsigned char, smem_raw);
  __nv_bfloat16* q_s = reinterpret_cast<__nv_bfloat16*>(smem_raw);  // [kRows][stride]
  __nv_bfloat16* k_s = q_s + kRows * kSmemStride<D>;                   // [2][64][stride]
  __nv_bfloat16* v_s = k_s + 2 * kStage;                               // [2][64][stride]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int head = blockIdx.x, tile = blockIdx.y;
  const int hq = p.a.heads.num_q_heads, hkv = p.a.heads.num_kv_heads;
  const int kv_head = head / (hq / hkv);
  const int seq = p.tile_seq[tile];
  const int q_begin = p.tile_q_begin[tile];
  const int row0 = p.a.q_indptr[seq];
  const int q_len = p.a.q_indptr[seq + 1] - row0;
  const int prefix = p.a.kv.kv_lens[seq] - q_len;
  const int rows = min(kRows, q_len - q_begin);
  const int kv_end = prefix + q_begin + rows;  // keys visible to at least one row
  const int num_tiles = (kv_end + kPrefillTileK - 1) / kPrefillTileK;
  const int32_t* seq_pages = p.a.kv.page_indices + p.a.kv.page_indptr[seq];

  load_rows_async<D, kPrefillThreads>(q_s, p.a.q + (int64_t(row0 + q_begin) * hq + head) * D, int64_t(hq) * D, kRows, rows,
                               tid);
  load_kv_tile_async<D, kPrefillTileK, kPrefillThreads>(k_s, v_s, p.a.k_cache, p.a.v_cache, seq_pages, hkv, kv_head, 0,
                                                 kv_end, tid);
  ptx::cp_async_commit();

  const int warp_row0 = warp * kRowsPerWarp;             // within the tile
  const int warp_rows = rows - warp_row0;                // valid rows of this warp (may be <= 0)
  const int warp_pos0 = prefix + q_begin + warp_row0;    // absolute position of its first row
  const int warp_pos_last = warp_pos0 + kRowsPerWarp - 1;

  WarpAttnState<D, MT> st;
  st.init();
  for (int i = 0; i < num_tiles; ++i) {
    const int stage = i & 1;
    if (i + 1 < num_tiles) {
      const int next = (i + 1) & 1;
      load_kv_tile_async<D, kPrefillTileK, kPrefillThreads>(k_s + next * kStage, v_s + next * kStage, p.a.k_cache,
                                                     p.a.v_cache, seq_pages, hkv, kv_head,
                                                     (i + 1) * kPrefillTileK, kv_end, tid);
      ptx::cp_async_commit();
      ptx::cp_async_wait<1>();
    } else {
      ptx::cp_async_wait<0>();
    }
    __syncthreads();
#pragma unroll
    for (int sub = 0; sub < kPrefillTileK / kSubKeys; ++sub) {
      const int k0 = i * kPrefillTileK + sub * kSubKeys;
      if (warp_rows > 0 && k0 <= warp_pos_last) {
        float s[MT][kSubKeys / 8][4];
        warp_qk<D, MT, kSubKeys>(s, q_s + warp_row0 * kSmemStride<D>,
                                 k_s + stage * kStage + sub * kSubKeys * kSmemStride<D>, lane);
        const bool masked = (k0 + kSubKeys - 1 > warp_pos0) || (k0 + kSubKeys > kv_end);
        warp_online_softmax<D, MT, kSubKeys>(
            st, s, p.scale_log2, masked,
            [&](int r, int key) { return k0 + key <= warp_pos0 + r && k0 + key < kv_end; }, lane);
        warp_pv<D, MT, kSubKeys>(st, s, v_s + stage * kStage + sub * kSubKeys * kSmemStride<D>, lane);
      }
    }
    __syncthreads();  // the stage is refilled in the next iteration
  }
  ptx::cp_async_wait<0>();
  if (warp_rows <= 0) return;
  st.finalize_row_sums();

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = mt * 16 + g + 8 * h;
      if (r >= warp_rows) continue;
      const int64_t token = row0 + q_begin + warp_row0 + r;
      const float inv = 1.0f / st.l[mt][h];  // > 0: key 0 is visible to every row
      __nv_bfloat16* out = p.a.out + (token * hq + head) * D;
#pragma unroll
      for (int j = 0; j < D / 8; ++j)
        *reinterpret_cast<__nv_bfloat162*>(out + j * 8 + 2 * t) =
            __floats2bfloat162_rn(st.o[mt][j][2 * h] * inv, st.o[mt][j][2 * h + 1] * inv);
      if (p.a.lse != nullptr && t == 0) p.a.lse[token * hq + head] = (st.m[mt][h] + log2f(st.l[mt][h])) * kLn2;
    }
  }
}

}  // namespace servesim::kernels::detail
