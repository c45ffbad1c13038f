// Device code of dense paged decode (see decode.cuh for the algorithm and contracts).
// Kept in a header so that the launcher (decode_kernel.cu) and the CPU warp emulator
// test (kernels/emu/) compile the very same kernel source.
#pragma once

#include "kernels/common/attention_warp.cuh"
#include "kernels/decode/decode_args.h"
#include "kernels/decode/decode_plan.h"

namespace servesim::kernels::detail {

constexpr int kDecodeWarps = 4;
constexpr int kDecodeThreads = kDecodeWarps * 32;
constexpr int kDecodeKeysPerWarp = kDecodeTileTokens / kDecodeWarps;  // 16
constexpr int kDecodeRows = 16;                                 // one m16 tile of query heads

struct DecodeParams {
  DecodeArgs a;
  const int32_t* work_seq;
  const int32_t* work_split;
  const int32_t* seq_work_indptr;
  int split_tokens;
  float scale_log2;
  float* partial_o;    // [num_work][num_q_heads][head_dim]
  float* partial_lse;  // [num_work][num_q_heads]
};

// Q tile + two stages of K and V tiles; after the loop the K/V region holds the
// cross-warp reduction (red_o, red_m, red_l).
template <int D>
constexpr size_t decode_smem_bytes() {
  constexpr size_t kv_bytes = size_t{4} * kDecodeTileTokens * kSmemStride<D> * sizeof(__nv_bfloat16);
  static_assert((size_t{kDecodeWarps} * kDecodeRows * D + 2 * kDecodeWarps * kDecodeRows) * sizeof(float) <= kv_bytes);
  return size_t{kDecodeRows} * kSmemStride<D> * sizeof(__nv_bfloat16) + kv_bytes;
}

template <int D>
__global__ void __launch_bounds__(kDecodeThreads) decode_splitkv_kernel(const DecodeParams p) {
  SERVESIM_DYNAMIC_SHARED(unsigned char, smem_raw);
  __nv_bfloat16* q_s = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* k_s = q_s + kDecodeRows * kSmemStride<D>;                       // [2][64][stride]
  __nv_bfloat16* v_s = k_s + 2 * kDecodeTileTokens * kSmemStride<D>;       // [2][64][stride]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int work = blockIdx.x, kv_head = blockIdx.y;
  const int seq = p.work_seq[work];
  const int split = p.work_split[work];
  const int hq = p.a.heads.num_q_heads, hkv = p.a.heads.num_kv_heads, group = hq / hkv;
  const int kv_len = p.a.kv.kv_lens[seq];
  const int begin = split * p.split_tokens;
  const int end = min(kv_len, begin + p.split_tokens);
  const int num_tiles = end > begin ? (end - begin + kDecodeTileTokens - 1) / kDecodeTileTokens : 0;
  const int32_t* seq_pages = p.a.kv.page_indices + p.a.kv.page_indptr[p.a.per_head_pages ? seq * hkv + kv_head : seq];

  // Query rows: the group's heads, contiguous in [batch][num_q_heads][D].
  load_rows_async<D, kDecodeThreads>(q_s, p.a.q + (int64_t(seq) * hq + int64_t(kv_head) * group) * D, D, kDecodeRows, group, tid);
  if (num_tiles > 0)
    load_kv_tile_async<D, kDecodeTileTokens, kDecodeThreads>(k_s, v_s, p.a.k_cache, p.a.v_cache, seq_pages, hkv, kv_head,
                                                       begin, end, tid);
  ptx::cp_async_commit();

  WarpAttnState<D, 1> st;
  st.init();
  for (int i = 0; i < num_tiles; ++i) {
    const int stage = i & 1;
    if (i + 1 < num_tiles) {
      const int next = (i + 1) & 1;
      load_kv_tile_async<D, kDecodeTileTokens, kDecodeThreads>(
          k_s + next * kDecodeTileTokens * kSmemStride<D>, v_s + next * kDecodeTileTokens * kSmemStride<D>,
          p.a.k_cache, p.a.v_cache, seq_pages, hkv, kv_head, begin + (i + 1) * kDecodeTileTokens, end, tid);
      ptx::cp_async_commit();
      ptx::cp_async_wait<1>();
    } else {
      ptx::cp_async_wait<0>();
    }
    __syncthreads();
    const int key0 = begin + i * kDecodeTileTokens + warp * kDecodeKeysPerWarp;  // first key of this warp
    if (key0 < end) {
      const __nv_bfloat16* k_tile = k_s + (stage * kDecodeTileTokens + warp * kDecodeKeysPerWarp) * kSmemStride<D>;
      const __nv_bfloat16* v_tile = v_s + (stage * kDecodeTileTokens + warp * kDecodeKeysPerWarp) * kSmemStride<D>;
      float s[1][kDecodeKeysPerWarp / 8][4];
      warp_qk<D, 1, kDecodeKeysPerWarp>(s, q_s, k_tile, lane);
      const bool masked = key0 + kDecodeKeysPerWarp > end;
      warp_online_softmax<D, 1, kDecodeKeysPerWarp>(
          st, s, p.scale_log2, masked, [&](int, int key) { return key0 + key < end; }, lane);
      warp_pv<D, 1, kDecodeKeysPerWarp>(st, s, v_tile, lane);
    }
    __syncthreads();  // the stage is refilled in the next iteration
  }
  ptx::cp_async_wait<0>();
  st.finalize_row_sums();

  // Merge the four warps' states. The K/V tiles are dead now; reuse that space.
  float* red_o = reinterpret_cast<float*>(k_s);       // [kDecodeWarps][kDecodeRows][D]
  float* red_m = red_o + kDecodeWarps * kDecodeRows * D;          // [kDecodeWarps][kDecodeRows]
  float* red_l = red_m + kDecodeWarps * kDecodeRows;              // [kDecodeWarps][kDecodeRows]
  __syncthreads();
  {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = g + 8 * h;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        red_o[(warp * kDecodeRows + row) * D + j * 8 + 2 * t] = st.o[0][j][2 * h];
        red_o[(warp * kDecodeRows + row) * D + j * 8 + 2 * t + 1] = st.o[0][j][2 * h + 1];
      }
      if (t == 0) {
        red_m[warp * kDecodeRows + row] = st.m[0][h];
        red_l[warp * kDecodeRows + row] = st.l[0][h];
      }
    }
  }
  __syncthreads();

  const bool single_split = (p.seq_work_indptr[seq + 1] - p.seq_work_indptr[seq]) == 1;
  for (int idx = tid; idx < group * D; idx += kDecodeThreads) {
    const int row = idx / D, d = idx % D;
    float m_max = -INFINITY;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) m_max = fmaxf(m_max, red_m[w * kDecodeRows + row]);
    float l_sum = 0.0f, o_sum = 0.0f;
    if (m_max != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kDecodeWarps; ++w) {
        const float wm = red_m[w * kDecodeRows + row];
        if (wm == -INFINITY) continue;
        const float f = ptx::exp2_approx(wm - m_max);
        l_sum += red_l[w * kDecodeRows + row] * f;
        o_sum += red_o[(w * kDecodeRows + row) * D + d] * f;
      }
    }
    const float o = l_sum > 0.0f ? o_sum / l_sum : 0.0f;
    const float lse = l_sum > 0.0f ? (m_max + log2f(l_sum)) * kLn2 : -INFINITY;
    const int head = kv_head * group + row;
    if (single_split) {
      p.a.out[(int64_t(seq) * hq + head) * D + d] = __float2bfloat16(o);
      if (p.a.lse != nullptr && d == 0) p.a.lse[int64_t(seq) * hq + head] = lse;
    } else {
      p.partial_o[(int64_t(work) * hq + head) * D + d] = o;
      if (d == 0) p.partial_lse[int64_t(work) * hq + head] = lse;
    }
  }
}

