// PrebleLocalPolicy: Preble's per-GPU scheduler (Srivatsa et al., "Preble:
// Efficient Distributed Prompt Scheduling for LLM Serving", ICLR 2025; seed
// 004; behaviour read from Preble's per-GPU scheduler in its model_rpc.py).
//
// A request is put in a priority group once, when the scheduler first sees it
// in the queue, by its cache-hit ratio on this worker at that moment,
// h = cached prompt tokens / prompt tokens:
//   g = ceil(groups · h) − 1, or 0 with no hit   (groups = 10: g in 0..9).
// The group stays fixed while the request waits (Preble computes the ratio as
// the request is queued); a preempted request is re-grouped when it returns.
// (The engine hands requests in without a cache view, so "when it enters the
// queue" is the first scheduling step after enqueue(): the same cache state
// up to the requests that finish in between.)
//
// Each scheduling step serves ONE group: a rotation pointer, kept across
// steps, walks the groups from the highest to the lowest (9, 8, …, 0, 9, …),
// skipping empty groups; the group it lands on may admit up to (g + 1) · k
// requests (k = 10) in FCFS order, and the pointer then moves to the next
// lower group. A request that does not fit in free memory is skipped (the
// next one of the group is tried); the step ends when the quota is used, the
// group is exhausted, or the batch has no token budget / running slot left.
// Low-hit requests thus get service in proportion to their group's quota
// instead of starving behind high-hit ones (as under LPM) -- while KV memory
// does not bind. The fit check (engine) counts free + evictable KV, as
// Preble's does; when memory is full, a large low-hit request fits only into
// what was freed since the last high-hit turn, in servesim as in Preble
// (docs/policies.md, behaviour test 2b).
//
// Work conservation (an engine rule Preble does not need): if the served
// group admitted nothing and the worker has nothing running, the next
// non-empty groups are served in the same step until one admits.
#pragma once
#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "policies/local_policy.h"

namespace servesim {

struct PrebleLocalOptions {
  std::int64_t groups = 10;
  std::int64_t k = 10;
};

class PrebleLocalPolicy final : public LocalPolicy {
 public:
  explicit PrebleLocalPolicy(PrebleLocalOptions o)
      : o_(o), groups_(static_cast<std::size_t>(o.groups)), pointer_(static_cast<std::size_t>(o.groups) - 1) {}

  void enqueue(const QueuedRequest& r) override {
    ungrouped_.push_back(r);
    ++size_;
  }
  std::size_t queued() const override { return size_; }

  // The group a request was (or would now be) put in, for tests.
  std::size_t group_of(std::int64_t cached, std::int64_t prefill) const {
    const double hit = static_cast<double>(cached) / static_cast<double>(prefill);
    if (hit <= 0) return 0;
    const auto g = static_cast<std::int64_t>(std::ceil(static_cast<double>(o_.groups) * hit)) - 1;
    return static_cast<std::size_t>(std::clamp<std::int64_t>(g, 0, o_.groups - 1));
  }
  std::size_t pointer() const { return pointer_; }
  std::size_t group_size(std::size_t g) const { return groups_[g].size(); }

  void schedule(AdmissionContext& ctx) override {
    for (const QueuedRequest& r : ungrouped_) {
      auto& grp = groups_[group_of(ctx.cached_tokens(r), r.prefill_tokens)];
      if (r.preempted)
        grp.push_front(r);  // preempted requests go ahead of new ones (as in every other queue)
      else
        grp.push_back(r);
    }
    ungrouped_.clear();
    if (size_ == 0) return;
    const std::size_t n = groups_.size();
    for (std::size_t tried = 0; tried < n; ++tried) {
      const std::size_t g = pointer_;
      pointer_ = g == 0 ? n - 1 : g - 1;
      if (groups_[g].empty()) continue;
      bool stop = false;
      const std::size_t admitted = serve(g, ctx, stop);
      if (admitted > 0 || stop || ctx.running() > 0) return;
    }
  }

 private:
  // Admits up to (g+1)·k requests of group g in order, skipping those that do not fit.
  std::size_t serve(std::size_t g, AdmissionContext& ctx, bool& stop) {
    auto& grp = groups_[g];
    const std::size_t quota = (g + 1) * static_cast<std::size_t>(o_.k);
    std::size_t admitted = 0;
    kept_.clear();
    std::size_t i = 0;
    for (; i < grp.size() && admitted < quota && !stop; ++i) {
      switch (ctx.try_admit(grp[i])) {
        case AdmitResult::kAdmitted:
          ++admitted;
          --size_;
          break;
        case AdmitResult::kNoMemory:
          kept_.push_back(grp[i]);
          break;
        case AdmitResult::kBatchFull:
        case AdmitResult::kNoSlot:
          kept_.push_back(grp[i]);
          stop = true;
          break;
      }
    }
    // Rebuild the group: skipped requests keep their place ahead of the untried ones.
    for (; i < grp.size(); ++i) kept_.push_back(grp[i]);
    grp.assign(kept_.begin(), kept_.end());
    return admitted;
  }

  PrebleLocalOptions o_;
  std::vector<std::deque<QueuedRequest>> groups_;
  std::vector<QueuedRequest> ungrouped_;  // entered since the last step, in order
  std::vector<QueuedRequest> kept_;
  std::size_t pointer_;  // the group the next step serves first
  std::size_t size_ = 0;
};

// The parameters of `local: {name: preble_local, ...}`.
inline const OptionTable<PrebleLocalOptions>& preble_local_option_table() {
  using R = OptionRange;
  static const OptionTable<PrebleLocalOptions> t = {
      {"groups", &PrebleLocalOptions::groups, R::kPositive, "number of hit-ratio groups"},
      {"k", &PrebleLocalOptions::k, R::kPositive, "admissions per step per unit of group weight"},
  };
  return t;
}

}  // namespace servesim
