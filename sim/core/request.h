// RequestSpec: one request as the input describes it (trace row or generator
// output). It is immutable once handed to the engine. The true output length is
// known to the simulator; policies may read it only if they are labelled oracle.
//
// Contract for sources: ids are unique within a run; independent requests
// (no `parents`) come in non-decreasing `arrival` order. A request with parents
// is released when all parents have finished, plus `think_time`; its `arrival`
// field is then ignored and its arrival is the release time. A request must
// come from its source after all of its parents. If a parent is rejected or
// unfinished, its dependents are reported with that reason.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/time.h"

namespace servesim {

using RequestId = std::uint64_t;
using ClientId = std::uint32_t;   // dense index into the run's client table
using WorkerId = std::uint32_t;   // dense index 0..workers-1
using BlockHash = std::uint64_t;  // a prefix block id (content hash) from the trace

struct RequestSpec {
  RequestId id = 0;
  ClientId client = 0;
  Time arrival = 0;
  std::int64_t prompt_tokens = 0;   // >= 1
  std::int64_t output_tokens = 0;   // >= 1 (true value; oracle-only for policies)
  // Prefix identity: block i covers prompt tokens [i*block_size, (i+1)*block_size);
  // the last block may be partial. Empty when the trace has no prefix info.
  std::vector<BlockHash> prefix_blocks;
  std::int32_t prefix_block_size = 0;  // tokens per prefix block (e.g. 512 for Mooncake)
  // Dependencies (multi-turn sessions, agent DAGs). Empty for independent requests.
  std::vector<RequestId> parents;
  Time think_time = 0;                 // delay after the last parent finishes
  // How many later requests list this one in `parents` (0 = none). Sources
  // that emit dependencies must set it, so the engine remembers this request's
  // finish time exactly until every dependent has been released.
  std::int32_t dependents = 0;
  std::uint64_t session = 0;           // 0 = no session
  std::int32_t turn = 0;               // turn index within a session (0-based)
  // Optional trace attributes usable as (honest) ranking features.
  std::int32_t category = 0;           // e.g. BurstGPT model/log type, template id
};

}  // namespace servesim
