// PD disaggregation in the engine, checked analytically with the fixed cost
// model (every iteration takes exactly `base`): the hand-off at the first
// token, KV transfer time = latency + bytes / bandwidth with max-min fair
// sharing of a link, back-pressure when the decode worker is full, the
// prefix-aware decider and decode-side prefix caching, and conservation of
// requests across the hand-off.
#include <doctest/doctest.h>

#include "sim/core/rng.h"
#include "sim/test_harness.h"

using namespace servesim;
using namespace servesim::testing;

namespace {

struct PdCluster {
  std::vector<WorkerRole> roles;
  std::vector<std::int64_t> kv_pages;  // per worker; empty: 1 << 20 each
  std::int64_t page_size = 16;
  BatchingOptions batching{};
  FixedCostOptions cost{kNsPerMs, 0, 0};
  double gbps = 100;                   // 100 bytes per ns
  Time latency = 0;
  double bytes_per_token = 1000;
  PdDecider decider = PdDecider::kAlways;
  std::int64_t threshold = 0;
};

SimulationSetup make_pd(const PdCluster& c) {
  SimulationSetup s;
  auto cost = std::make_shared<FixedCostModel>(c.cost);
  PdSetup pd;
  for (std::size_t i = 0; i < c.roles.size(); ++i) {
    WorkerSetup w;
    w.policy = std::make_unique<FcfsPolicy>();
    w.cost = cost;
    w.batching = c.batching;
    w.kv_capacity_pages = c.kv_pages.empty() ? (1 << 20) : c.kv_pages[i];
    w.page_size = c.page_size;
    s.workers.push_back(std::move(w));
    pd.egress_gbps.push_back(c.gbps);
    pd.ingress_gbps.push_back(c.gbps);
    pd.kv_bytes_per_token.push_back(c.bytes_per_token);
  }
  pd.roles = c.roles;
  pd.latency = c.latency;
  pd.decode_global = std::make_unique<RoundRobinPolicy>();
  pd.decider = c.decider;
  pd.threshold_tokens = c.threshold;
  s.pd = std::move(pd);
  s.global = std::make_unique<RoundRobinPolicy>();
  s.max_context = 1 << 30;
  return s;
}

struct PdOutcome {
  RequestStatus status;
  std::optional<WorkerId> prefill_worker, decode_worker;
  std::optional<Time> arrival, first_token, finish, transfer_start, transfer_end, kv_wait;
  std::optional<std::int64_t> transfer_bytes;
  std::int64_t cached = 0;
};

class PdObserver final : public RunObserver {
 public:
  void on_request(const RequestOutcome& r) override {
    ++reports[r.spec->id];
    by_id[r.spec->id] = PdOutcome{r.status, r.prefill_worker, r.decode_worker, r.arrival, r.first_token, r.finish,
                                  r.transfer_start, r.transfer_end, r.kv_wait, r.transfer_bytes, r.cached_tokens};
  }
  void on_iteration(WorkerId w, Time, Time, const BatchShape& b) override {
    decode_tokens_on[w] += static_cast<std::int64_t>(b.decode_contexts.size());
  }
  std::map<RequestId, int> reports;
  std::map<RequestId, PdOutcome> by_id;
  std::map<WorkerId, std::int64_t> decode_tokens_on;
};

const auto P = WorkerRole::kPrefill;
const auto D = WorkerRole::kDecode;

RequestSpec with_blocks(RequestSpec r, std::vector<BlockHash> blocks) {
  r.prefix_blocks = std::move(blocks);
  r.prefix_block_size = 16;
  return r;
}

}  // namespace

TEST_CASE("PD: one request's E2E = prefill + latency + bytes / bandwidth + decode steps, to the nanosecond") {
  PdCluster c;
  c.roles = {P, D};
  c.latency = 5 * kNsPerUs;
  VectorSource src({req(0, 0, 100, 5)});
  PdObserver obs;
  Simulation sim(make_pd(c), src, obs);
  const SimulationTotals t = sim.run();
  CHECK(t.finished == 1);
  const PdOutcome& o = obs.by_id.at(0);
  CHECK(o.prefill_worker == WorkerId{0});
  CHECK(o.decode_worker == WorkerId{1});
  CHECK(*o.first_token == kNsPerMs);                 // one prefill iteration
  CHECK(*o.transfer_start == kNsPerMs);              // room at once: no wait
  CHECK(*o.kv_wait == 0);
  CHECK(*o.transfer_bytes == 100 * 1000);            // 100 prompt tokens x 1000 B
  const Time transfer = 5 * kNsPerUs + 100 * 1000 / 100;  // latency + bytes / (100 B/ns)
  CHECK(*o.transfer_end == kNsPerMs + transfer);
  CHECK(*o.finish == kNsPerMs + transfer + 4 * kNsPerMs);  // 4 decode steps for tokens 2..5
  // The prefill worker never ran a decode step; the decode worker ran all 4.
  CHECK(obs.decode_tokens_on[0] == 0);
  CHECK(obs.decode_tokens_on[1] == 4);
  CHECK(sim.worker_list()[0]->stats().handoffs == 1);
  CHECK(sim.worker_list()[1]->stats().received == 1);
}

