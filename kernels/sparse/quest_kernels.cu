// Quest GPU kernels; contracts in quest_kernels.cuh, algorithm in quest_ref.h.
//
// Napkin math (Llama-3-8B layer, head_dim 128, page 16): the estimate reads 2 x 128 bf16
// of metadata per page and KV head, 1/16 of the K+V bytes dense decode reads (the paper's
// "1/page size" ceiling); top-k reads one float per page; sparse decode reads
// budget x 2 x 256 B per KV head regardless of context length.
#include "kernels/sparse/quest_kernels.cuh"

#include <algorithm>
#include <stdexcept>

#include "kernels/common/cuda_util.cuh"
#include "kernels/common/layout.h"
#include "kernels/sparse/sparse_device.cuh"

namespace servesim::kernels::sparse {
namespace {

constexpr int kDim = 128;
constexpr int kMaxGroup = 8;
constexpr int kDecodeWarps = 4;
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ int device_pages(int tokens) { return (tokens + kPageSize - 1) / kPageSize; }

// One block per (touched page slot, KV head, sequence); thread d owns channel d.
__global__ void quest_metadata_kernel(QuestMetadataArgs a) {
  const QuestCache& c = a.cache;
  const int b = blockIdx.z, h = blockIdx.y, d = threadIdx.x;
  const int len = c.kv_lens[b], fresh = a.new_lens[b], old = len - fresh;
  if (fresh <= 0) return;
  for (int p = old / kPageSize + blockIdx.x; p <= (len - 1) / kPageSize; p += gridDim.x) {
    const int32_t phys = c.page_indices[c.page_indptr[b] + p];
    const int begin = max(old, p * kPageSize) - p * kPageSize;  // first new slot of this page
    const int end = min(len, (p + 1) * kPageSize) - p * kPageSize;
    const __nv_bfloat16* key = c.k + kv_cache_offset(phys, h, 0, d, c.num_kv_heads, c.head_dim);
    __nv_bfloat16* meta = a.meta + (static_cast<int64_t>(phys) * c.num_kv_heads + h) * 2 * c.head_dim;
    float hi, lo;
    int s = begin;
    if (begin == 0) {  // the page's first token initialises its bounds
      hi = lo = __bfloat162float(key[0]);
      s = 1;
    } else {
      hi = __bfloat162float(meta[d]);
      lo = __bfloat162float(meta[c.head_dim + d]);
    }
    for (; s < end; ++s) {
      const float x = __bfloat162float(key[s * c.head_dim]);
      hi = fmaxf(hi, x);
      lo = fminf(lo, x);
    }
    meta[d] = __float2bfloat16(hi);  // exact: max/min of bf16 values
    meta[c.head_dim + d] = __float2bfloat16(lo);
  }
}

// One warp per (page, KV head, sequence); lane owns channels [4 lane, 4 lane + 4).
__global__ void quest_estimate_kernel(QuestEstimateArgs a) {
  const QuestCache& c = a.cache;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int b = blockIdx.z, g = blockIdx.y, p = blockIdx.x * (blockDim.x >> 5) + warp;
  if (p >= device_pages(c.kv_lens[b])) return;
  const int group = c.num_q_heads / c.num_kv_heads;
  const int rows = a.per_query_head ? c.num_q_heads : c.num_kv_heads;
  const int32_t phys = c.page_indices[c.page_indptr[b] + p];
  const __nv_bfloat16* meta = a.meta + (static_cast<int64_t>(phys) * c.num_kv_heads + g) * 2 * kDim + lane * 4;
  float hi[4], lo[4];
  for (int i = 0; i < 4; ++i) {
    hi[i] = __bfloat162float(meta[i]);
    lo[i] = __bfloat162float(meta[kDim + i]);
  }
  float total = 0;
  for (int j = 0; j < group; ++j) {
    const int h = g * group + j;
    const __nv_bfloat16* q = a.q + (static_cast<int64_t>(b) * c.num_q_heads + h) * kDim + lane * 4;
    float s = 0;
    for (int i = 0; i < 4; ++i) {
      const float x = __bfloat162float(q[i]);
      s += fmaxf(x * hi[i], x * lo[i]);
    }
    s = warp_sum(s);
    if (a.per_query_head) {
      if (lane == 0) a.scores[(static_cast<int64_t>(b) * rows + h) * a.max_pages + p] = s;
    } else {
      total += s;
    }
  }
  if (!a.per_query_head && lane == 0) a.scores[(static_cast<int64_t>(b) * rows + g) * a.max_pages + p] = total;
}

__global__ void __launch_bounds__(kTopkThreads) quest_topk_kernel(QuestTopkArgs a) {
  __shared__ TopkShared sm;
  const int row = blockIdx.x, b = blockIdx.y;
  const int64_t r = static_cast<int64_t>(b) * a.rows + row;
  const int pages = device_pages(a.kv_lens[b]);
  int32_t* out = a.selected + r * a.budget_pages;
  if (pages <= a.budget_pages) {
    for (int i = threadIdx.x; i < pages; i += blockDim.x) out[i] = i;
    if (threadIdx.x == 0) a.selected_count[r] = pages;
    return;
  }
  block_topk(a.scores + r * a.max_pages, pages - 1, a.budget_pages - 1, 0, out, sm);
  if (threadIdx.x == 0) {
    out[a.budget_pages - 1] = pages - 1;  // the current page is always attended
    a.selected_count[r] = a.budget_pages;
  }
}

// Fused estimate + top-k: one block of kTopkThreads per (KV head, sequence). Warp w scores
// pages w, w + 16, ... of [0, P_b - 1) with the arithmetic of quest_estimate_kernel (same
// order of operations, so the same floats) into shared memory; block_topk then selects
// from shared memory. The current page P_b - 1 is always kept, so it is not scored. Saves
// one launch and the scores' round trip through global memory; the radix select still
// makes its 4 histogram passes and one compaction pass, over shared memory.
__global__ void __launch_bounds__(kTopkThreads) quest_select_kernel(QuestSelectArgs a) {
  __shared__ float s_scores[kQuestSelectMaxPages];
  __shared__ TopkShared sm;
  const QuestCache& c = a.cache;
  const int g = blockIdx.x, b = blockIdx.y;
  const int64_t r = static_cast<int64_t>(b) * c.num_kv_heads + g;
  const int pages = device_pages(c.kv_lens[b]);
  int32_t* out = a.selected + r * a.budget_pages;
  if (pages <= a.budget_pages) {  // uniform over the block
    for (int i = threadIdx.x; i < pages; i += blockDim.x) out[i] = i;
    if (threadIdx.x == 0) a.selected_count[r] = pages;
    return;
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  const int group = c.num_q_heads / c.num_kv_heads;
  float qf[kMaxGroup][4];
#pragma unroll
  for (int j = 0; j < kMaxGroup; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) qf[j][i] = 0;
    if (j < group) {
      const __nv_bfloat16* q = a.q + (static_cast<int64_t>(b) * c.num_q_heads + g * group + j) * kDim + lane * 4;
#pragma unroll
      for (int i = 0; i < 4; ++i) qf[j][i] = __bfloat162float(q[i]);
    }
  }
  for (int p = warp; p < pages - 1; p += warps) {
    const int32_t phys = c.page_indices[c.page_indptr[b] + p];
    const __nv_bfloat16* meta = a.meta + (static_cast<int64_t>(phys) * c.num_kv_heads + g) * 2 * kDim + lane * 4;
    float hi[4], lo[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      hi[i] = __bfloat162float(meta[i]);
      lo[i] = __bfloat162float(meta[kDim + i]);
    }
    float total = 0;
#pragma unroll
    for (int j = 0; j < kMaxGroup; ++j) {
      if (j >= group) break;
      float s = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) s += fmaxf(qf[j][i] * hi[i], qf[j][i] * lo[i]);
      total += warp_sum(s);
    }
    if (lane == 0) s_scores[p] = total;
  }
  __syncthreads();
  block_topk(s_scores, pages - 1, a.budget_pages - 1, 0, out, sm);
  if (threadIdx.x == 0) {
    out[a.budget_pages - 1] = pages - 1;
    a.selected_count[r] = a.budget_pages;
  }
}

// One block per (split, selection row, sequence), 4 warps; a warp takes whole pages.
// Within a warp, half = lane / 16 handles the page's odd/even tokens and lane % 16 owns
// channels [8 (lane % 16), +8). Logits live in the log2 domain (q pre-scaled by log2 e).
__global__ void __launch_bounds__(kDecodeWarps * 32) quest_decode_kernel(QuestDecodeArgs a) {
  __shared__ float slog[kDecodeWarps][kMaxGroup][kPageSize];
  __shared__ float wm[kDecodeWarps][kMaxGroup], wl[kDecodeWarps][kMaxGroup];
  __shared__ float wacc[kDecodeWarps][kMaxGroup][kDim];
  const QuestCache& c = a.cache;
  const int split = blockIdx.x, row = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, half = lane >> 4, sub = lane & 15;
  const int group = c.num_q_heads / c.num_kv_heads;
  const int rows = a.per_query_head ? c.num_q_heads : c.num_kv_heads;
  const int gs = a.per_query_head ? 1 : group;
  const int first_q = row * gs, kvh = first_q / group;
  const int64_t r = static_cast<int64_t>(b) * rows + row;
  const int count = a.selected_count[r];
  const int32_t* sel = a.selected + r * a.budget_pages;
  const int per_split = (count + a.num_splits - 1) / a.num_splits;
  const int p0 = split * per_split, p1 = min(count, p0 + per_split);
  const int len = c.kv_lens[b];

  float q[kMaxGroup][8], acc[kMaxGroup][8], m[kMaxGroup], l[kMaxGroup];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    m[g] = -INFINITY;
    l[g] = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[g][i] = q[g][i] = 0;
    if (g < gs) {
      load_bf16x8(a.q + (static_cast<int64_t>(b) * c.num_q_heads + first_q + g) * kDim + sub * 8, q[g]);
#pragma unroll
      for (int i = 0; i < 8; ++i) q[g][i] *= a.scale * kLog2e;
    }
  }
  for (int j = p0 + warp; j < p1; j += kDecodeWarps) {
    const int lp = sel[j];
    const int32_t phys = c.page_indices[c.page_indptr[b] + lp];
    const int valid = min(kPageSize, len - lp * kPageSize);
    const __nv_bfloat16* kp = c.k + kv_cache_offset(phys, kvh, 0, sub * 8, c.num_kv_heads, kDim);
    const __nv_bfloat16* vp = c.v + kv_cache_offset(phys, kvh, 0, sub * 8, c.num_kv_heads, kDim);
#pragma unroll
    for (int it = 0; it < kPageSize / 2; ++it) {
      const int t = it * 2 + half;
      float kf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (t < valid) load_bf16x8(kp + t * kDim, kf);  // slots past the length may hold NaN
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g) {
        if (g >= gs) break;
        float part = 0;
#pragma unroll
        for (int i = 0; i < 8; ++i) part += q[g][i] * kf[i];
#pragma unroll
        for (int o = 8; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
        if (sub == 0) slog[warp][g][t] = t < valid ? part : -INFINITY;
      }
    }
    __syncwarp();
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
      if (g >= gs) break;
      float pm = slog[warp][g][sub];
#pragma unroll
      for (int o = 8; o > 0; o >>= 1) pm = fmaxf(pm, __shfl_xor_sync(0xffffffffu, pm, o));
      const float m_new = fmaxf(m[g], pm);  // finite: a selected page has a valid token
      const float alpha = exp2f(m[g] - m_new);
      l[g] *= alpha;
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[g][i] *= alpha;
      m[g] = m_new;
    }
#pragma unroll
    for (int it = 0; it < kPageSize / 2; ++it) {
      const int t = it * 2 + half;
      if (t >= valid) continue;
      float vf[8];
      load_bf16x8(vp + t * kDim, vf);
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g) {
        if (g >= gs) break;
        const float p = exp2f(slog[warp][g][t] - m[g]);
        l[g] += p;
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[g][i] += p * vf[i];
      }
    }
    __syncwarp();  // slog is rewritten by the next page
  }
  // Both halves share m (page maxima cover all 16 tokens): add their sums.
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    if (g >= gs) break;
    l[g] += __shfl_xor_sync(0xffffffffu, l[g], 16);
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[g][i] += __shfl_xor_sync(0xffffffffu, acc[g][i], 16);
    if (half == 0) {
#pragma unroll
      for (int i = 0; i < 8; ++i) wacc[warp][g][sub * 8 + i] = acc[g][i];
      if (sub == 0) {
        wm[warp][g] = m[g];
        wl[warp][g] = l[g];
      }
    }
  }
  __syncthreads();
  const int dim = threadIdx.x;  // blockDim.x == kDim
  for (int g = 0; g < gs; ++g) {
    float mx = -INFINITY;
    for (int w = 0; w < kDecodeWarps; ++w) mx = fmaxf(mx, wm[w][g]);
    float lsum = 0, o = 0;
    if (mx != -INFINITY) {
      for (int w = 0; w < kDecodeWarps; ++w) {
        if (wm[w][g] == -INFINITY) continue;
        const float s = exp2f(wm[w][g] - mx);
        lsum += s * wl[w][g];
        o += s * wacc[w][g][dim];
      }
    }
    const float value = lsum > 0 ? o / lsum : 0.0f;
    const float lse = lsum > 0 ? (mx + log2f(lsum)) / kLog2e : -INFINITY;
    const int64_t qh = static_cast<int64_t>(b) * c.num_q_heads + first_q + g;
    if (a.num_splits == 1) {
      a.out[qh * kDim + dim] = __float2bfloat16(value);
      if (a.lse && dim == 0) a.lse[qh] = lse;
    } else {
      a.partial_o[(qh * a.num_splits + split) * kDim + dim] = value;
      if (dim == 0) a.partial_lse[qh * a.num_splits + split] = lse;
    }
  }
}

