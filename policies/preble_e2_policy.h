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
//            prefill time of their missed tokens + their decode time (E[out]
//            tokens at i's per-token decode cost when routed, corrected to the
//            true length when they finish);
//       M_i: eviction cost = Σ over the nodes i would evict (its least recently
//            used, until this request's missed tokens fit) of their prefill time
//            × their request count in the window;
//       P_i: prefill time of this request's tokens not cached on i.
// Options (on by default):
//   rebalance: an exploit choice whose L exceeds rebalance_ratio (1.5) × the
//     smallest L explores instead;
//   replicate: when the mean latency of requests exploiting a prefix node
//     reaches replicate_factor (2) × its lowest level in the window, its next
//     request explores among workers NOT holding it (the prefix gets a second
//     home).
// Choices where the paper leaves room: window counts are per node in
// tumbling windows; M uses a per-token prefill rate (prefill time of 1024
// tokens / 1024) to price evicted nodes; latency levels are exponentially
// weighted means (weight 0.1) over at least 8 finished requests.
#pragma once
#include <deque>
#include <unordered_map>
#include <vector>

#include "configs/yaml_map.h"
#include "policies/global_policy.h"
#include "policies/global_prefix_index.h"
#include "policies/work_estimator.h"

namespace servesim {

struct PrebleE2Options {
  Time window = 180 * kNsPerSec;
  bool rebalance = true;
  double rebalance_ratio = 1.5;
  bool replicate = true;
  double replicate_factor = 2.0;
};

class PrebleE2Policy final : public GlobalPolicy {
 public:
  PrebleE2Policy(PrebleE2Options o, std::size_t workers);
  WorkerId route(const RequestSpec& r, const ClusterView& c) override;
  void on_finish(const RequestSpec& r, WorkerId w, Time now) override;

  struct Counts {
    std::uint64_t exploit = 0, explore = 0, rebalanced = 0, replicated = 0;
  };
  const Counts& counts() const { return counts_; }
  double window_load(WorkerId w) const { return load_[w]; }

 private:
  struct NodeStats {
    std::uint32_t generation = 0;
    std::uint32_t hits = 0;
    Time hits_since = 0;
    double latency = 0;       // EWMA of e2e latency of requests that exploited it
    double lowest = 0;        // lowest EWMA level in the current window
    Time lowest_since = 0;
    std::uint32_t samples = 0;
    bool replicate = false;
  };
  struct Routed {
    WorkerId worker;
    std::uint64_t entry;  // index in the window's history
    double decode_token_s;
    double est_output;
    IndexNodeId node;     // exploited node (0: none)
    std::uint32_t generation;
  };
  struct WindowEntry {
    Time at;
    WorkerId worker;
    double load_s;
  };

  WorkerId explore(const RequestSpec& r, const ClusterView& c, IndexNodeId exclude_holders_of);
  NodeStats& stats(IndexNodeId n);
  void expire(Time now);

  PrebleE2Options o_;
  GlobalPrefixIndex view_;
  WorkEstimator est_;
  OutputLengthEstimate out_;
  std::vector<double> load_;             // L_i
  std::vector<double> prefill_rate_;     // s per prefill token, per worker
  std::deque<WindowEntry> history_;
  std::uint64_t history_base_ = 0;       // index of history_.front()
  std::unordered_map<RequestId, Routed> routed_;  // lookups only
  std::vector<NodeStats> node_stats_;
  std::vector<std::int64_t> per_worker_;
  Counts counts_;
  bool sized_ = false;
};

PrebleE2Options parse_preble_e2_options(YamlMap& p);

}  // namespace servesim
