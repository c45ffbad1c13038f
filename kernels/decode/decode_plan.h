// Work decomposition of split-KV paged decode (flash-decoding), computed on the host
// before launch (like FlashInfer's plan/run split; not timed by the bench).
//
// Each sequence's context is cut into splits of `split_tokens` tokens (a multiple of the
// kernel's 64-token tile; splits start page-aligned). A *work item* is one (sequence,
// split); the decode kernel runs one thread block per (work item, KV head) and the merge
// kernel combines the splits of every sequence that has more than one.
// Ragged batches are balanced by construction: long contexts simply get more splits.
#pragma once

#include <cstdint>
#include <vector>

namespace servesim::kernels {

inline constexpr int kDecodeTileTokens = 64;  // keys per pipeline stage of the decode kernel

struct DecodePlan {
  int split_tokens = 0;                  // tokens per split, multiple of kDecodeTileTokens
  std::vector<int32_t> work_seq;         // [num_work] sequence of the work item
  std::vector<int32_t> work_split;       // [num_work] split index within that sequence
  std::vector<int32_t> seq_work_indptr;  // [batch + 1] work items of sequence b are contiguous
  int num_work() const { return static_cast<int>(work_seq.size()); }
  int splits_of(int seq) const { return seq_work_indptr[seq + 1] - seq_work_indptr[seq]; }
  bool needs_merge() const;              // some sequence has more than one split
};

// Chooses the smallest tile-multiple split such that all blocks fit in one wave of
// `blocks_per_sm` resident blocks per SM (3 for the head_dim-128 kernel: 74 KB of shared
// memory each): the GPU is then filled (bytes in flight on every SM) and no block is
// longer than it must be, whatever the mix of context lengths. A batch that fills the GPU
// on its own is not split. split_tokens_override > 0 (rounded up to a tile) forces a
// split size, as the checks do to exercise the merge. A sequence of length 0 gets one
// (empty) work item whose output is zero.
DecodePlan plan_decode(const std::vector<int32_t>& kv_lens, int num_kv_heads, int num_sms,
                       int split_tokens_override = 0, int blocks_per_sm = 3);

}  // namespace servesim::kernels
