// MInference GPU kernels (sm_90, bf16 storage, fp32 accumulation, tensor cores through
// WMMA, GQA, head_dim 128). Algorithm and CPU reference: minference_ref.h; buffer layout:
// minference_plan.h. One prompt (batch 1, no cached prefix): contiguous Q
// [n][num_q_heads][128]; K and V already appended to the paged cache (layout.h), reached
// through the sequence's page table, as the dense prefill reads them.
//
// A prefill layer runs, each step a separate launch so the bench can time it:
//   minf_vs_estimate   VS heads: last-64-query softmax -> vertical [n] and slash [n] sums
//   minf_vs_index      VS heads: top-k lines (forced sink columns / local diagonals), then
//                      Algorithm 4: merged ranges + columns per 64-row block
//   minf_bs_estimate   BS heads: 64-token mean pooling and block logits (j <= i)
//   minf_bs_index      BS heads: top-k blocks per row block -> ranges
//   minf_attention     all heads, one launch: per-head pattern (A-shape keys derived from
//                      (sink, window), VS/BS keys from the index), flash attention with an
//                      online softmax over 64-key tiles; writes O and LSE.
// Block-sparse heads select on logits: the per-row softmax of the paper is monotone, so
// the kept blocks are identical and exp underflow cannot create ties.
// Launchers enqueue on `stream`, never synchronise, and throw on launch errors.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/sparse/minference_plan.h"

namespace servesim::kernels::sparse {

struct MInfPrompt {
  const __nv_bfloat16* q = nullptr;  // [n][num_q_heads][128]
  const __nv_bfloat16* k_cache = nullptr;  // [num_pages][num_kv_heads][16][128]
  const __nv_bfloat16* v_cache = nullptr;
  const int32_t* page_table = nullptr;      // [ceil(n / 16)] logical -> physical page
  int n = 0;
  int num_q_heads = 32, num_kv_heads = 8, head_dim = 128;
  float scale = 0;
};

// Device buffers sized from an MInfPlan (see minf_buffer_sizes in the family driver).
struct MInfBuffers {
  const MInfHeadDesc* heads = nullptr;  // [num_q_heads]
  const int32_t* vs_heads = nullptr;    // [num_vs]
  const int32_t* bs_heads = nullptr;    // [num_bs]
  int num_vs = 0, num_bs = 0;
  int nb = 0, num_chunks = 0;
  int max_kv = 0, max_ks = 0, max_kb = 0;
  // vertical-slash estimate
  float* vs_ml = nullptr;        // [num_vs][num_chunks][64][2] partial (max, sum) per row
  float* vs_lse = nullptr;       // [num_vs][64] row LSE of the last queries, log2 domain
  float* vertical = nullptr;     // [num_vs][n]
  float* slash = nullptr;        // [num_vs][n]
  int32_t* lines_v = nullptr;    // [num_vs][max_kv] ascending columns
  int32_t* lines_s = nullptr;    // [num_vs][max_ks] ascending offsets
  // block-sparse estimate
  float* q_pool = nullptr;       // [num_bs][nb][128]
  float* k_pool = nullptr;       // [num_kv_heads][nb][128]
  float* bs_logits = nullptr;    // [num_bs][nb][nb]
  int32_t* bs_blocks = nullptr;  // [num_bs][nb][max_kb]
  // the index
  int32_t* range_count = nullptr;  // [num_q_heads][nb]
  int2* ranges = nullptr;          // [plan.total_ranges] (start, end) key ranges
  int32_t* col_count = nullptr;    // [num_q_heads][nb]
  int32_t* cols = nullptr;         // [plan.total_cols]
};

struct MInfAttentionArgs {
  MInfPrompt prompt;
  MInfBuffers index;
  __nv_bfloat16* out = nullptr;  // [n][num_q_heads][128]
  float* lse = nullptr;          // optional [n][num_q_heads], natural log
};

// REQUIRES for all: head_dim == 128, num_q_heads % num_kv_heads == 0.
void minf_vs_estimate(const MInfPrompt& prompt, const MInfBuffers& buf, cudaStream_t stream);
void minf_vs_index(const MInfPrompt& prompt, const MInfBuffers& buf, cudaStream_t stream);
void minf_bs_estimate(const MInfPrompt& prompt, const MInfBuffers& buf, cudaStream_t stream);
void minf_bs_index(const MInfPrompt& prompt, const MInfBuffers& buf, cudaStream_t stream);
void minf_attention(const MInfAttentionArgs& args, cudaStream_t stream);
// The argument check of both minf_attention variants: std::invalid_argument
// "<name>: need head_dim 128, GQA heads and n >= 1" unless they hold.
void check_minf_attention_args(const MInfAttentionArgs& args, const char* name);
// Variant `mma` of minf_attention (same contract): mma.sync / ldmatrix flash attention of
// attention_warp.cuh with a gathered-key cp.async loader, two stages (minference_attention_mma.cu).
void minf_attention_mma(const MInfAttentionArgs& args, cudaStream_t stream);

}  // namespace servesim::kernels::sparse