TEST_CASE("PD: two simultaneous transfers on one link take twice as long as one") {
  auto transfer_ns = [](std::vector<WorkerRole> roles, int requests) {
    PdCluster c;
    c.roles = std::move(roles);
    std::vector<RequestSpec> v;
    for (int i = 0; i < requests; ++i) v.push_back(req(static_cast<RequestId>(i), 0, 160, 3));
    VectorSource src(v);
    PdObserver obs;
    Simulation(make_pd(c), src, obs).run();
    std::vector<Time> out;
    for (const auto& [id, o] : obs.by_id) {
      CHECK(o.status == RequestStatus::kFinished);
      out.push_back(*o.transfer_end - *o.transfer_start);
    }
    return out;
  };
  const Time alone = transfer_ns({P, D}, 1).at(0);
  CHECK(alone == 160 * 1000 / 100);
  // One decode worker's ingress shared by two prefill workers' transfers.
  for (Time t : transfer_ns({P, P, D}, 2)) CHECK(t == 2 * alone);
  // One prefill worker's egress shared by transfers to two decode workers.
  for (Time t : transfer_ns({P, D, D}, 2)) CHECK(t == 2 * alone);
  // Disjoint links: no sharing.
  for (Time t : transfer_ns({P, P, D, D}, 2)) CHECK(t == alone);
}

TEST_CASE("PD: max-min fair shares are re-divided when a transfer ends") {
  // Two transfers into one ingress: 160 and 480 tokens. Shared until the
  // short one ends (its 160 KB at 50 B/ns = 3200 ns), then the long one gets
  // the whole 100 B/ns: 480 KB = 160 KB (shared part) + 320 KB / 100 = 3200 + 3200 ns.
  PdCluster c;
  c.roles = {P, P, D};
  VectorSource src({req(0, 0, 160, 3), req(1, 0, 480, 3)});
  PdObserver obs;
  Simulation(make_pd(c), src, obs).run();
  CHECK(*obs.by_id.at(0).transfer_end - *obs.by_id.at(0).transfer_start == 3200);
  CHECK(*obs.by_id.at(1).transfer_end - *obs.by_id.at(1).transfer_start == 6400);
}

TEST_CASE("PD: back-pressure: the prefill worker holds the KV until the decode worker has room") {
  PdCluster c;
  c.roles = {P, D};
  // Decode worker: 10 pages of 16 tokens; one request (100 + 50 tokens = 10
  // pages) fits, two do not. The prefill worker has room for both.
  c.kv_pages = {100, 10};
  c.batching.reservation_ratio = 0;
  VectorSource src({req(0, 0, 100, 50), req(1, 0, 100, 50)});
  PdObserver obs;
  Simulation sim(make_pd(c), src, obs);
  CHECK(sim.run().finished == 2);
  const PdOutcome& a = obs.by_id.at(0);
  const PdOutcome& b = obs.by_id.at(1);
  CHECK(*a.kv_wait == 0);
  CHECK(*b.first_token == kNsPerMs);
  CHECK(*b.transfer_start == *a.finish);  // room only once the first request finished
  CHECK(*b.kv_wait == *a.finish - kNsPerMs);
  CHECK(*b.kv_wait > 0);
  // While waiting, both prompts' KV stayed on the prefill worker (7 pages each).
  CHECK(sim.worker_list()[0]->stats().peak_kv_pages == 14);
}

TEST_CASE("PD: decode-side prefix caching moves only the tokens the decode worker lacks") {
  PdCluster c;
  c.roles = {P, D};
  // Request 1 (64 tokens, 4 blocks) leaves its prompt in the decode worker's
  // cache; request 2 shares those 4 blocks and adds 16 tokens.
  VectorSource src({with_blocks(req(0, 0, 64, 3), {1, 2, 3, 4}), with_blocks(req(1, 1.0, 80, 3), {1, 2, 3, 4, 5})});
  PdObserver obs;
  Simulation(make_pd(c), src, obs).run();
  CHECK(*obs.by_id.at(0).transfer_bytes == 64 * 1000);
  CHECK(*obs.by_id.at(1).transfer_bytes == 16 * 1000);
  CHECK(*obs.by_id.at(1).transfer_end - *obs.by_id.at(1).transfer_start == 16 * 1000 / 100);
}

