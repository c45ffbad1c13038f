// Quest GPU kernels (sm_90, bf16 storage, fp32 accumulation, GQA, page size 16); the
// algorithm and the CPU reference are in quest_ref.h, the paged layout in
// kernels/common/layout.h. One decode step of a Quest layer is
//   quest_update_metadata  (after K/V of the new tokens were appended)
//   quest_estimate         scores[b][row][p] = sum_{h in row} sum_d max(q_hd M_d, q_hd m_d)
//   quest_topk             per (b, row): top (budget_pages - 1) of pages [0, P_b - 1) + page P_b - 1
//   (quest_estimate_topk   both in one launch, KV-head rows, scores in shared memory)
//   quest_sparse_decode    attention over the selected pages (split-KV + merge)
// where rows are KV heads (scores summed over the group's query heads; one selection
// serves the whole group from one KV load) or query heads (per_query_head).
// Every launcher enqueues on `stream`, never synchronises, and throws on launch errors.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace servesim::kernels::sparse {

// The batch's paged cache (layout.h) as the Quest kernels see it. Device pointers.
struct QuestCache {
  const __nv_bfloat16* k = nullptr;  // [num_pages][num_kv_heads][16][head_dim]
  const __nv_bfloat16* v = nullptr;
  const int32_t* page_indptr = nullptr;   // [batch + 1]
  const int32_t* page_indices = nullptr;  // CSR page table
  const int32_t* kv_lens = nullptr;       // [batch] tokens after the append
  int batch = 0;
  int num_q_heads = 32, num_kv_heads = 8, head_dim = 128;
};

struct QuestMetadataArgs {
  QuestCache cache;
  const int32_t* new_lens = nullptr;  // [batch] tokens appended by this step (<= kv_lens)
  int max_new_pages = 0;              // max over b of the pages touched by its new tokens
  __nv_bfloat16* meta = nullptr;      // [num_pages][num_kv_heads][2][head_dim] (M, m)
};

struct QuestEstimateArgs {
  QuestCache cache;
  const __nv_bfloat16* q = nullptr;     // [batch][num_q_heads][head_dim]
  const __nv_bfloat16* meta = nullptr;
  bool per_query_head = false;
  int max_pages = 0;                    // row stride of scores (>= every P_b)
  float* scores = nullptr;              // [batch][rows][max_pages]
};

struct QuestTopkArgs {
  const int32_t* kv_lens = nullptr;     // [batch]
  const float* scores = nullptr;        // [batch][rows][max_pages]
  int batch = 0, rows = 0, max_pages = 0;
  int budget_pages = 0;                 // quest_budget_pages(budget tokens), >= 1
  int32_t* selected = nullptr;          // [batch][rows][budget_pages] logical pages, ascending
  int32_t* selected_count = nullptr;    // [batch][rows] = min(budget_pages, P_b)
};

// Fused estimate + top-k (variant `fused`, KV-head selection only): one block of
// kTopkThreads per (KV head, sequence) scores pages [0, P_b - 1) into shared memory (the
// scores never reach global memory) and selects from there, with the contract of
// quest_estimate (per_query_head = false) followed by quest_topk.
inline constexpr int kQuestSelectMaxPages = 8192;  // 128K tokens at page 16
struct QuestSelectArgs {
  QuestCache cache;
  const __nv_bfloat16* q = nullptr;     // [batch][num_q_heads][head_dim]
  const __nv_bfloat16* meta = nullptr;
  int max_pages = 0;                    // >= every P_b; REQUIRES <= kQuestSelectMaxPages
  int budget_pages = 0;                 // >= 1
  int32_t* selected = nullptr;          // [batch][num_kv_heads][budget_pages] logical pages, ascending
  int32_t* selected_count = nullptr;    // [batch][num_kv_heads] = min(budget_pages, P_b)
};

// Tensor-core sparse decode (variant `tc`): the selected pages of each (sequence, KV head)
// become that pair's own page list of physical pages, and the dense split-KV decode
// (kernels/decode, mma.sync + cp.async) runs over them with DecodeArgs::per_head_pages.
// The lists of one sequence all hold min(budget_pages, P_b) pages ending with the current
// page, so one virtual length per sequence serves every KV head (quest_virtual_len).
struct QuestPageListArgs {
  QuestCache cache;
  const int32_t* selected = nullptr;        // [batch][num_kv_heads][budget_pages] (KV-head rows)
  int budget_pages = 0;
  int32_t* page_lists = nullptr;            // [batch][num_kv_heads][budget_pages] physical pages
  int32_t* virtual_lens = nullptr;          // [batch]
};
// Tokens of the virtual sequence the selected pages form (all pages but the current one full).
inline int quest_virtual_len(int kv_len, int budget_pages) {
  const int pages = (kv_len + 15) / 16;
  return pages <= budget_pages ? kv_len : (budget_pages - 1) * 16 + (kv_len - (pages - 1) * 16);
}

struct QuestDecodeArgs {
  QuestCache cache;
  const __nv_bfloat16* q = nullptr;     // [batch][num_q_heads][head_dim]
  const int32_t* selected = nullptr;    // [batch][rows][budget_pages]
  const int32_t* selected_count = nullptr;
  bool per_query_head = false;
  int budget_pages = 0;
  float scale = 0;
  int num_splits = 1;                   // selected pages are cut into this many splits
  float* partial_o = nullptr;           // [batch][num_q_heads][num_splits][head_dim] when num_splits > 1
  float* partial_lse = nullptr;         // [batch][num_q_heads][num_splits]
  __nv_bfloat16* out = nullptr;         // [batch][num_q_heads][head_dim]
  float* lse = nullptr;                 // optional [batch][num_q_heads]
};

// REQUIRES for all: head_dim == 128, num_q_heads % num_kv_heads == 0, group <= 8.
void quest_update_metadata(const QuestMetadataArgs& args, cudaStream_t stream);
void quest_estimate(const QuestEstimateArgs& args, cudaStream_t stream);
void quest_topk(const QuestTopkArgs& args, cudaStream_t stream);
void quest_estimate_topk(const QuestSelectArgs& args, cudaStream_t stream);  // fused; throws above 8K pages
void quest_sparse_decode(const QuestDecodeArgs& args, cudaStream_t stream);
void quest_page_lists(const QuestPageListArgs& args, cudaStream_t stream);

// Splits for quest_sparse_decode so that about two blocks per SM exist.
int quest_decode_splits(int batch, int rows, int budget_pages, int num_sms);

}  // namespace servesim::kernels::sparse
