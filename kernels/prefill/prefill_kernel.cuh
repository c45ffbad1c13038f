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

// The query tile a block owns (blockIdx.x: query head, blockIdx.y: tile of the plan)
// and the keys it sees; the same for every variant (kRows: query rows per tile).
struct PrefillBlock {
  int head, hq, hkv, kv_head;
  int row0;     // the sequence's first query row
  int q_begin;  // the tile's first query, within the sequence
  int prefix;   // cached keys before the sequence's first query
  int rows;     // valid query rows of the tile
  int kv_end;   // keys visible to at least one row
  int num_tiles;  // key tiles of kPrefillTileK up to kv_end
  const int32_t* seq_pages;
};

__device__ __forceinline__ PrefillBlock prefill_block(const PrefillParams& p, int kRows) {
  PrefillBlock b;
  b.head = blockIdx.x;
  const int tile = blockIdx.y;
  b.hq = p.a.heads.num_q_heads;
  b.hkv = p.a.heads.num_kv_heads;
  b.kv_head = b.head / (b.hq / b.hkv);
  const int seq = p.tile_seq[tile];
  b.q_begin = p.tile_q_begin[tile];
  b.row0 = p.a.q_indptr[seq];
  const int q_len = p.a.q_indptr[seq + 1] - b.row0;
  b.prefix = p.a.kv.kv_lens[seq] - q_len;
  b.rows = min(kRows, q_len - b.q_begin);
  b.kv_end = b.prefix + b.q_begin + b.rows;
  b.num_tiles = (b.kv_end + kPrefillTileK - 1) / kPrefillTileK;
  b.seq_pages = p.a.kv.page_indices + p.a.kv.page_indptr[seq];
  return b;
}

// Writes one warp's finished rows [0, warp_rows) — O / l and, when asked, the
// log-sum-exp — its row r being query token token0 + r.
template <int D, int MT>
__device__ __forceinline__ void write_warp_rows(const PrefillParams& p, const WarpAttnState<D, MT>& st, int token0,
                                                int warp_rows, int head, int hq, int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = mt * 16 + g + 8 * h;
      if (r >= warp_rows) continue;
      const int64_t token = token0 + r;  // int sum, as the token index fits an int
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
  const PrefillBlock b = prefill_block(p, kRows);
  const int head = b.head, hq = b.hq, hkv = b.hkv, kv_head = b.kv_head;
  const int q_begin = b.q_begin, row0 = b.row0, prefix = b.prefix, rows = b.rows;
  const int kv_end = b.kv_end, num_tiles = b.num_tiles;
  const int32_t* seq_pages = b.seq_pages;

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
  write_warp_rows<D, MT>(p, st, row0 + q_begin + warp_row0, warp_rows, head, hq, lane);
}

// ---- Variant fa2_qreg (FA2 parity of the mma.sync path; H100: slower than fa2) ------------
// 64-row tiles (one m16 tile per warp). Differences from prefill_kernel:
//  - Q is staged once through shared memory and kept in registers as mma A fragments;
//  - K and V of a tile are separate cp.async groups: S = Q K^T starts when K has landed,
//    while V is still in flight; P V waits for V only;
//  - 3 stages (two tiles in flight while one is computed). Q is staged in the third
//    stage's V buffer, which is free until the first prefetch into it, so shared memory is
//    6 x 64 x (D + 8) bf16 (D = 128: 102 KiB, two blocks per SM).
inline constexpr int kQregStages = 3;

template <int D>
constexpr size_t prefill_qreg_smem_bytes() {
  return size_t{2} * kQregStages * kPrefillTileK * kSmemStride<D> * sizeof(__nv_bfloat16);
}