TEST_CASE("PD: the prefix-aware decider prefills on the decode worker when the uncached prompt is small") {
  PdCluster c;
  c.roles = {P, D};
  c.decider = PdDecider::kPrefixAware;
  c.threshold = 16;
  // 1: nothing cached on the decode worker (64 > 16): disaggregated.
  // 2: 64 of its 80 tokens cached there (16 <= 16): prefilled and decoded on worker 1, no transfer.
  // 3: a different prompt of 80 tokens: disaggregated again.
  VectorSource src({with_blocks(req(0, 0, 64, 3), {1, 2, 3, 4}), with_blocks(req(1, 1.0, 80, 3), {1, 2, 3, 4, 5}),
                    with_blocks(req(2, 2.0, 80, 3), {9, 8, 7, 6, 5})});
  PdObserver obs;
  Simulation(make_pd(c), src, obs).run();
  CHECK(obs.by_id.at(0).prefill_worker == WorkerId{0});
  CHECK(obs.by_id.at(0).transfer_bytes.has_value());
  CHECK(obs.by_id.at(1).prefill_worker == WorkerId{1});
  CHECK(obs.by_id.at(1).decode_worker == WorkerId{1});
  CHECK(!obs.by_id.at(1).transfer_start.has_value());
  CHECK(obs.by_id.at(1).cached == 64);  // its prefill on worker 1 hit the cached prompt of request 1
  CHECK(obs.by_id.at(2).prefill_worker == WorkerId{0});
  CHECK(obs.by_id.at(2).decode_worker == WorkerId{1});
}

TEST_CASE("PD: every request is reported exactly once across the hand-off under memory pressure") {
  Rng rng(11);
  std::vector<RequestSpec> v;
  double t = 0;
  for (RequestId i = 0; i < 2000; ++i) {
    t += rng.exponential(0.002);
    RequestSpec r = req(i, t, 1 + static_cast<std::int64_t>(rng.below(2000)), 1 + static_cast<std::int64_t>(rng.below(300)));
    std::vector<BlockHash> blocks;
    const auto shared = static_cast<BlockHash>(rng.below(3)) * 100;  // 3 shared 128-token prefixes
    for (std::int64_t b = 0; b * 16 < r.prompt_tokens; ++b)
      blocks.push_back(static_cast<BlockHash>(b) + (b < 8 ? shared : static_cast<BlockHash>(i + 1) * 1000));
    v.push_back(with_blocks(r, blocks));
  }
  for (PdDecider decider : {PdDecider::kAlways, PdDecider::kPrefixAware}) {
    PdCluster c;
    c.roles = {P, P, D, WorkerRole::kMixed};
    c.kv_pages = {400, 400, 200, 300};
    c.cost = FixedCostOptions{kNsPerMs, 2000, 20000};
    c.latency = 10 * kNsPerUs;
    c.gbps = 1;  // slow links: transfers overlap and contend
    c.decider = decider;
    c.threshold = 64;
    VectorSource src(v);
    PdObserver obs;
    Simulation sim(make_pd(c), src, obs);
    const SimulationTotals tot = sim.run();
    CHECK(tot.requests == 2000);
    CHECK(tot.finished + tot.rejected == 2000);
    CHECK(tot.finished > 1900);
    REQUIRE(obs.reports.size() == 2000);
    for (const auto& [id, n] : obs.reports) CHECK(n == 1);
    for (const auto& [id, o] : obs.by_id) {
      if (o.status != RequestStatus::kFinished) continue;
      CHECK(*o.finish >= *o.first_token);
      if (o.transfer_start) {
        CHECK(*o.transfer_end >= *o.transfer_start);
        CHECK(*o.transfer_start >= *o.first_token);
        CHECK(*o.finish >= *o.transfer_end);
        CHECK(*o.prefill_worker != *o.decode_worker);
      } else {
        CHECK(o.prefill_worker == o.decode_worker);
      }
    }
    // Prefill-role workers never decode.
    CHECK(obs.decode_tokens_on[0] == 0);
    CHECK(obs.decode_tokens_on[1] == 0);
    for (const auto& w : sim.worker_list()) CHECK(w->kv().used() == w->cache().pages());  // nothing private left
  }
}