// One block per (KV head, sequence): logical selected pages -> physical page list.
__global__ void quest_page_lists_kernel(QuestPageListArgs a) {
  const QuestCache& c = a.cache;
  const int g = blockIdx.x, b = blockIdx.y;
  const int len = c.kv_lens[b], pages = device_pages(len);
  const int count = min(a.budget_pages, pages);
  const int64_t r = static_cast<int64_t>(b) * c.num_kv_heads + g;
  const int32_t* sel = a.selected + r * a.budget_pages;
  int32_t* out = a.page_lists + r * a.budget_pages;
  for (int i = threadIdx.x; i < count; i += blockDim.x) out[i] = c.page_indices[c.page_indptr[b] + sel[i]];
  if (g == 0 && threadIdx.x == 0)
    a.virtual_lens[b] = pages <= a.budget_pages ? len : (a.budget_pages - 1) * kPageSize + (len - (pages - 1) * kPageSize);
}

// Exact merge of the splits (attention_ref.h algebra); one block per (query head, sequence).
__global__ void quest_merge_kernel(QuestDecodeArgs a) {
  const int64_t qh = static_cast<int64_t>(blockIdx.y) * a.cache.num_q_heads + blockIdx.x;
  const int dim = threadIdx.x;
  float mx = -INFINITY;
  for (int s = 0; s < a.num_splits; ++s) mx = fmaxf(mx, a.partial_lse[qh * a.num_splits + s]);
  float wsum = 0, o = 0;
  if (mx != -INFINITY) {
    for (int s = 0; s < a.num_splits; ++s) {
      const float lse = a.partial_lse[qh * a.num_splits + s];
      if (lse == -INFINITY) continue;
      const float w = __expf(lse - mx);
      wsum += w;
      o += w * a.partial_o[(qh * a.num_splits + s) * kDim + dim];
    }
  }
  a.out[qh * kDim + dim] = __float2bfloat16(wsum > 0 ? o / wsum : 0.0f);
  if (a.lse && dim == 0) a.lse[qh] = wsum > 0 ? mx + logf(wsum) : -INFINITY;
}

