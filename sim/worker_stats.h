// WorkerStats: per-worker counters reported in workers.csv.
#pragma once
#include <cstdint>
#include <string>

#include "sim/core/time.h"

namespace servesim {

struct WorkerStats {
  std::uint64_t iterations = 0;
  Time busy_ns = 0;
  std::int64_t prefill_tokens = 0;     // extend tokens computed (recomputation included)
  std::int64_t decode_tokens = 0;
  std::int64_t prompt_tokens = 0;      // prompt tokens of requests at first admission
  std::int64_t cached_tokens = 0;      // of those, served from the prefix cache
  std::int64_t preemptions = 0;
  std::int64_t admitted = 0;
  std::int64_t finished = 0;
  std::int64_t peak_kv_pages = 0;
  std::int64_t kv_capacity_pages = 0;
  std::int64_t peak_running = 0;
  std::int64_t peak_waiting = 0;
  std::int64_t kv_evicted_tokens = 0;  // context tokens dropped by KV eviction after prefills
  std::int64_t handoffs = 0;           // PD: requests prefilled here and handed to another worker
  std::int64_t received = 0;           // PD: requests whose KV arrived here for decoding
  // Set by the wiring (configs/run_builder.cc), not by the engine.
  std::string pool = "default";        // cluster.pools name ("default": cluster.workers)
  std::string role = "mixed";          // prefill | decode | mixed
};

}  // namespace servesim