template <int D>
__global__ void __launch_bounds__(kPrefillThreads) prefill_kernel_qreg(const PrefillParams p) {
  constexpr int kRows = kPrefillWarps * 16;
  static_assert(kRows == kPrefillTileK, "Q is staged in one K/V stage buffer");
  constexpr int kStage = kPrefillTileK * kSmemStride<D>;
  SERVESIM_DYNAMIC_SHARED(unsigned char, smem_raw);
  __nv_bfloat16* k_s = reinterpret_cast<__nv_bfloat16*>(smem_raw);  // [3][64][stride]
  __nv_bfloat16* v_s = k_s + kQregStages * kStage;                    // [3][64][stride]
  __nv_bfloat16* q_s = v_s + (kQregStages - 1) * kStage;              // V stage 2, until Q is in registers

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const PrefillBlock b = prefill_block(p, kRows);
  const int head = b.head, hq = b.hq, hkv = b.hkv, kv_head = b.kv_head;
  const int q_begin = b.q_begin, row0 = b.row0, prefix = b.prefix, rows = b.rows;
  const int kv_end = b.kv_end, num_tiles = b.num_tiles;
  const int32_t* seq_pages = b.seq_pages;

  // Two groups per tile (K, then V); empty groups past the last tile keep the count fixed.
  auto prefetch = [&](int t) {
    const int st = t % kQregStages;
    if (t < num_tiles)
      load_cache_tile_async<D, kPrefillTileK, kPrefillThreads>(k_s + st * kStage, p.a.k_cache, seq_pages, hkv, kv_head,
                                                               t * kPrefillTileK, kv_end, tid);
    ptx::cp_async_commit();
    if (t < num_tiles)
      load_cache_tile_async<D, kPrefillTileK, kPrefillThreads>(v_s + st * kStage, p.a.v_cache, seq_pages, hkv, kv_head,
                                                               t * kPrefillTileK, kv_end, tid);
    ptx::cp_async_commit();
  };
  load_rows_async<D, kPrefillThreads>(q_s, p.a.q + (int64_t(row0 + q_begin) * hq + head) * D, int64_t(hq) * D, kRows, rows,
                                      tid);
  ptx::cp_async_commit();
  prefetch(0);
  prefetch(1);
  ptx::cp_async_wait<4>();  // Q (K0, V0, K1, V1 may still be in flight)
  __syncthreads();
  uint32_t qf[D / 16][4];
  warp_load_q_frags<D>(qf, q_s + warp * 16 * kSmemStride<D>, lane);
  __syncthreads();  // Q's staging buffer is V stage 2, refilled by prefetch(2)

  const int warp_rows = rows - warp * 16;
  const int warp_pos0 = prefix + q_begin + warp * 16;
  const int warp_pos_last = warp_pos0 + 15;
  WarpAttnState<D, 1> st;
  st.init();
  for (int i = 0; i < num_tiles; ++i) {
    const int stage = i % kQregStages;
    prefetch(i + 2);          // into the stage computed at i - 1 (released by its last barrier)
    ptx::cp_async_wait<5>();  // K_i (after it: V_i, K/V of i + 1 and i + 2)
    __syncthreads();
    const int k0 = i * kPrefillTileK;
    const bool active = warp_rows > 0 && k0 <= warp_pos_last;
    float s[1][kPrefillTileK / 8][4];
    if (active) {
      warp_qk_qreg<D, kPrefillTileK>(s, qf, k_s + stage * kStage, lane);
      const bool masked = (k0 + kPrefillTileK - 1 > warp_pos0) || (k0 + kPrefillTileK > kv_end);
      warp_online_softmax<D, 1, kPrefillTileK>(
          st, s, p.scale_log2, masked, [&](int r, int key) { return k0 + key <= warp_pos0 + r && k0 + key < kv_end; },
          lane);
    }
    ptx::cp_async_wait<4>();  // V_i
    __syncthreads();
    if (active) warp_pv<D, 1, kPrefillTileK>(st, s, v_s + stage * kStage, lane);
    __syncthreads();  // the stage is refilled by prefetch(i + 3)
  }
  ptx::cp_async_wait<0>();
  if (warp_rows <= 0) return;
  st.finalize_row_sums();
  write_warp_rows<D, 1>(p, st, row0 + q_begin + warp * 16, warp_rows, head, hq, lane);
}

}  // namespace servesim::kernels::detail
