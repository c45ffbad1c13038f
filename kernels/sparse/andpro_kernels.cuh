// AnDPro GPU kernels (sm_90, bf16 storage, fp32 accumulation, GQA, head_dim 128, page
// size 16). Algorithm and CPU reference: andpro_ref.h. Runs once per layer when a
// prompt's prefill completes, on that sequence's paged cache:
//   andpro_score    s_i = sum_{h in group} sum_{t in W} exp(scale q^t.k_i - LSE_t) (y^t . v_i)
//                   for the n - w candidates; q^t, y^t (the prefill output) and LSE_t of the
//                   window rows are reused from the prefill, so scoring costs two
//                   tensor-core GEMMs of (group * w) x 128 x (n - w) per KV head
//   andpro_merge    block scores: sums of C consecutive token scores
//   andpro_select   top floor(budget / C) blocks per KV head (block 0 forced optionally)
//   andpro_compact  copies each head's kept tokens (kept blocks, then the remainder and
//                   the window) into fresh pages; every head keeps the same count, so one
//                   destination page table serves all heads.
// allocation: layer_topk (the paper's; andpro_ref.h) replaces the last two with
//   andpro_select_layer   one top-k of num_kv_heads * kept_blocks blocks over the whole
//                         layer's block scores (one thread block; block 0 of every head
//                         forced optionally); kept = ascending flat ids g * nblocks + b
//   andpro_compact_ragged copies head g's kept tokens into its ragged segment of 16-token
//                         slices (andpro_ref.h, "Ragged layout"); dst_page_table holds
//                         andpro_ragged_pages_bound(n, params) pages, the selection decides
//                         how many are used.
// If a prefill kernel did not produce LSE, run it (or a chunked prefill of the w window
// rows against the cache) with LSE output first; nothing here recomputes attention.
// Launchers enqueue on `stream`, never synchronise, and throw on launch errors.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace servesim::kernels::sparse {

struct AndproArgs {
  // The sequence's paged cache (layout.h) and its page table.
  const __nv_bfloat16* k_cache = nullptr;
  const __nv_bfloat16* v_cache = nullptr;
  const int32_t* page_table = nullptr;  // logical page -> physical page
  int num_q_heads = 32, num_kv_heads = 8, head_dim = 128;
  int n = 0;                            // prompt tokens (all in the cache)
  // Parameters (andpro_ref.h AndproParams): window in {16, 32, 64}, block C dividing 64.
  int window = 32;
  int block = 16;
  int kept_blocks = 0;                  // andpro_kept_blocks(n, params)
  bool keep_first_block = true;
  float scale = 0;
  // The prefill's window rows (positions n - w .. n - 1).
  const __nv_bfloat16* q_win = nullptr;  // [w][num_q_heads][128]
  const __nv_bfloat16* y_win = nullptr;  // [w][num_q_heads][128] attention outputs
  const float* lse_win = nullptr;        // [w][num_q_heads] natural log
  // Outputs / scratch.
  float* token_scores = nullptr;  // [num_kv_heads][n - w]
  float* block_scores = nullptr;  // [num_kv_heads][floor((n - w) / C)]
  int32_t* kept = nullptr;        // equal: [num_kv_heads][kept_blocks] ascending block ids;
                                  // layer_topk: [num_kv_heads * kept_blocks] ascending flat ids
  // Compaction destination: andpro_kept_tokens(n, params) tokens per head.
  const int32_t* dst_page_table = nullptr;
  __nv_bfloat16* dst_k = nullptr;
  __nv_bfloat16* dst_v = nullptr;
};

// REQUIRES for all: head_dim == 128, GQA, window % 16 == 0, 64 % block == 0, n > window.
void andpro_score(const AndproArgs& args, cudaStream_t stream);
void andpro_merge(const AndproArgs& args, cudaStream_t stream);
void andpro_select(const AndproArgs& args, cudaStream_t stream);
void andpro_compact(const AndproArgs& args, cudaStream_t stream);
void andpro_select_layer(const AndproArgs& args, cudaStream_t stream);
void andpro_compact_ragged(const AndproArgs& args, cudaStream_t stream);

}  // namespace servesim::kernels::sparse
