// AnDPro GPU kernels; contracts in andpro_kernels.cuh, algorithm in andpro_ref.h.
//
// Napkin math: scoring does 2 x 2 x (group w) x 128 FLOPs per candidate and KV head,
// i.e. 2 w / n of the causal prefill's 2 n^2 128 FLOPs per query head (w = 32, n = 32K:
// 0.2 %); the K/V it reads once are what the prefill just wrote.
#include "kernels/sparse/andpro_kernels.cuh"

#include <algorithm>
#include <stdexcept>

#include "kernels/common/cuda_util.cuh"
#include "kernels/common/layout.h"
#include "kernels/sparse/sparse_device.cuh"
#include "kernels/sparse/sparse_wmma.cuh"

namespace servesim::kernels::sparse {
namespace {

constexpr int kDim = 128;
constexpr int kLd = kDim + 8;
constexpr int kSLd = 64 + 4;
constexpr float kLog2e = 1.4426950408889634f;

struct ScoreSmem {
  __nv_bfloat16 k[64][kLd];
  __nv_bfloat16 v[64][kLd];
  float s[4][16][kSLd];   // per warp: q . k logits of a 16-row tile
  float yv[4][16][kSLd];  // per warp: y . v of the same tile
  float red[4][64];
};

// One block per (64 candidates, KV head). Window rows of the group's query heads are
// processed 16 at a time (rows of one head: w is a multiple of 16).
__global__ void __launch_bounds__(128) andpro_score_kernel(AndproArgs a) {
  SERVESIM_SPARSE_DYNAMIC_SMEM(smem_raw);
  ScoreSmem& sm = *reinterpret_cast<ScoreSmem*>(smem_raw);
  const int g = blockIdx.y, c0 = blockIdx.x * 64;
  const int cand = a.n - a.window, group = a.num_q_heads / a.num_kv_heads;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const __nv_bfloat16* k_cache = a.k_cache;
  const __nv_bfloat16* v_cache = a.v_cache;
  const int32_t* table = a.page_table;
  const int nkv = a.num_kv_heads;
  load_tile64(&sm.k[0][0], kLd, [=](int j) {
    return c0 + j < cand ? paged_row(k_cache, table, c0 + j, g, nkv, kDim) : nullptr;
  });
  load_tile64(&sm.v[0][0], kLd, [=](int j) {
    return c0 + j < cand ? paged_row(v_cache, table, c0 + j, g, nkv, kDim) : nullptr;
  });
  __syncthreads();
  const float scale2 = a.scale * kLog2e;
  const int row_ld = a.num_q_heads * kDim;
  float acc0 = 0.0f, acc1 = 0.0f;  // candidates c0 + lane and c0 + 32 + lane
  const int tiles = group * a.window / 16;
  for (int rt = warp; rt < tiles; rt += 4) {
    const int h = g * group + rt * 16 / a.window, t0 = rt * 16 % a.window;
    const int64_t base = (static_cast<int64_t>(t0) * a.num_q_heads + h) * kDim;
    {
      WmmaA fa[kDim / 16];
      wmma_load_rows16(fa, a.q_win + base, row_ld);
      wmma_abt_16x64(fa, &sm.k[0][0], kLd, &sm.s[warp][0][0], kSLd);
      wmma_load_rows16(fa, a.y_win + base, row_ld);
      wmma_abt_16x64(fa, &sm.v[0][0], kLd, &sm.yv[warp][0][0], kSLd);
    }
    __syncwarp();
#pragma unroll 4
    for (int i = 0; i < 16; ++i) {
      const float lse2 = a.lse_win[(t0 + i) * a.num_q_heads + h] * kLog2e;
      acc0 += exp2f(sm.s[warp][i][lane] * scale2 - lse2) * sm.yv[warp][i][lane];
      acc1 += exp2f(sm.s[warp][i][lane + 32] * scale2 - lse2) * sm.yv[warp][i][lane + 32];
    }
    __syncwarp();
  }
  sm.red[warp][lane] = acc0;
  sm.red[warp][lane + 32] = acc1;
  __syncthreads();
  const int t = static_cast<int>(threadIdx.x);
  if (t < 64 && c0 + t < cand) {
    a.token_scores[static_cast<int64_t>(g) * cand + c0 + t] = sm.red[0][t] + sm.red[1][t] + sm.red[2][t] + sm.red[3][t];
  }
}

__global__ void andpro_merge_kernel(AndproArgs a) {
  const int g = blockIdx.y, b = blockIdx.x * blockDim.x + threadIdx.x;
  const int cand = a.n - a.window, blocks = cand / a.block;
  if (b >= blocks) return;
  const float* s = a.token_scores + static_cast<int64_t>(g) * cand + static_cast<int64_t>(b) * a.block;
  float sum = 0.0f;
  for (int j = 0; j < a.block; ++j) sum += s[j];
  a.block_scores[static_cast<int64_t>(g) * blocks + b] = sum;
}

__global__ void __launch_bounds__(kTopkThreads) andpro_select_kernel(AndproArgs a) {
  __shared__ TopkShared sm;
  const int g = blockIdx.x, blocks = (a.n - a.window) / a.block;
  block_topk(a.block_scores + static_cast<int64_t>(g) * blocks, blocks, a.kept_blocks, a.keep_first_block ? 1 : 0,
             a.kept + static_cast<int64_t>(g) * a.kept_blocks, sm);
}

// One block per (destination page, KV head): 16 tokens x 128 channels of K and of V.
__global__ void andpro_compact_kernel(AndproArgs a) {
  const int page = blockIdx.x, g = blockIdx.y;
  const int region = (a.n - a.window) / a.block * a.block;
  const int kb = a.kept_blocks * a.block;
  const int total = kb + (a.n - region);
  const int32_t* kept = a.kept + static_cast<int64_t>(g) * a.kept_blocks;
  const int32_t dst_page = a.dst_page_table[page];
  for (int idx = threadIdx.x; idx < kPageSize * (kDim / 8); idx += blockDim.x) {
    const int slot = idx / (kDim / 8), c = (idx % (kDim / 8)) * 8;
    const int j = page * kPageSize + slot;
    if (j >= total) break;  // idx grows with slot
    const int pos = j < kb ? kept[j / a.block] * a.block + j % a.block : region + (j - kb);
    const int64_t dst = kv_cache_offset(dst_page, g, slot, c, a.num_kv_heads, kDim);
    *reinterpret_cast<uint4*>(a.dst_k + dst) =
        *reinterpret_cast<const uint4*>(paged_row(a.k_cache, a.page_table, pos, g, a.num_kv_heads, kDim) + c);
    *reinterpret_cast<uint4*>(a.dst_v + dst) =
        *reinterpret_cast<const uint4*>(paged_row(a.v_cache, a.page_table, pos, g, a.num_kv_heads, kDim) + c);
  }
}

// layer_topk: one thread block selects over the layer's concatenated block scores.
__global__ void __launch_bounds__(kTopkThreads) andpro_select_layer_kernel(AndproArgs a) {
  __shared__ TopkShared sm;
  const int blocks = (a.n - a.window) / a.block;
  block_topk(a.block_scores, a.num_kv_heads * blocks, a.num_kv_heads * a.kept_blocks, a.keep_first_block ? 1 : 0,
             a.kept, sm, blocks);
}

// layer_topk compaction: one block per (slice j of head g, g); slices past the head's
// length exit. Head g's kept ids and first slice come from the ascending flat ids.
__global__ void andpro_compact_ragged_kernel(AndproArgs a) {
  const int j_slice = blockIdx.x, g = blockIdx.y, G = a.num_kv_heads;
  const int nblocks = (a.n - a.window) / a.block;
  const int region = nblocks * a.block, tail = a.n - region;
  const int total = G * a.kept_blocks;
  __shared__ int head_begin, head_blocks, head_slice;
  if (threadIdx.x == 0) {
    auto lower = [&](int key) {  // first flat id >= key
      int lo = 0, hi = total;
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (a.kept[mid] < key) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    int begin = 0, slice = 0;
    for (int h = 0; h < g; ++h) {
      const int next = lower((h + 1) * nblocks);
      slice += pages_for_tokens((next - begin) * a.block + tail);
      begin = next;
    }
    head_begin = begin;
    head_blocks = lower((g + 1) * nblocks) - begin;
    head_slice = slice;
  }
  __syncthreads();
  const int kb = head_blocks * a.block, len = kb + tail;
  if (j_slice * kPageSize >= len) return;  // past this head's segment (block-uniform)
  const int s = head_slice + j_slice;
  const int32_t dst_page = a.dst_page_table[s / G];
  const int dst_head = s % G;
  for (int idx = threadIdx.x; idx < kPageSize * (kDim / 8); idx += blockDim.x) {
    const int slot = idx / (kDim / 8), c = (idx % (kDim / 8)) * 8;
    const int j = j_slice * kPageSize + slot;
    if (j >= len) break;  // idx grows with slot
    const int pos = j < kb ? (a.kept[head_begin + j / a.block] - g * nblocks) * a.block + j % a.block : region + (j - kb);
    const int64_t dst = kv_cache_offset(dst_page, dst_head, slot, c, G, kDim);
    *reinterpret_cast<uint4*>(a.dst_k + dst) =
        *reinterpret_cast<const uint4*>(paged_row(a.k_cache, a.page_table, pos, g, G, kDim) + c);
    *reinterpret_cast<uint4*>(a.dst_v + dst) =
        *reinterpret_cast<const uint4*>(paged_row(a.v_cache, a.page_table, pos, g, G, kDim) + c);
  }
}

void require_args(const AndproArgs& a) {
  if (a.head_dim != kDim || a.num_kv_heads <= 0 || a.num_q_heads % a.num_kv_heads != 0 || a.window % 16 != 0 ||
      a.window <= 0 || a.block <= 0 || 64 % a.block != 0 || a.n <= a.window) {
    throw std::invalid_argument("andpro kernels: need head_dim 128, GQA, window % 16 == 0, 64 % block == 0, n > window");
  }
}

}  // namespace

void andpro_score(const AndproArgs& a, cudaStream_t stream) {
  require_args(a);
  const int cand = a.n - a.window;
  const size_t smem = sizeof(ScoreSmem);
  SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(andpro_score_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  SERVESIM_LAUNCH(andpro_score_kernel, dim3((cand + 63) / 64, a.num_kv_heads), 128, smem, stream, a);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void andpro_merge(const AndproArgs& a, cudaStream_t stream) {
  require_args(a);
  const int blocks = (a.n - a.window) / a.block;
  if (blocks == 0) return;
  SERVESIM_LAUNCH(andpro_merge_kernel, dim3((blocks + 127) / 128, a.num_kv_heads), 128, 0, stream, a);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void andpro_select(const AndproArgs& a, cudaStream_t stream) {
  require_args(a);
  if (a.kept_blocks == 0) return;
  SERVESIM_LAUNCH(andpro_select_kernel, a.num_kv_heads, kTopkThreads, 0, stream, a);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void andpro_compact(const AndproArgs& a, cudaStream_t stream) {
  require_args(a);
  const int region = (a.n - a.window) / a.block * a.block;
  const int total = a.kept_blocks * a.block + (a.n - region);
  SERVESIM_LAUNCH(andpro_compact_kernel, dim3(pages_for_tokens(total), a.num_kv_heads), 128, 0, stream, a);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void andpro_select_layer(const AndproArgs& a, cudaStream_t stream) {
  require_args(a);
  if (a.kept_blocks == 0) return;
  SERVESIM_LAUNCH(andpro_select_layer_kernel, 1, kTopkThreads, 0, stream, a);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void andpro_compact_ragged(const AndproArgs& a, cudaStream_t stream) {
  require_args(a);
  const int nblocks = (a.n - a.window) / a.block;
  // The longest a head can be: all of the layer's blocks, at most nblocks.
  const int most = std::min(nblocks, a.num_kv_heads * a.kept_blocks) * a.block + (a.n - nblocks * a.block);
  SERVESIM_LAUNCH(andpro_compact_ragged_kernel, dim3(pages_for_tokens(most), a.num_kv_heads), 128, 0, stream, a);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels::sparse