void require_shape(const QuestCache& c) {
  if (c.head_dim != kDim || c.num_kv_heads <= 0 || c.num_q_heads % c.num_kv_heads != 0 ||
      c.num_q_heads / c.num_kv_heads > kMaxGroup) {
    throw std::invalid_argument("quest kernels: need head_dim 128 and a GQA group of at most 8");
  }
}

}  // namespace

void quest_update_metadata(const QuestMetadataArgs& args, cudaStream_t stream) {
  require_shape(args.cache);
  if (args.cache.batch == 0 || args.max_new_pages <= 0) return;
  const dim3 grid(std::min(args.max_new_pages, 65535), args.cache.num_kv_heads, args.cache.batch);
  SERVESIM_LAUNCH(quest_metadata_kernel, grid, args.cache.head_dim, 0, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void quest_estimate(const QuestEstimateArgs& args, cudaStream_t stream) {
  require_shape(args.cache);
  if (args.cache.batch == 0 || args.max_pages <= 0) return;
  const dim3 grid((args.max_pages + 3) / 4, args.cache.num_kv_heads, args.cache.batch);
  SERVESIM_LAUNCH(quest_estimate_kernel, grid, 128, 0, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void quest_topk(const QuestTopkArgs& args, cudaStream_t stream) {
  if (args.batch == 0 || args.rows == 0) return;
  if (args.budget_pages < 1) throw std::invalid_argument("quest_topk: budget_pages must be >= 1");
  SERVESIM_LAUNCH(quest_topk_kernel, dim3(args.rows, args.batch), kTopkThreads, 0, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void quest_estimate_topk(const QuestSelectArgs& args, cudaStream_t stream) {
  require_shape(args.cache);
  if (args.cache.batch == 0) return;
  if (args.budget_pages < 1) throw std::invalid_argument("quest_estimate_topk: budget_pages must be >= 1");
  if (args.max_pages < 1 || args.max_pages > kQuestSelectMaxPages)
    throw std::invalid_argument("quest_estimate_topk: max_pages must be in [1, 8192] (scores live in shared memory)");
  SERVESIM_LAUNCH(quest_select_kernel, dim3(args.cache.num_kv_heads, args.cache.batch), kTopkThreads, 0, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void quest_sparse_decode(const QuestDecodeArgs& args, cudaStream_t stream) {
  require_shape(args.cache);
  if (args.cache.batch == 0) return;
  if (args.num_splits < 1 || (args.num_splits > 1 && (!args.partial_o || !args.partial_lse))) {
    throw std::invalid_argument("quest_sparse_decode: num_splits > 1 needs partial buffers");
  }
  const int rows = args.per_query_head ? args.cache.num_q_heads : args.cache.num_kv_heads;
  SERVESIM_LAUNCH(quest_decode_kernel, dim3(args.num_splits, rows, args.cache.batch), kDecodeWarps * 32, 0, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
  if (args.num_splits > 1) {
    SERVESIM_LAUNCH(quest_merge_kernel, dim3(args.cache.num_q_heads, args.cache.batch), kDim, 0, stream, args);
    SERVESIM_CUDA_CHECK_LAUNCH();
  }
}

void quest_page_lists(const QuestPageListArgs& args, cudaStream_t stream) {
  require_shape(args.cache);
  if (args.cache.batch == 0) return;
  if (args.budget_pages < 1) throw std::invalid_argument("quest_page_lists: budget_pages must be >= 1");
  SERVESIM_LAUNCH(quest_page_lists_kernel, dim3(args.cache.num_kv_heads, args.cache.batch), 128, 0, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

int quest_decode_splits(int batch, int rows, int budget_pages, int num_sms) {
  const int blocks = std::max(1, batch * rows);
  const int want = (2 * num_sms + blocks - 1) / blocks;
  // At least one page per warp in every split.
  return std::clamp(want, 1, std::max(1, budget_pages / kDecodeWarps));
}

}  // namespace servesim::kernels::sparse
