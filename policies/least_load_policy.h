// LeastLoadPolicy: route to the worker with the least estimated remaining
// work, in seconds, priced by that worker's cost model (so heterogeneous
// workers compare fairly):
//   prefill: its pending prompt tokens (waiting + unfinished chunks) as one batch;
//   decode:  (waiting × E[out] + running × E[out] / 2) tokens at the per-token
//            cost of a batch of its running requests at their mean context,
// where E[out] is the mean output length of requests finished so far (not the
// oracle value). Ties go to the lower worker index.
#pragma once
#include <limits>

#include "policies/global_policy.h"
#include "policies/work_estimator.h"

namespace servesim {

class LeastLoadPolicy final : public GlobalPolicy {
 public:
  WorkerId route(const RequestSpec&, const ClusterView& c) override {
    WorkerId best = 0;
    double best_s = std::numeric_limits<double>::infinity();
    for (WorkerId w = 0; w < c.workers(); ++w) {
      const double s = remaining_s(c, w);
      if (s < best_s) {
        best_s = s;
        best = w;
      }
    }
    return best;
  }
  void on_finish(const RequestSpec& r, WorkerId, Time) override { out_.add(r.output_tokens); }

  double remaining_s(const ClusterView& c, WorkerId w) {
    const WorkerLoad l = c.load(w);
    const CostModel& m = c.cost_model(w);
    const double tokens = static_cast<double>(l.waiting) * out_.mean() + static_cast<double>(l.running) * out_.mean() / 2;
    const std::int64_t ctx = l.running > 0 ? l.running_context_tokens / l.running : 0;
    return est_.prefill_s(m, l.pending_prefill_tokens, 0) + tokens * est_.decode_token_s(m, l.running, ctx);
  }

 private:
  WorkEstimator est_;
  OutputLengthEstimate out_;
};

}  // namespace servesim