// One block (D threads) per (sequence, query head); thread d owns output dimension d.
template <int D>
__global__ void __launch_bounds__(D) decode_merge_kernel(const DecodeParams p) {
  const int seq = blockIdx.x, head = blockIdx.y, d = threadIdx.x;
  const int hq = p.a.heads.num_q_heads;
  const int w0 = p.seq_work_indptr[seq], w1 = p.seq_work_indptr[seq + 1];
  if (w1 - w0 <= 1) return;  // written directly by the split kernel
  float lse_max = -INFINITY;
  for (int w = w0; w < w1; ++w) lse_max = fmaxf(lse_max, p.partial_lse[int64_t(w) * hq + head]);
  float weight_sum = 0.0f, o = 0.0f;
  if (lse_max != -INFINITY) {
    for (int w = w0; w < w1; ++w) {
      const float lse = p.partial_lse[int64_t(w) * hq + head];
      if (lse == -INFINITY) continue;
      const float weight = __expf(lse - lse_max);
      weight_sum += weight;
      o += weight * p.partial_o[(int64_t(w) * hq + head) * D + d];
    }
  }
  p.a.out[(int64_t(seq) * hq + head) * D + d] = __float2bfloat16(weight_sum > 0.0f ? o / weight_sum : 0.0f);
  if (p.a.lse != nullptr && d == 0)
    p.a.lse[int64_t(seq) * hq + head] = weight_sum > 0.0f ? lse_max + logf(weight_sum) : -INFINITY;
}

}  // namespace servesim::kernels::detail
