// Test-only helpers: a source over a vector of requests, an observer that
// keeps every outcome, and a one-call way to run the engine with the fixed
// cost model and FCFS/round-robin.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "costmodel/fixed_cost_model.h"
#include "policies/fcfs_policy.h"
#include "policies/simple_global_policies.h"
#include "sim/core/rng.h"
#include "sim/simulation.h"

namespace servesim::testing {

class VectorSource final : public RequestSource {
 public:
  explicit VectorSource(std::vector<RequestSpec> v) : v_(std::move(v)) {}
  bool next(RequestSpec& out) override {
    if (i_ >= v_.size()) return false;
    out = v_[i_++];
    return true;
  }
  std::string describe() const override { return "vector"; }

 private:
  std::vector<RequestSpec> v_;
  std::size_t i_ = 0;
};

struct Outcome {
  RequestStatus status;
  WorkerId worker;
  std::optional<Time> arrival, admitted, first_token, finish;
  std::int32_t preemptions;
  std::int64_t generated;
};

class CollectingObserver final : public RunObserver {
 public:
  void on_request(const RequestOutcome& r) override {
    ++reports_per_id[r.spec->id];
    by_id[r.spec->id] = Outcome{r.status, r.worker, r.arrival, r.admitted, r.first_token, r.finish, r.preemptions,
                                r.generated_tokens};
  }
  void on_iteration(WorkerId, Time, Time, const BatchShape& b) override {
    iterations++;
    if (!b.prefills.empty()) prefill_iterations++;
    if (!b.prefills.empty() && !b.decode_contexts.empty()) mixed_iterations++;
  }
  std::map<RequestId, int> reports_per_id;
  std::map<RequestId, Outcome> by_id;
  int iterations = 0, prefill_iterations = 0, mixed_iterations = 0;
};

struct TinyCluster {
  int workers = 1;
  std::int64_t kv_pages = 1 << 20;
  std::int64_t page_size = 16;
  BatchingOptions batching{};
  FixedCostOptions cost{kNsPerMs, 0, 0};
  std::int64_t max_context = 1 << 30;
  std::optional<Time> horizon;
};

inline SimulationSetup make_setup(const TinyCluster& c) {
  SimulationSetup s;
  auto cost = std::make_shared<FixedCostModel>(c.cost);
  for (int i = 0; i < c.workers; ++i) {
    WorkerSetup w;
    w.policy = std::make_unique<FcfsPolicy>();
    w.cost = cost;
    w.batching = c.batching;
    w.kv_capacity_pages = c.kv_pages;
    w.page_size = c.page_size;
    s.workers.push_back(std::move(w));
  }
  s.global = std::make_unique<RoundRobinPolicy>();
  s.max_context = c.max_context;
  s.horizon = c.horizon;
  return s;
}

inline RequestSpec req(RequestId id, double arrival_s, std::int64_t prompt, std::int64_t output, ClientId client = 0) {
  RequestSpec r;
  r.id = id;
  r.client = client;
  r.arrival = seconds_to_time(arrival_s);
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

// n requests with exponential gaps (mean `gap_s`), prompts in [1, max_prompt],
// outputs in [1, max_output], clients 0 .. clients - 1 in turn.
inline std::vector<RequestSpec> random_requests(std::uint64_t seed, RequestId n, double gap_s, std::int64_t max_prompt,
                                                std::int64_t max_output, ClientId clients) {
  Rng rng(seed);
  std::vector<RequestSpec> v;
  double t = 0;
  for (RequestId i = 0; i < n; ++i) {
    t += rng.exponential(gap_s);
    const auto prompt = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max_prompt)));
    const auto output = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max_output)));
    v.push_back(req(i, t, prompt, output, static_cast<ClientId>(i % clients)));
  }
  return v;
}

}  // namespace servesim::testing
