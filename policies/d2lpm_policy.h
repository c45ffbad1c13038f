// D2lpmPolicy: Distributed Deficit LPM, the global layer (Cao et al.,
// "Locality-aware Fair Scheduling in LLM Serving", 2025; seed 004 is the
// authority). Each worker runs local DLPM (the registry requires
// `local: dlpm` with it); this layer routes.
//
// State: a global prefix view (GlobalPrefixIndex) of which workers cache
// which prefixes — updated only when requests finish, `update_delay_s` late
// (asynchronous updates; the view is stale in between) — and a deficit
// q_{i,w} per (client, worker), starting at 0.
//
// On arrival of a request of client i:
//   1. if every q_{i,w} <= 0, refill: add k·Q^g to all of client i's counters,
//      k = min_w (floor(-q_{i,w} / Q^g) + 1) (closed form of repeated refills);
//   2. G = workers holding the request's longest matched prefix in the view;
//   3. pick the worker in G with q_{i,w} > 0 and the shortest queue; if none
//      (G empty or exhausted), the shortest queue among all workers. Queue =
//      waiting + running requests; ties: lower worker index;
//   4. charge q_{i,w} -= w_in × the request's prompt tokens (`charge: extend`:
//      only the tokens the view says w lacks).
// On finish (applied `update_delay_s` later, with the view update):
//   q_{i,w} -= w_out × output tokens, and w is recorded as holding the prompt.
#pragma once
#include <deque>
#include <vector>

#include "configs/yaml_map.h"
#include "policies/global_policy.h"
#include "policies/global_prefix_index.h"

namespace servesim {

struct D2lpmOptions {
  double quantum = 16384;      // Q^g: global refill per (client, worker)
  double w_in = 1.0;
  double w_out = 2.0;
  bool charge_extend = false;  // false: all prompt tokens (the GPU share a client takes)
  Time update_delay = 100 * kNsPerMs;  // finish → view and counters updated
};

class D2lpmPolicy final : public GlobalPolicy {
 public:
  D2lpmPolicy(D2lpmOptions o, std::size_t workers) : o_(o), view_(workers) {}
  WorkerId route(const RequestSpec& r, const ClusterView& c) override;
  void on_finish(const RequestSpec& r, WorkerId w, Time now) override;

  double deficit(ClientId c, WorkerId w) const {
    return c < q_.size() ? q_[c][w] : 0.0;
  }
  const GlobalPrefixIndex& view() const { return view_; }

 private:
  struct Update {
    Time at;
    WorkerId worker;
    ClientId client;
    std::int64_t output_tokens;
    RequestSpec prompt;  // prompt length and prefix blocks only
  };
  void apply_due(Time now);
  std::vector<double>& counters(ClientId c, std::size_t workers);

  D2lpmOptions o_;
  GlobalPrefixIndex view_;
  std::vector<std::vector<double>> q_;
  std::deque<Update> pending_;  // in finish order = apply order
  std::vector<std::int64_t> per_worker_;
  bool sized_ = false;
};

D2lpmOptions parse_d2lpm_options(YamlMap& p);

}  // namespace servesim
