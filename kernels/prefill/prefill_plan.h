// Work decomposition of dense causal prefill (full prompts, chunks over a cached
// prefix, varlen batches), computed on the host before launch.
//
// A *tile* is rows_per_tile (64 or 128) consecutive query rows of one sequence's chunk;
// the prefill kernel runs one thread block of 4 warps per (tile, query head), each warp
// owning rows_per_tile / 4 rows. Causal tiles near the end of a long context
// visit far more keys than early ones, so tiles are ordered by descending key count
// (longest first): the GPU then starts the long blocks first and fills the tail with
// short ones, the static answer to the load imbalance that Stream-K attacks dynamically
// (seed 004).
#pragma once

#include <cstdint>
#include <vector>

namespace servesim::kernels {

inline constexpr int kPrefillTileQ = 64;  // default query rows per block: 4 warps x 16 rows
inline constexpr int kPrefillTileK = 64;  // keys per pipeline stage

struct PrefillPlan {
  std::vector<int32_t> tile_seq;      // [num_tiles] sequence of the tile
  std::vector<int32_t> tile_q_begin;  // [num_tiles] first row within that sequence's chunk
  std::vector<int64_t> tile_keys;     // [num_tiles] keys the tile visits (its cost)
  int rows_per_tile = kPrefillTileQ;
  int num_tiles() const { return static_cast<int>(tile_seq.size()); }
};

// q_indptr: [batch + 1] chunk rows; kv_lens: [batch] prefix + chunk tokens.
// REQUIRES: 0 <= q_len[b] <= kv_lens[b]; rows_per_tile in {64, 128}.
PrefillPlan plan_prefill(const std::vector<int32_t>& q_indptr, const std::vector<int32_t>& kv_lens,
                         int rows_per_tile = kPrefillTileQ);

// 128-row tiles halve shared-memory traffic per mma but halve the number of blocks; use
// them when there are still at least two waves of blocks (2 resident per SM) with them.
int choose_prefill_rows_per_tile(const std::vector<int32_t>& q_indptr, int num_q_heads, int num_sms);

// Useful FLOPs of causal prefill (QK^T and PV, 2 per multiply-add, no masked work):
// sum over rows of 4 * head_dim * visible_keys * num_q_heads.
double prefill_flops(const std::vector<int32_t>& q_indptr, const std::vector<int32_t>& kv_lens, int num_q_heads,
                     int head_dim);

}  // namespace servesim::kernels
