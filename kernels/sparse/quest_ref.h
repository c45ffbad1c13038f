// Quest (Tang et al., "Quest: Query-Aware Sparsity for Efficient Long-Context LLM
// Inference", ICML 2024; seeds 000/002): CPU reference.
//
// Each KV page (16 tokens) keeps per-channel bounds of its keys, M_d = max_t k_t,d and
// m_d = min_t k_t,d (Algorithm 1, "when inserting a new token"). At decode time the
// criticality of a page for a query q is
//     score = sum_d max(q_d * M_d, q_d * m_d),
// an upper bound of q.k for every key k in the page. The top-k pages by score, plus the
// current (last, partially filled) page, are the only pages attention reads. The token
// budget B selects ceil(B / 16) pages in total. Quest is not applied to the first two
// layers of a model (they stay dense); that is a model-level option of the cost model,
// not of these kernels (see docs/sparse_kernels.md).
//
// GQA: the KV cache and its metadata are per KV head. The estimate is computed either
// per KV head, summing the bounds of the group's query heads (the pages then serve the
// whole group with one KV load; the sum bounds sum_h q_h.k from above), or per query
// head (each query head selects its own pages).
//
// Metadata layout (CPU float; GPU bf16, exact since max/min of bf16 keys are bf16):
//   [num_physical_pages][num_kv_heads][2][head_dim], index 0 = M (max), 1 = m (min),
// indexed by physical page id so it lives beside the paged K cache.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sparse/sparse_ref_util.h"

namespace servesim::kernels::sparse {

// Element offset of the metadata of (physical page, kv head); M at +0, m at +head_dim.
inline int64_t quest_meta_offset(int32_t physical_page, int kv_head, int num_kv_heads,
                                 int head_dim) {
  return (static_cast<int64_t>(physical_page) * num_kv_heads + kv_head) * 2 * head_dim;
}

// Number of pages a token budget buys (at least one: the current page).
inline int64_t quest_budget_pages(int64_t budget_tokens) {
  return budget_tokens <= kPageSize ? 1 : (budget_tokens + kPageSize - 1) / kPageSize;
}

// Folds the keys of tokens [old_len, old_len + num_new) of one sequence into the
// metadata of the pages that hold them (incremental Algorithm 1). A page that held no
// token before starts from its first new key. Pages of older tokens are not touched.
// REQUIRES: the K cache already contains the new tokens; page_table covers them.
void quest_append_metadata_ref(const KvCacheF32& kv, std::span<const int32_t> page_table,
                               int64_t old_len, int64_t num_new, float* meta);

// Recomputes the metadata of every page of a sequence of `context_len` tokens from its keys.
void quest_recompute_metadata_ref(const KvCacheF32& kv, std::span<const int32_t> page_table,
                                  int64_t context_len, float* meta);

// Criticality of the `num_pages` logical pages of one sequence for one decode query
// q [num_q_heads][head_dim]. scores is [rows][num_pages], rows = num_kv_heads (sum over
// each group's query heads) or num_q_heads when per_query_head. Unscaled: the softmax
// scale does not change the ranking.
void quest_estimate_ref(const float* q, const float* meta, std::span<const int32_t> page_table,
                        int64_t num_pages, int num_q_heads, int num_kv_heads, int head_dim,
                        bool per_query_head, float* scores);

// Logical pages attention reads for one selection row: every page when
// num_pages <= budget_pages, else the top (budget_pages - 1) of pages [0, num_pages - 1)
// by score (topk_indices contract) followed by the current page num_pages - 1.
// Ascending order. REQUIRES: budget_pages >= 1, scores.size() >= num_pages.
std::vector<int32_t> quest_select_pages_ref(std::span<const float> scores, int64_t num_pages,
                                            int64_t budget_pages);

}  // namespace servesim::kernels::sparse
