// CPU model of prefill variant hopper_wgmma's schedule (prefill_hopper_plan.h), for the
// tests: the same tiles, per-consumer key-tile counts, masks, page copies into two
// shared-memory stages (which start out NaN, as uninitialised shared memory may be),
// stale rows, the V zeroing past kv_end and P V over every key of a computed tile
// (0 * NaN = NaN, as on the tensor cores) - in float, without the fragment layouts. Its
// output equals prefill_ref exactly when the plan covers every visible key once and lets
// no garbage in.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/prefill/prefill_ref.h"

namespace servesim::kernels {

struct HopperScheduleStats {
  int64_t blocks = 0;            // (tile, head) blocks
  int64_t key_tiles = 0;         // key tiles streamed by producers
  int64_t computed_tiles = 0;    // (consumer, key tile) pairs with wgmma work
  int64_t masked_tiles = 0;      // of those, masked
  int64_t page_boxes = 0;        // TMA boxes issued (K and V)
  int64_t tx_bytes = 0;          // bytes the mbarriers expected (K and V)
  int64_t zeroed_v_rows = 0;     // V rows zeroed past kv_end
};

// Throws std::logic_error when the plan would read a page-table entry the sequence does
// not own, or when a tile's expected bytes differ from the boxes issued.
void prefill_hopper_schedule_ref(const PrefillRefInput& in, std::vector<float>* out, std::vector<float>* lse,
                                 HopperScheduleStats* stats = nullptr);

}  // namespace servesim::kernels
