// PrebleE2Policy: Preble's global scheduler, E2 = Exploitation + Exploration
// (Srivatsa et al., "Preble: Efficient Distributed Prompt Scheduling for LLM
// Serving", ICLR 2025; seed 004 is the authority, Preble's code where it is
// silent). Pair it with `local: preble_local` for the full system.
//
// State: a global radix tree (GlobalPrefixIndex) recording which workers hold
// each prefix — updated when a request is routed, with each worker's view
// bounded by its KV capacity (LRU) — plus a sliding window (default 3 min) of
// the work routed to each worker.
//
// On arrival: match the prompt; cached = longest prefix some worker holds,
// missed = prompt − cached.
//   exploit (cached > missed): among workers holding that prefix, the one with
//     the least window load L;
//   explore (otherwise): the worker minimizing L_i + M_i + P_i, all from the
//     worker's cost model:
//       L_i: window load = Σ over requests routed to i in the window of the
//            prefill time of their missed tokens, + Σ over those of them not
//            yet finished of their decode time: E[out] tokens × i's TPOT when
//            routed (the step time of a decode batch of its running requests
//            + 1). Preble's code prices decode this way (active requests ×
//            output length × the GPU's TPOT): a worker's queue shows in its
//            L. Counting the decode of finished requests too (servesim before
//            2026-11-28, at the per-token share of a step, which falls as the
//            batch grows) let a busy worker look no heavier than an idle one,
//            and under sustained load the queues grew while GPUs idled;
//       M_i: eviction cost = Σ over the nodes i would evict (its least recently
//            used, until this request's missed tokens fit) of their prefill time
//            × their request count in the window;
//       P_i: prefill time of this request's tokens not cached on i.
// Rebalancing and replication run together, once every `rebalance_every` ×
// N requests routed (50 · N, as Preble's global scheduler does), never per
// request:
//   replicate (overload detector): for each prefix subtree (a child of the
//     root and everything below it), the mean TTFT of its requests finished
//     since the last check is compared with the lowest such mean in the
//     window; at replicate_factor (2) × that level (≥ 8 samples) the subtree is
//     overloaded and its next request explores among workers NOT holding it
//     (the prefix gets a second home, later requests split by load). TTFT is
//     estimated at finish as E2E − output tokens × the TPOT booked at routing
//     (the engine reports finishes, not first tokens);
//   rebalance: when the largest window load is ≥ rebalance_ratio (1.5) × the
//     smallest, whole prefix subtrees are MOVED from the heaviest worker to the
//     lightest (their holding in the tree and their window load), largest
//     first while each fits in half the gap, or the one that best narrows it.
// view: cluster (docs/kv.md): per worker, the prefix it reaches
// without computing comes from the engine (ClusterView::locality: HBM + host
// + SSD + store) instead of the tree, for exploit/explore and P_i; the tree
// still keeps the window statistics, M_i and rebalancing.
// Choices where the paper leaves room: window counts are per node in
// tumbling windows; M uses a per-token prefill rate (prefill time of 1024
// tokens / 1024) to price evicted nodes.
#pragma once
#include <deque>
#include <unordered_map>
#include <vector>

#include "sim/core/id_map.h"
#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "policies/global_policy.h"
#include "policies/global_prefix_index.h"
#include "policies/work_estimator.h"

namespace servesim {

struct PrebleE2Options {
  Time window = 180 * kNsPerSec;
  bool rebalance = true;
  double rebalance_ratio = 1.5;
  std::int64_t rebalance_every = 50;  // × workers: requests routed between two checks
  bool replicate = true;
  double replicate_factor = 2.0;
  bool cluster_view = false;  // view: cluster (every tier, from the engine) | index (its own tree)
};

class PrebleE2Policy final : public GlobalPolicy {
 public:
  PrebleE2Policy(PrebleE2Options o, std::size_t workers);
  WorkerId route(const RequestSpec& r, const ClusterView& c) override;
  void on_finish(const RequestSpec& r, WorkerId w, Time now) override;

  struct Counts {
    std::uint64_t exploit = 0, explore = 0, checks = 0, moved_subtrees = 0, replicated = 0;
  };
  const Counts& counts() const { return counts_; }
  double window_load(WorkerId w) const { return load_[w]; }
  const GlobalPrefixIndex& view() const { return view_; }

 private:
  // Per node, reset when its slot holds a new node (generation). Two arrays:
  // the hit counts, read for every node explore() prices, stay small.
  struct NodeHits {  // requests routed through the node in the current window
    std::uint32_t generation = 0;
    std::uint32_t hits = 0;
    Time hits_since = 0;
  };
  struct NodeStats {  // the overload detector, for top-level nodes
    std::uint32_t generation = 0;
    double ttft_sum = 0;      // TTFT of its subtree's requests finished since the last check
    std::uint32_t samples = 0;
    double lowest = 0;        // lowest per-check mean TTFT in the window (0: none yet)
    Time lowest_since = 0;
    bool replicate = false;   // overloaded: the next request explores among non-holders
  };
  struct Routed {
    WorkerId worker;
    std::uint64_t entry;  // index in the window's history
    double tpot_s;        // the worker's decode step time when routed
    double decode_s;      // the decode booked to its window entry: E[out] when routed × tpot_s
    IndexNodeId top;      // its prefix subtree (0: none)
    std::uint32_t generation;
  };
  struct WindowEntry {
    Time at;
    WorkerId worker;
    double load_s;
    IndexNodeId top;      // prefix subtree it was booked to (0: none)
    std::uint32_t generation;
  };

  WorkerId explore(const RequestSpec& r, const ClusterView& c, IndexNodeId exclude_holders_of);
  NodeStats& stats(IndexNodeId n);
  NodeHits& hits(IndexNodeId n, std::uint32_t generation);  // REQUIRES: generation == view_.generation(n)
  // hits(n, generation).hits if counted in the window at `now`, else 0; reads
  // only (an entry of another generation, or none yet, counts as reset: 0).
  double recent_hits(IndexNodeId n, std::uint32_t generation, Time now) const {
    if (n >= node_hits_.size()) return 0.0;
    const NodeHits& h = node_hits_[n];
    if (h.generation != generation) return 0.0;
    return now - h.hits_since < o_.window ? static_cast<double>(h.hits) : 0.0;
  }
  void expire(Time now);
  void check(Time now);

  PrebleE2Options o_;
  GlobalPrefixIndex view_;
  WorkEstimator est_;
  OutputLengthEstimate out_;
  std::vector<double> load_;             // L_i
  std::vector<double> prefill_rate_;     // s per prefill token, per worker
  std::deque<WindowEntry> history_;
  std::uint64_t history_base_ = 0;       // index of history_.front()
  IdMap<Routed> routed_;
  std::vector<NodeHits> node_hits_;
  std::vector<NodeStats> node_stats_;
  // The top-level nodes (and their generation) with TTFT samples since their last
  // check, each once: check() reads only these, not every worker's tops list.
  std::vector<std::pair<IndexNodeId, std::uint32_t>> sampled_;
  std::vector<std::int64_t> per_worker_;
  std::vector<double> explore_p_, explore_bound_;  // explore(): per worker P and L + P (NaN: excluded)
  struct Visited {  // explore()'s cost: a holding its eviction would take
    IndexNodeId node;
    std::uint32_t generation;
    std::int64_t tokens;
  };
  std::vector<Visited> visited_;
  Counts counts_;
  std::int64_t since_check_ = 0;
  bool sized_ = false;
};

// The parameters of `global: {name: preble_e2, ...}`.
const OptionTable<PrebleE2Options>& preble_e2_option_table();

}  // namespace servesim
