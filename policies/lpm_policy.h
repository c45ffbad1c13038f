// LpmPolicy: longest prefix match first (SGLang's cache-aware scheduling;
// Zheng et al., "SGLang: Efficient Execution of Structured Language Model
// Programs", NeurIPS 2024; python/sglang/srt/managers/schedule_policy.py).
//
// Every scheduling step re-reads each waiting request's cached prefix on this
// worker (the cache changes between steps), sorts longest first (ties: queue
// order, preempted requests first), and admits in that order until a request
// does not fit (SGLang stops at the first request that does not fit).
//
// Options (SGLang's refinements):
//   in_queue_dedup (false): when several waiting requests would compute the
//     same not-yet-cached block under the same cached prefix, only the first
//     in LPM order is considered this step; the others wait, so one request
//     "seeds" the shared prefix and the rest hit it once its prefill is done
//     (SGLang's in-batch prefix caching check, at block granularity instead
//     of its 32-token thresholds). The first of each group is always
//     proposed, so an empty worker still admits (work conservation).
//   fcfs_above (0 = never): with more waiting requests than this, schedule in
//     FCFS order this step (SGLang falls back above 128 to bound sort cost).
#pragma once
#include <unordered_set>

#include "configs/yaml_map.h"
#include "policies/prefix_ordered_queue.h"

namespace servesim {

struct LpmOptions {
  bool in_queue_dedup = false;
  std::int64_t fcfs_above = 0;
};

class LpmPolicy final : public LocalPolicy {
 public:
  explicit LpmPolicy(LpmOptions o) : o_(o) {}
  void enqueue(const QueuedRequest& r) override { queue_.push(r); }
  std::size_t queued() const override { return queue_.size(); }

  void schedule(AdmissionContext& ctx) override {
    if (queue_.empty()) return;
    if (o_.fcfs_above > 0 && static_cast<std::int64_t>(queue_.size()) > o_.fcfs_above)
      queue_.sort_by_seq();
    else
      queue_.refresh_by_match(ctx);
    auto& es = queue_.entries();
    if (o_.in_queue_dedup) seen_.clear();
    for (auto& e : es) {
      if (o_.in_queue_dedup) {
        const std::uint64_t key = ctx.uncached_prefix_key(e.q);
        if (key != 0 && !seen_.insert(key).second) continue;  // another request seeds this block
      }
      if (ctx.try_admit(e.q) != AdmitResult::kAdmitted) break;
      e.taken = true;
    }
    queue_.compact();
  }

 private:
  LpmOptions o_;
  PrefixOrderedQueue queue_;
  std::unordered_set<std::uint64_t> seen_;  // membership only (order never read)
};

inline LpmOptions parse_lpm_options(YamlMap& p) {
  LpmOptions o;
  o.in_queue_dedup = p.get<bool>("in_queue_dedup", o.in_queue_dedup);
  o.fcfs_above = p.get<std::int64_t>("fcfs_above", o.fcfs_above);
  if (o.fcfs_above < 0) p.fail("fcfs_above", "must be >= 0 (0 = never fall back to FCFS)");
  p.finish();
  return o;
}

}  // namespace servesim
