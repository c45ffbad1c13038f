// PrebleLocalPolicy: Preble's per-GPU scheduler (Srivatsa et al., "Preble:
// Efficient Distributed Prompt Scheduling for LLM Serving", ICLR 2025; seed
// 004). Waiting requests are put in priority groups by their cache-hit ratio
// on this worker, h = cached prompt tokens / prompt tokens:
//   g = ceil(groups · h) − 1, or 0 with no hit   (groups = 10: g in 0..9).
// Groups are visited from the highest to the lowest; one visit of group g
// admits up to (g + 1) · k of its requests (k = 10) in FCFS order, so that
// low-hit requests still get a share proportional to their group's weight
// instead of starving. Visits repeat (9, 8, ..., 0, 9, ...) while requests
// remain and the batch has room; admission stops at the first request that
// does not fit.
#pragma once
#include <cmath>
#include <vector>

#include "configs/yaml_map.h"
#include "policies/prefix_ordered_queue.h"

namespace servesim {

struct PrebleLocalOptions {
  std::int64_t groups = 10;
  std::int64_t k = 10;
};

class PrebleLocalPolicy final : public LocalPolicy {
 public:
  explicit PrebleLocalPolicy(PrebleLocalOptions o) : o_(o), buckets_(static_cast<std::size_t>(o.groups)) {}
  void enqueue(const QueuedRequest& r) override { queue_.push(r); }
  std::size_t queued() const override { return queue_.size(); }

  void schedule(AdmissionContext& ctx) override {
    if (queue_.empty()) return;
    queue_.sort_by_seq();  // FCFS inside each group
    auto& es = queue_.entries();
    for (auto& b : buckets_) b.clear();
    for (std::size_t i = 0; i < es.size(); ++i) {
      const double hit = static_cast<double>(ctx.cached_tokens(es[i].q)) / static_cast<double>(es[i].q.prefill_tokens);
      const auto g = hit <= 0 ? 0 : std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(static_cast<double>(o_.groups) * hit)) - 1, 0, o_.groups - 1);
      buckets_[static_cast<std::size_t>(g)].push_back(i);
    }
    std::vector<std::size_t> next(buckets_.size(), 0);
    std::size_t left = es.size();
    while (left > 0) {
      for (std::size_t g = buckets_.size(); g-- > 0;) {
        const std::size_t quota = (g + 1) * static_cast<std::size_t>(o_.k);
        for (std::size_t n = 0; n < quota && next[g] < buckets_[g].size(); ++n) {
          auto& e = es[buckets_[g][next[g]]];
          if (ctx.try_admit(e.q) != AdmitResult::kAdmitted) {
            queue_.compact();
            return;
          }
          e.taken = true;
          ++next[g];
          --left;
        }
      }
    }
    queue_.compact();
  }

 private:
  PrebleLocalOptions o_;
  PrefixOrderedQueue queue_;
  std::vector<std::vector<std::size_t>> buckets_;
};

inline PrebleLocalOptions parse_preble_local_options(YamlMap& p) {
  PrebleLocalOptions o;
  o.groups = p.positive_int("groups", o.groups);
  o.k = p.positive_int("k", o.k);
  p.finish();
  return o;
}

}  // namespace servesim
