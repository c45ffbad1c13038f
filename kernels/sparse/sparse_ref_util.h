// CPU building blocks shared by the sparse-attention references (Quest, MInference,
// AnDPro): the deterministic top-k selection contract and attention of a decode query
// over a subset of pages. Ground truth for every sparse reference is
// kernels/common/attention_ref.h (dense attention under a mask).
//
// Tensor conventions (all CPU references, float storage, double accumulation):
//  * contiguous tensors are row-major [tokens][heads][head_dim];
//  * paged KV caches follow kernels/common/layout.h: K and V are separate arrays
//    [num_pages][num_kv_heads][kPageSize][head_dim], addressed through a per-sequence
//    page table of physical page ids (logical page p holds tokens [16p, 16p + 16));
//  * GQA: query head h reads KV head h / (num_q_heads / num_kv_heads);
//  * logits are scaled by `scale` (1/sqrt(head_dim) unless stated) before the softmax,
//    and LSE is the natural log of sum_j exp(scale * q.k_j).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/common/layout.h"

namespace servesim::kernels::sparse {

// q·k over d floats, accumulated in double (the CPU references' precision).
inline double dot(const float* a, const float* b, int d) {
  double s = 0;
  for (int i = 0; i < d; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Top-k selection contract shared by every family (CPU and GPU agree on it exactly):
// keeps min(k, n) indices with the largest scores; NaN counts as -inf; ties are broken
// towards the smaller index; the result is sorted by ascending index (not by score).
std::vector<int32_t> topk_indices(std::span<const float> scores, int k);

// Read-only float view of one layer's paged K and V arrays (layout above).
struct KvCacheF32 {
  const float* k = nullptr;
  const float* v = nullptr;
  int num_kv_heads = 0;
  int head_dim = 0;

  int64_t offset(int32_t physical_page, int kv_head, int slot) const {
    return kv_cache_offset(physical_page, kv_head, slot, 0, num_kv_heads, head_dim);
  }
};

// Attention of one decode query (all query heads) over a subset of a sequence's logical
// pages: q [num_q_heads][d], out [num_q_heads][d]. pages_for(row) gives the logical pages
// that selection row `row` may read, where rows are KV heads (one list per KV head,
// shared by its query heads) or query heads (one list each) depending on
// `per_query_head`. Only tokens < context_len are read.
void paged_decode_subset_ref(const float* q, const KvCacheF32& kv,
                             std::span<const int32_t> page_table, int64_t context_len,
                             int num_q_heads, float scale, bool per_query_head,
                             const std::function<std::span<const int32_t>(int row)>& pages_for,
                             float* out);

}  // namespace servesim::kernels::sparse
