// WorkerStats: per-worker counters reported in workers.csv.
#pragma once
#include <cstdint>
#include <string>

#include "sim/core/time.h"
#include "sim/kv_tier.h"

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
  // Admissions to an empty worker that computed a cached prefix again because its pages,
  // rounded up per block, did not fit beside the prompt (KvManager::admit; a run warning).
  std::int64_t uncached_admissions = 0;
  std::int64_t uncached_admission_tokens = 0;
  // Tiered KV cache (sim/kv_tier.h; zeros without tiers).
  KvTierStats host, ssd;
  // Cluster KV store (sim/kv_store.h): this worker's hits (hit_tokens at first
  // admissions, loaded_tokens at all) and its loads' network time.
  KvTierStats store;
  Time store_load_ns = 0;  // admission to KV arrival, summed over store loads
  Time kv_load_ns = 0;   // load time of lower-tier hits, summed over requests
  Time kv_stall_ns = 0;  // iteration time added by loads (beyond the cost model's compute time)
  std::int64_t handoffs = 0;           // PD: requests prefilled here and handed to another worker
  std::int64_t received = 0;           // PD: requests whose KV arrived here for decoding
  // Set by the wiring (configs/run_builder.cc), not by the engine.
  std::string pool = "default";        // cluster.pools name ("default": cluster.workers)
  std::string role = "mixed";          // prefill | decode | mixed
};

}  // namespace servesim
