// Host-side layout of the MInference GPU index buffers (minference_kernels.cuh),
// planned once per (prompt length, per-head patterns) before any launch.
//
// Every query head gets a descriptor. Vertical-slash heads own `range_cap` = min(k_s, n)
// merged ranges and `col_cap` = min(k_v, n) columns per 64-row block (merging can only
// reduce the range count; columns never exceed the vertical lines); block-sparse heads
// own min(k_b, nb) ranges (one per kept block) and no columns; A-shape heads own
// nothing (their keys follow from (sink, window)). Heads of the two dynamic patterns are
// numbered by `slot` within their pattern for the estimate buffers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sparse/minference_ref.h"

namespace servesim::kernels::sparse {

struct MInfHeadDesc {
  int32_t type = 0;       // MInfPattern
  int32_t a = 0, b = 0;   // pattern parameters (minference_ref.h)
  int32_t slot = -1;      // index among the VS heads or the BS heads; -1 for A-shape
  int32_t range_cap = 0;  // ranges per row block
  int32_t col_cap = 0;    // columns per row block
  int64_t range_base = 0; // first range of row block 0 in the ranges array
  int64_t col_base = 0;   // first column of row block 0 in the columns array
};

struct MInfPlan {
  int n = 0;                 // prompt tokens
  int nb = 0;                // 64-token blocks, ceil(n / 64)
  int num_chunks = 0;        // key chunks of the vertical-slash estimate
  std::vector<MInfHeadDesc> heads;     // [num_q_heads]
  std::vector<int32_t> vs_heads;       // query heads with the vertical-slash pattern
  std::vector<int32_t> bs_heads;       // query heads with the block-sparse pattern
  int max_kv = 0, max_ks = 0, max_kb = 0;  // line / block capacities per VS / BS slot
  int64_t total_ranges = 0, total_cols = 0;
};

inline constexpr int kMInfEstimateChunk = 1024;  // keys per block of the VS estimate

// REQUIRES: n >= 1; every pattern's parameters >= 0.
MInfPlan plan_minference(std::span<const MInfHeadPattern> patterns, int n);

}  // namespace servesim::kernels::sparse
