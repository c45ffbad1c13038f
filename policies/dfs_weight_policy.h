// DfsWeightPolicy: SGLang's `dfs-weight` scheduling policy
// (python/sglang/srt/managers/schedule_policy.py, --schedule-policy
// dfs-weight). Waiting requests hang from the cache node their cached prefix
// ends at; a node's weight is the number of waiting requests at or below it.
// The order is a depth-first walk from the root that visits children by
// weight (heaviest first) and emits a node's own requests after its subtree,
// so requests that can share the most cached work run together, and the
// biggest shared subtrees first. Admission then stops at the first request
// that does not fit (as LPM).
//
// The tree is rebuilt each step from the requests' prefix blocks truncated to
// their cached length on this worker (block granularity: SGLang's tree is
// token-granular). Ties (equal weights) keep the order in which the children
// were first reached walking the queue in arrival order; requests at the same
// node keep queue order (preempted first).
#pragma once
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "sim/core/yaml_map.h"
#include "policies/global_prefix_index.h"
#include "policies/lpm_policy.h"

namespace servesim {

class DfsWeightPolicy final : public LocalPolicy {
 public:
  void enqueue(const QueuedRequest& r) override { queue_.push(r); }
  std::size_t queued() const override { return queue_.size(); }

  void schedule(AdmissionContext& ctx) override {
    if (queue_.empty()) return;
    queue_.sort_by_seq();
    auto& es = queue_.entries();
    nodes_.assign(1, Node{});
    index_.clear();
    for (std::size_t i = 0; i < es.size(); ++i) {
      const QueuedRequest& q = es[i].q;
      std::int64_t left = ctx.cached_tokens(q);
      std::size_t at = 0;
      std::uint64_t h = 0;
      nodes_[0].weight++;
      for (std::size_t b = 0; b < q.spec->prefix_blocks.size(); ++b) {
        const std::int64_t t = prompt_block_tokens(*q.spec, b);
        if (t <= 0 || t > left) break;
        left -= t;
        h = chain_hash(h, q.spec->prefix_blocks[b]);
        auto [it, fresh] = index_.try_emplace(h, nodes_.size());
        if (fresh) {
          nodes_.push_back(Node{});
          nodes_[at].children.push_back(it->second);
        }
        at = it->second;
        nodes_[at].weight++;
      }
      nodes_[at].requests.push_back(i);
    }
    order_.clear();
    walk(0);
    for (std::size_t i : order_) {
      if (ctx.try_admit(es[i].q) != AdmitResult::kAdmitted) break;
      es[i].taken = true;
    }
    queue_.compact();
  }

 private:
  struct Node {
    std::int64_t weight = 0;
    std::vector<std::size_t> children;  // node indices, in order first reached
    std::vector<std::size_t> requests;  // entries whose cached prefix ends here
  };
  void walk(std::size_t n) {
    // Iterative children-first walk would be needed only for very deep trees; prompts are
    // at most a few thousand blocks, within the stack's reach.
    std::vector<std::size_t> kids = nodes_[n].children;
    std::stable_sort(kids.begin(), kids.end(), [&](std::size_t a, std::size_t b) { return nodes_[a].weight > nodes_[b].weight; });
    for (std::size_t c : kids) walk(c);
    order_.insert(order_.end(), nodes_[n].requests.begin(), nodes_[n].requests.end());
  }

  PrefixOrderedQueue queue_;
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::size_t> index_;  // chain hash -> node (lookups only)
  std::vector<std::size_t> order_;
};

}  // namespace servesim
