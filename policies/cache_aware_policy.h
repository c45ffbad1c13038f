// CacheAwarePolicy: SGLang's cache-aware router (sgl-router, "cache_aware"
// policy): an approximate radix tree per worker of the prompts it routed
// there, and a load-imbalance guard.
//
// For each request, with load = waiting + running requests per worker:
//   - if the cluster is imbalanced — max load − min load > balance_abs and
//     max load > balance_rel × min load — route to the least loaded worker;
//   - else find the worker whose tree matches the longest prefix of the
//     prompt; if that match covers more than cache_threshold of the prompt,
//     route there (ties: lower load, then lower index);
//   - else route to the worker with the smallest tree (most free cache).
// The chosen worker's tree records the prompt at once (as the router inserts
// the request text when it routes). Trees are bounded by each worker's KV
// capacity (the router bounds its tree size and evicts LRU).
// Defaults are the router's: cache_threshold 0.5, balance_abs 32,
// balance_rel 1.0001. It knows nothing about clients: a client flooding one
// long prefix gets that worker's whole attention (the fairness D²LPM adds).
// view: cluster (docs/kv.md) replaces the matched prefix of each
// worker by what the engine says the worker can reach without computing:
// ClusterView::locality's HBM + host + SSD + store tokens (as SGLang's router
// would with HiCache's storage layer and KV events). The smallest-tree
// fallback still uses the router's own tree.
#pragma once
#include <limits>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "policies/global_policy.h"
#include "policies/global_prefix_index.h"

namespace servesim {

struct CacheAwareOptions {
  double cache_threshold = 0.5;
  double balance_abs = 32;
  double balance_rel = 1.0001;
  bool cluster_view = false;  // view: cluster (every tier, from the engine) | index (its own tree)
};

class CacheAwarePolicy final : public GlobalPolicy {
 public:
  CacheAwarePolicy(CacheAwareOptions o, std::size_t workers) : o_(o), view_(workers) {}

  WorkerId route(const RequestSpec& r, const ClusterView& c) override {
    const std::size_t n = c.workers();
    loads_.resize(n);
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    WorkerId least = 0;
    for (WorkerId w = 0; w < n; ++w) {
      const WorkerLoad l = c.load(w);
      if (!sized_) view_.set_capacity(w, l.kv_capacity_pages * l.page_size);
      loads_[w] = l.waiting + l.running;
      if (loads_[w] < lo) {
        lo = loads_[w];
        least = w;
      }
      hi = std::max(hi, loads_[w]);
    }
    sized_ = true;
    WorkerId pick = least;
    const bool imbalanced = static_cast<double>(hi - lo) > o_.balance_abs &&
                            static_cast<double>(hi) > o_.balance_rel * static_cast<double>(lo);
    if (!imbalanced) {
      if (o_.cluster_view) {
        per_worker_.resize(n);
        for (WorkerId w = 0; w < n; ++w) per_worker_[w] = c.locality(w, r).total();
      } else {
        view_.match(r, per_worker_);
      }
      WorkerId best = 0;
      for (WorkerId w = 1; w < n; ++w)
        if (per_worker_[w] > per_worker_[best] || (per_worker_[w] == per_worker_[best] && loads_[w] < loads_[best]))
          best = w;
      const double rate = static_cast<double>(per_worker_[best]) / static_cast<double>(r.prompt_tokens);
      if (rate > o_.cache_threshold) {
        pick = best;
      } else {
        pick = 0;
        for (WorkerId w = 1; w < n; ++w)
          if (view_.held_tokens(w) < view_.held_tokens(pick)) pick = w;
      }
    }
    view_.record(r, pick);
    return pick;
  }

 private:
  CacheAwareOptions o_;
  GlobalPrefixIndex view_;
  std::vector<std::int64_t> loads_, per_worker_;
  bool sized_ = false;
};

// The parameters of `global: {name: cache_aware, ...}`.
inline const OptionTable<CacheAwareOptions>& cache_aware_option_table() {
  using R = OptionRange;
  static const OptionTable<CacheAwareOptions> t = {
      {"cache_threshold", &CacheAwareOptions::cache_threshold, R::kFractionOrZero,
       "matched share of the prompt needed to follow the cache"},
      {"balance_abs", &CacheAwareOptions::balance_abs, R::kNonNegative,
       "absolute load gap (requests) that counts as imbalance"},
      {"balance_rel", &CacheAwareOptions::balance_rel, R::kAtLeastOne, "relative load gap that counts as imbalance"},
      {"view", choice(&CacheAwareOptions::cluster_view, "cluster", "index"), R::kAny,
       "index: its own tree of routed prompts; cluster: every tier and the store, from the engine", kOptionMax, 0,
       [](const CacheAwareOptions& o) { return o.cluster_view; }},
  };
  return t;
}

}  // namespace servesim
