// AnDPro (Geng et al., "Accurate KV Cache Eviction via Anchor Direction Projection for
// Efficient LLM Inference"; seed 003): CPU reference of KV eviction at the end of a
// prefill.
//
// For a prompt of n tokens, the observation window W is the last w prompt tokens
// (w in {16, 32, 64}); the candidates are the L = n - w tokens before it. For window
// query t and candidate i,
//     a_i^t = softmax_{j <= t}(scale * q^t . k_j)_i = exp(scale * q^t . k_i - LSE_t),
//     y^t   = sum_{j <= t} a_j^t v_j               (the prefill's own output row t),
// and the score (Section 3.4, b = 0, anchor direction theta = y^t) is
//     s_i = sum_{t in W} a_i^t * (y^t . v_i).
// Because a_i^t and y^t are exactly what the causal prefill already computed for the
// window rows (output O_t and LSE_t), scoring reuses them: one dot q.k and one dot y.v per
// (t, i) instead of a second attention pass.
//
// GQA: the cache is per KV head, so the score of a KV head sums s_i over its query heads.
// Block merging (Appendix B.1): tokens are merged into blocks of C consecutive tokens;
// the block score is the sum of its tokens' scores (the merged value is the a-weighted
// sum of values, so <y, v_hat> is linear). Blocks tile [0, floor(L / C) * C); the
// remainder tokens before the window are kept with the window (the "tail").
//
// Allocation (which blocks each KV head keeps; `allocation:` of kv: andpro):
//  * equal: each KV head keeps its top floor(budget / C) blocks (topk_indices contract;
//    optionally block 0 is forced, the paper keeps the first token), so every head keeps
//    the same number of tokens and the compacted cache shares one page table across
//    heads (andpro_select_blocks_ref, andpro_compact_ref).
//  * layer_topk (the paper's Algorithm 1, line 9: TopK(s, k = |H| x B) over the scores of
//    all heads of the layer, following Ada-KV): one top-k of G * floor(budget / C) blocks
//    over the concatenated block scores of the layer's G KV heads, flat index
//    g * nblocks + b (andpro_select_layer_ref). Same total as the equal split, ragged per
//    head: a head whose blocks score highest may take all of them (at most nblocks), and
//    a head may keep no scored block at all (it still keeps the tail). Tie-break: the
//    topk_indices contract on the flat index, so among equal scores the lower KV head
//    wins, then the earlier block. keep_first_block forces block 0 of every head (counted
//    in the total). The result, ascending flat indices, is grouped by head.
//    Ragged layout (andpro_ragged(), andpro_compact_ragged_ref): head g's kept tokens
//    (its blocks in position order, then the tail) are a segment of
//    ceil(len_g / 16) 16-token *slices*; slices are numbered head after head
//    (slice[g] = sum over h < g of ceil(len_h / 16)), and slice s is KV-head row
//    s % G of destination page dst_page_table[s / G] (the ordinary paged layout, so a
//    page still holds 16 x G token rows). Pages: ceil(total slices / G); each head pads
//    its last slice (the per-head page rounding). A decode over this cache reads head
//    g's len_g tokens through its slices (decode work per (sequence, KV head, split) as
//    in kernels/decode; cost follows the sum of the lengths, docs/sparse_kernels.md).
//
// Compaction copies the kept tokens of each head, in ascending position order, into
// fresh pages (out of place: the source pages are freed afterwards).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sparse/sparse_ref_util.h"

