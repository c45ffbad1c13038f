// KvAwarePolicy: a KV-aware router in the style of llm-d's inference
// scheduler (prefix-cache scorer + queue scorer) and NVIDIA Dynamo's KV router
// (cost = blocks to prefill + active load), scored in seconds with each
// worker's cost model (docs/kv.md).
//
// For each request and worker w, from ClusterView::locality(w, r) (the
// prompt prefix w holds in HBM, its host / SSD tiers and the cluster store,
// and the uncontended time to load the non-HBM part) and WorkerLoad:
//   score_w = rate_w x (pending_prefill_tokens_w + prompt - matched_w)
//           + load_ns_w
//           + decode_weight x rate_w x running_context_tokens_w
// rate_w is w's prefill seconds per token (one 1024-token prefill priced by
// its cost model, / 1024): the first term is the time until w has computed
// this request (its queue, then the tokens no tier holds), the second the
// time to bring the matched non-HBM KV to HBM, the third (off by default) a
// decode-pressure term. Lowest score wins; ties: fewer waiting + running
// requests, then lower index. Stateless: it reads the real cluster, never a
// guess of it (which is what llm-d's precise prefix-cache scorer and Dynamo's
// KV events give a router).
#pragma once
#include <limits>
#include <vector>

#include "policies/global_policy.h"
#include "policies/work_estimator.h"
#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"

namespace servesim {

struct KvAwareOptions {
  double decode_weight = 0;  // weight of the decode-pressure term (0: off)
};

class KvAwarePolicy final : public GlobalPolicy {
 public:
  explicit KvAwarePolicy(KvAwareOptions o) : o_(o) {}

  WorkerId route(const RequestSpec& r, const ClusterView& c) override {
    const std::size_t n = c.workers();
    if (rate_.size() != n) {
      rate_.assign(n, 0);
      for (WorkerId w = 0; w < n; ++w) rate_[w] = est_.prefill_s(c.cost_model(w), 1024, 0) / 1024;
    }
    WorkerId best = 0;
    double best_score = std::numeric_limits<double>::infinity();
    std::int64_t best_queue = 0;
    for (WorkerId w = 0; w < n; ++w) {
      const WorkerLoad l = c.load(w);
      const KvLocality loc = c.locality(w, r);
      const double uncached = static_cast<double>(r.prompt_tokens - loc.total());
      double score = rate_[w] * (static_cast<double>(l.pending_prefill_tokens) + uncached) + time_to_seconds(loc.load_ns);
      if (o_.decode_weight > 0) score += o_.decode_weight * rate_[w] * static_cast<double>(l.running_context_tokens);
      const std::int64_t queue = l.waiting + l.running;
      if (score < best_score || (score == best_score && queue < best_queue)) {
        best = w;
        best_score = score;
        best_queue = queue;
      }
    }
    return best;
  }

 private:
  KvAwareOptions o_;
  WorkEstimator est_;
  std::vector<double> rate_;
};

// The parameters of `global: {name: kv_aware, ...}`.
inline const OptionTable<KvAwareOptions>& kv_aware_option_table() {
  static const OptionTable<KvAwareOptions> t = {
      {"decode_weight", &KvAwareOptions::decode_weight, OptionRange::kNonNegative,
       "weight of the decode-pressure term (running context tokens x prefill s/token); 0 = off"},
  };
  return t;
}

}  // namespace servesim
