// MInference 1.0 (Jiang et al., "MInference 1.0: Accelerating Pre-filling for
// Long-Context LLMs via Dynamic Sparse Attention", NeurIPS 2024; seed 001): CPU reference.
//
// A prompt of n tokens (Q [n][num_q_heads][d], K/V [n][num_kv_heads][d], causal) is
// attended with one sparse pattern per query head, chosen offline from the paper's
// search space (Table 7):
//  * A-shape (sink, window): key c is visible from row r iff c <= r and
//    (c < sink or r - c < window). Static: no estimate, no index.
//  * Vertical-slash (k_v, k_s) (Algorithm 2): the last 64 queries' causal softmax
//    A_hat [64][n] estimates the pattern; vertical score of column c = sum_r A_hat[r][c],
//    slash score of offset o = sum_r A_hat[r][r - o]; the top k_v columns and top k_s
//    offsets are kept. Following the public implementation, the first 30 columns and the
//    100 nearest diagonals are forced in (scored +inf; they still count towards k).
//    The index (Algorithm 4) works per 64-row block [q0, q1): each slash offset o covers
//    the key range [q0 - o, q1 - o) clipped at 0; overlapping ranges are merged; vertical
//    columns < q1 not inside a range become a column list. Every row of the block sees
//    exactly the union of its block's ranges and columns, intersected with c <= r.
//  * Block-sparse (k_b) (Algorithm 3): Q and K are mean-pooled over 64-token blocks,
//    A_hat = causal softmax(Q_hat K_hat^T * scale) over blocks; each row block keeps its
//    top k_b key blocks (j <= i). Rows see those blocks intersected with c <= r. The
//    softmax is monotone within a row, so selection runs on the logits (same blocks, and
//    no ties from exp underflow).
// Scores and top-k follow topk_indices (sparse_ref_util.h): ties to the smaller index.
//
// The sparse attention iterates a row block's ranges (in 64-key steps) and then its
// columns (in groups of 64) with an online softmax, exactly as the GPU kernel does.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace servesim::kernels::sparse {

inline constexpr int kMInfBlock = 64;        // row/key block of the index and kernels
inline constexpr int kMInfLastQ = 64;        // queries used by the vertical-slash estimate
inline constexpr int kMInfForcedColumns = 30;
inline constexpr int kMInfForcedSlashes = 100;

enum class MInfPattern : int32_t { kAShape = 0, kVerticalSlash = 1, kBlockSparse = 2 };

// One head's pattern. A-shape: a = sink tokens, b = window tokens. Vertical-slash:
// a = vertical lines k_v, b = slash lines k_s. Block-sparse: a = blocks per row k_b.
struct MInfHeadPattern {
  MInfPattern type = MInfPattern::kVerticalSlash;
  int32_t a = 0;
  int32_t b = 0;
};

// The paper's kernel-aware search space (Table 7).
inline constexpr MInfHeadPattern kMInfAShape{MInfPattern::kAShape, 1024, 4096};
inline constexpr std::array<MInfHeadPattern, 4> kMInfVerticalSlash{{
    {MInfPattern::kVerticalSlash, 30, 2048},
    {MInfPattern::kVerticalSlash, 100, 1800},
    {MInfPattern::kVerticalSlash, 500, 1500},
    {MInfPattern::kVerticalSlash, 3000, 200},
}};
inline constexpr MInfHeadPattern kMInfBlockSparse{MInfPattern::kBlockSparse, 100, 0};

inline bool ashape_visible(int64_t sink, int64_t window, int64_t row, int64_t col) {
  return col <= row && (col < sink || row - col < window);
}

// Keys of one 64-row block: merged half-open ranges (ascending, disjoint, non-adjacent
// merges allowed) and single columns (ascending, outside every range).
struct RowBlockIndex {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<int64_t> columns;
};

// The sparse structure of one head: `rows` has one entry per row block for
// vertical-slash and block-sparse heads and is empty for A-shape heads.
struct MInfHeadIndex {
  MInfHeadPattern pattern;
  std::vector<RowBlockIndex> rows;
};

// Vertical-slash estimate of query head h: vertical [n] and slash [n] (offset o = r - c).
void vs_estimate_ref(const float* q, const float* k, int64_t n, int num_q_heads,
                     int num_kv_heads, int head_dim, float scale, int head, float* vertical,
                     float* slash);

// Top k_v columns and k_s offsets (ascending), after forcing the first forced_columns
// columns and forced_slashes offsets to +inf.
struct VsLines {
  std::vector<int32_t> verticals;
  std::vector<int32_t> slashes;
};
VsLines vs_select_lines_ref(std::span<const float> vertical, std::span<const float> slash,
                            int k_v, int k_s, int forced_columns = kMInfForcedColumns,
                            int forced_slashes = kMInfForcedSlashes);

// Algorithm 4: merges sorted lines into per-row-block ranges and columns.
std::vector<RowBlockIndex> vs_build_index_ref(const VsLines& lines, int64_t n);

// Brute force: the sorted set of keys row block `row_block` may see under the lines.
std::vector<int64_t> vs_bruteforce_keys(const VsLines& lines, int64_t n, int64_t row_block);

// Block-sparse estimate of query head h: logits [nb][nb] = scale * Q_hat_i . K_hat_j for
// j <= i and -inf above the diagonal, nb = ceil(n / 64).
void bs_estimate_ref(const float* q, const float* k, int64_t n, int num_q_heads,
                     int num_kv_heads, int head_dim, float scale, int head, float* logits);

// Top k_b key blocks (j <= i) of each row block turned into ranges.
std::vector<RowBlockIndex> bs_build_index_ref(std::span<const float> logits, int64_t n, int k_b);

// Full pipeline for one head: estimate + top-k + index (A-shape: empty rows).
MInfHeadIndex minference_head_index_ref(const float* q, const float* k, int64_t n,
                                        int num_q_heads, int num_kv_heads, int head_dim,
                                        float scale, int head, MInfHeadPattern pattern);

// Sparse prefill attention of all heads (heads.size() == num_q_heads), output
// [n][num_q_heads][d] and optional LSE [n][num_q_heads].
void minference_attention_ref(const float* q, const float* k, const float* v, int64_t n,
                              int num_q_heads, int num_kv_heads, int head_dim, float scale,
                              std::span<const MInfHeadIndex> heads, float* out,
                              float* lse = nullptr);

// Whether row r of a head may see key c (the mask the sparse attention implements).
bool minference_visible(const MInfHeadIndex& head, int64_t row, int64_t col);

}  // namespace servesim::kernels::sparse