namespace servesim::kernels::sparse {

struct AndproParams {
  int window = 32;           // observation window w: the last w prompt tokens (16, 32, 64)
  int block = 16;            // merge block C (tokens); 16 keeps compaction page aligned
  int64_t budget = 2048;     // tokens kept per KV head outside the window and remainder
  bool keep_first_block = true;  // force block 0 (attention sink) into the kept set
};

// Candidate tokens whose scores are merged into blocks: floor((n - w) / C) * C.
inline int64_t andpro_block_region(int64_t n, const AndproParams& p) {
  const int64_t l = n > p.window ? n - p.window : 0;
  return l / p.block * p.block;
}
inline int64_t andpro_kept_blocks(int64_t n, const AndproParams& p) {
  const int64_t blocks = andpro_block_region(n, p) / p.block;
  return std::min<int64_t>(blocks, p.budget / p.block);
}
// Tokens each KV head keeps (same for every head).
inline int64_t andpro_kept_tokens(int64_t n, const AndproParams& p) {
  return andpro_kept_blocks(n, p) * p.block + (n - andpro_block_region(n, p));
}

// Token scores from the prefill's window rows: q_win, y_win [w][num_q_heads][d] (rows
// for positions n - w .. n - 1), lse_win [w][num_q_heads]. scores is
// [num_kv_heads][n - w].
void andpro_token_scores_ref(const float* q_win, const float* y_win, const float* lse_win,
                             const KvCacheF32& kv, std::span<const int32_t> page_table,
                             int64_t n, int window, int num_q_heads, float scale,
                             float* scores);

// The formula evaluated naively (softmax and y^t recomputed from scratch) from the full
// contiguous Q, K, V of the prompt ([n][heads][d]); scores [num_kv_heads][n - w].
void andpro_naive_scores_ref(const float* q, const float* k, const float* v, int64_t n,
                             int window, int num_q_heads, int num_kv_heads, int head_dim,
                             float scale, float* scores);

// Block scores [num_kv_heads][nblocks] from token scores [num_kv_heads][n - w].
std::vector<float> andpro_merge_blocks_ref(std::span<const float> token_scores, int num_kv_heads,
                                           int64_t n, const AndproParams& p);

// Kept block ids per KV head ([num_kv_heads][kept_blocks], ascending).
std::vector<int32_t> andpro_select_blocks_ref(std::span<const float> block_scores,
                                              int num_kv_heads, int64_t n,
                                              const AndproParams& p);

// Source position of compacted token j of a head, given its kept block ids.
inline int64_t andpro_source_position(std::span<const int32_t> kept_blocks, int64_t j,
                                      int64_t n, const AndproParams& p) {
  const int64_t kb = static_cast<int64_t>(kept_blocks.size()) * p.block;
  return j < kb ? int64_t{kept_blocks[j / p.block]} * p.block + j % p.block
                : andpro_block_region(n, p) + (j - kb);
}

// Copies each head's kept tokens into dst (paged, same layout, dst_page_table of
// ceil(kept / 16) pages). dst_k / dst_v are full arrays of the destination page pool.
void andpro_compact_ref(const KvCacheF32& src, std::span<const int32_t> src_page_table,
                        std::span<const int32_t> kept_blocks, int64_t n, const AndproParams& p,
                        std::span<const int32_t> dst_page_table, float* dst_k, float* dst_v);

// ---- layer_topk allocation (ragged per-head lengths; header comment) ----

// Blocks kept by the whole layer: num_kv_heads * andpro_kept_blocks(n, p).
inline int64_t andpro_layer_kept_blocks(int64_t n, const AndproParams& p, int num_kv_heads) {
  return int64_t{num_kv_heads} * andpro_kept_blocks(n, p);
}

// Kept flat block ids g * nblocks + b, ascending (andpro_layer_kept_blocks of them).
std::vector<int32_t> andpro_select_layer_ref(std::span<const float> block_scores, int num_kv_heads,
                                             int64_t n, const AndproParams& p);

// The ragged layout of a layer_topk selection.
struct AndproRagged {
  std::vector<int64_t> begin;   // [G + 1]: head g's flat ids are kept[begin[g] .. begin[g + 1])
  std::vector<int64_t> tokens;  // [G]: tokens head g keeps (its blocks x C + the tail)
  std::vector<int64_t> slice;   // [G + 1]: first 16-token slice of head g; slice[G] = total
  int64_t pages = 0;            // ceil(slice[G] / G)
};
AndproRagged andpro_ragged(std::span<const int32_t> kept_flat, int num_kv_heads, int64_t n,
                           const AndproParams& p);

// Pages to allocate before the selection is known (the worst case over allocations):
// ceil((the same average per head + the largest extra per-head rounding) / 16), as
// costmodel/attention_method.h AndproParams::kept_tokens() (layer_topk) counts it.
int64_t andpro_ragged_pages_bound(int64_t n, const AndproParams& p);

// Source position of compacted token j of head g (j < tokens[g]).
inline int64_t andpro_ragged_source_position(std::span<const int32_t> kept_flat, const AndproRagged& r, int g,
                                             int64_t j, int64_t n, const AndproParams& p) {
  const int64_t nblocks = andpro_block_region(n, p) / p.block;
  const int64_t kb = (r.begin[g + 1] - r.begin[g]) * p.block;
  return j < kb ? (int64_t{kept_flat[r.begin[g] + j / p.block]} - g * nblocks) * p.block + j % p.block
                : andpro_block_region(n, p) + (j - kb);
}

// Copies each head's kept tokens into its ragged segment (layout above); dst pages not
// covered by a head's segment, and the padding after it, are left untouched.
void andpro_compact_ragged_ref(const KvCacheF32& src, std::span<const int32_t> src_page_table,
                               std::span<const int32_t> kept_flat, int64_t n, const AndproParams& p,
                               std::span<const int32_t> dst_page_table, float* dst_k, float* dst_v);

}  // namespace servesim::kernels::sparse
