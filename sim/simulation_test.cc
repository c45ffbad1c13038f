// Engine tests: event order, accounting of every request, batching
// arithmetic, memory pressure, dependencies, horizon, an analytic check
// against queueing theory, and the decode lane's and the held policy calls'
// equivalence with the step-by-step engine.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "policies/dlpm_policy.h"
#include "sim/core/rng.h"
#include "sim/test_harness.h"

using namespace servesim;
using namespace servesim::testing;

TEST_CASE("same-time events run in insertion order and earlier times first") {
  EventQueue q;
  q.push(5, EventKind::kWake, 1);
  q.push(3, EventKind::kArrival, 2);
  q.push(5, EventKind::kIterationEnd, 3);
  q.push(5, EventKind::kArrival, 4);
  q.push(3, EventKind::kTimer, 5);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().target);
  CHECK(order == std::vector<std::uint32_t>{2, 5, 1, 3, 4});
}

TEST_CASE("event queue pops in (time, insertion) order under interleaved pushes and pops") {
  // Against a sorted reference: random times with many ties, pushes and pops mixed
  // (a push right after a pop fills the popped root's place: event_queue.h).
  EventQueue q;
  std::vector<std::pair<Time, std::uint64_t>> pending;  // (time, seq) not yet popped
  Rng rng(11);
  std::uint64_t seq = 0;
  for (int step = 0; step < 20000; ++step) {
    if (pending.empty() || rng.below(3) != 0) {
      const Time t = static_cast<Time>(rng.below(step < 10000 ? 50 : 5000));
      q.push(t, EventKind::kWake, static_cast<std::uint32_t>(seq));
      pending.emplace_back(t, seq++);
    } else {
      const auto best = std::min_element(pending.begin(), pending.end());
      const Event e = q.pop();
      REQUIRE(e.time == best->first);
      REQUIRE(e.target == static_cast<std::uint32_t>(best->second));
      pending.erase(best);
    }
    REQUIRE(q.size() == pending.size());
    if (step % 5 == 0) {  // top() and empty() between a pop and the next push (the root's hole)
      REQUIRE(q.empty() == pending.empty());
      if (!pending.empty()) REQUIRE(q.top().seq == std::min_element(pending.begin(), pending.end())->second);
    }
  }
}

TEST_CASE("every input request is reported exactly once and all finish") {
  const std::vector<RequestSpec> v = random_requests(7, 3000, 0.002, 3000, 300, 3);
  TinyCluster c;
  c.workers = 3;
  c.kv_pages = 4096;
  VectorSource src(v);
  CollectingObserver obs;
  Simulation sim(make_setup(c), src, obs);
  SimulationTotals tot = sim.run();
  CHECK(tot.requests == 3000);
  CHECK(tot.finished == 3000);
  REQUIRE(obs.reports_per_id.size() == 3000);
  for (const auto& [id, n] : obs.reports_per_id) CHECK(n == 1);
  for (const auto& [id, o] : obs.by_id) {
    CHECK(o.first_token.value() >= o.admitted.value());
    CHECK(o.admitted.value() >= o.arrival.value());
    CHECK(o.finish.value() >= o.first_token.value());
  }
}

TEST_CASE("a prompt of P tokens alone with chunk C takes ceil(P/C) prefill iterations") {
  for (auto [p, chunk] : {std::pair{1000, 256}, {1024, 256}, {1, 256}, {5000, 5000}, {777, 100}}) {
    TinyCluster c;
    c.batching.chunk_size = chunk;
    VectorSource src({req(0, 0, p, 3)});
    CollectingObserver obs;
    Simulation(make_setup(c), src, obs).run();
    const int expected = (p + chunk - 1) / chunk;
    CHECK(obs.prefill_iterations == expected);
    // Fixed cost 1 ms per iteration: the first token comes with the last chunk,
    // then two decode iterations.
    CHECK(obs.by_id[0].first_token.value() == expected * kNsPerMs);
    CHECK(obs.by_id[0].finish.value() == (expected + 2) * kNsPerMs);
  }
}

TEST_CASE("memory-tight workload preempts by recomputation, never exceeds KV capacity, and finishes everything") {
  TinyCluster c;
  c.workers = 2;
  c.kv_pages = 96;  // 1536 tokens per worker
  c.batching.reservation_ratio = 0.0;
  std::vector<RequestSpec> v;
  for (RequestId i = 0; i < 200; ++i) v.push_back(req(i, 0.001 * static_cast<double>(i), 200, 400));
  VectorSource src(v);
  CollectingObserver obs;
  Simulation sim(make_setup(c), src, obs);
  SimulationTotals tot = sim.run();
  CHECK(tot.finished == 200);
  std::int64_t preemptions = 0;
  for (const auto& w : sim.worker_list()) {
    CHECK(w->stats().peak_kv_pages <= w->kv().capacity());
    CHECK(w->kv().used() == 0);
    preemptions += w->stats().preemptions;
  }
  CHECK(preemptions > 0);
  for (const auto& [id, o] : obs.by_id) CHECK(o.generated == 400);
}

TEST_CASE("an empty worker admits a request whose cached prefix crowds out its prompt without that prefix") {
  // Pages of 64 tokens, prefix blocks of 16: each cached block takes a whole page (4x
  // its tokens). A caches 8 of its 16 blocks (8 pages + 2 of its own: the 10 there
  // are). B shares A's 16 blocks but its 600-token prompt needs 8 pages beside the 8
  // locked ones: more than the 10 there are. Alone on the worker, B is admitted without the match
  // (it evicts it) instead of leaving the worker idle with B waiting.
  TinyCluster c;
  c.kv_pages = 10;
  c.page_size = 64;
  c.batching.reservation_ratio = 0.0;
  auto with_blocks = [](RequestSpec r) {
    r.prefix_block_size = 16;
    for (BlockHash b = 1; b <= 16; ++b) r.prefix_blocks.push_back(b);
    return r;
  };
  VectorSource src({with_blocks(req(0, 0, 256, 1)), with_blocks(req(1, 1.0, 600, 1))});
  CollectingObserver obs;
  Simulation sim(make_setup(c), src, obs);
  SimulationTotals tot = sim.run();
  CHECK(tot.finished == 2);
  CHECK(obs.by_id[1].status == RequestStatus::kFinished);
  const WorkerStats& st = sim.worker_list()[0]->stats();
  CHECK(st.uncached_admissions == 1);
  CHECK(st.uncached_admission_tokens == 8 * 16);
  CHECK(st.cached_tokens == 0);
  CHECK(st.peak_kv_pages <= 10);
  CHECK(sim.worker_list()[0]->kv().used() <= 10);
}

TEST_CASE("requests that can never run are rejected with a reason, not lost") {
  TinyCluster c;
  c.kv_pages = 10;
  c.max_context = 1000;
  VectorSource src({req(0, 0, 100, 10), req(1, 0.1, 900, 200), req(2, 0.2, 150, 20)});
  CollectingObserver obs;
  SimulationTotals tot = Simulation(make_setup(c), src, obs).run();
  CHECK(tot.requests == 3);
  CHECK(obs.by_id[0].status == RequestStatus::kFinished);
  CHECK(obs.by_id[1].status == RequestStatus::kRejected);  // over max_context
  CHECK(obs.by_id[2].status == RequestStatus::kRejected);  // 170 tokens > 160 tokens of KV
}

TEST_CASE("a horizon reports in-flight requests as unfinished and later ones as not arrived") {
  TinyCluster c;
  c.horizon = seconds_to_time(0.05);
  std::vector<RequestSpec> v;
  for (RequestId i = 0; i < 100; ++i) v.push_back(req(i, 0.001 * static_cast<double>(i), 64, 100));
  VectorSource src(v);
  CollectingObserver obs;
  SimulationTotals tot = Simulation(make_setup(c), src, obs).run();
  CHECK(tot.requests == 100);
  CHECK(tot.finished + tot.unfinished + tot.not_arrived == 100);
  CHECK(tot.unfinished > 0);
  CHECK(tot.not_arrived == 49);  // arrivals at 51..99 ms
}

TEST_CASE("a request in flight at the horizon reports the tokens it generated there") {
  // Its generated count lives in the worker's hot array while it runs (sim/worker.h)
  // and must reach the report. 1 ms per iteration: the prefill ends at 1 ms with the
  // first token, then one token per ms; the iteration ending at 11 ms is past the horizon.
  TinyCluster c;
  c.horizon = seconds_to_time(0.0105);
  VectorSource src({req(0, 0, 16, 100), req(1, 0.0035, 16, 100)});
  CollectingObserver obs;
  SimulationTotals tot = Simulation(make_setup(c), src, obs).run();
  CHECK(tot.unfinished == 2);
  CHECK(obs.by_id[0].status == RequestStatus::kUnfinished);
  CHECK(obs.by_id[0].generated == 10);
  CHECK(obs.by_id[0].first_token == kNsPerMs);
  CHECK(obs.by_id[1].generated > 0);
  CHECK(obs.by_id[1].generated < 10);
}

TEST_CASE("a dependent request is released when its parent finishes plus think time") {
  TinyCluster c;
  RequestSpec parent = req(0, 0, 16, 5);
  parent.dependents = 1;
  RequestSpec child = req(1, 0, 32, 2);
  child.parents = {0};
  child.think_time = seconds_to_time(1.0);
  VectorSource src({parent, child, req(2, 0.5, 16, 1)});
  CollectingObserver obs;
  SimulationTotals tot = Simulation(make_setup(c), src, obs).run();
  CHECK(tot.finished == 3);
  const Time parent_finish = obs.by_id[0].finish.value();
  CHECK(parent_finish == 5 * kNsPerMs);
  CHECK(obs.by_id[1].arrival.value() == parent_finish + kNsPerSec);
}

TEST_CASE("prefill-first mode never mixes prefill chunks with decode tokens, mixed mode does") {
  std::vector<RequestSpec> v;
  for (RequestId i = 0; i < 50; ++i) v.push_back(req(i, 0.003 * static_cast<double>(i), 300, 50));
  for (BatchMode mode : {BatchMode::kPrefillFirst, BatchMode::kMixed}) {
    TinyCluster c;
    c.batching.mode = mode;
    VectorSource src(v);
    CollectingObserver obs;
    SimulationTotals tot = Simulation(make_setup(c), src, obs).run();
    CHECK(tot.finished == 50);
    if (mode == BatchMode::kPrefillFirst)
      CHECK(obs.mixed_iterations == 0);
    else
      CHECK(obs.mixed_iterations > 0);
  }
}

// M/G/1 check: one worker, one request at a time (max_running = 1), every
// iteration takes S. A request with n output tokens needs n iterations (the
// prefill yields the first token), so service = n·S with n ~ U{1..9}.
// Pollaczek–Khinchine: mean wait Wq = λ·E[X²] / (2(1 − ρ)).
TEST_CASE("mean queueing delay matches the Pollaczek-Khinchine formula for M/G/1") {
  const double S = 0.01, lambda = 14.0;
  const double en = 5.0, en2 = 285.0 / 9.0;
  const double rho = lambda * en * S;
  const double wq = lambda * en2 * S * S / (2 * (1 - rho));
  Rng rng(2024);
  std::vector<RequestSpec> v;
  double t = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    t += rng.exponential(1 / lambda);
    v.push_back(req(static_cast<RequestId>(i), t, 16, 1 + static_cast<std::int64_t>(rng.below(9))));
  }
  TinyCluster c;
  c.batching.max_running = 1;
  c.cost = FixedCostOptions{seconds_to_time(S), 0, 0};
  VectorSource src(std::move(v));
  CollectingObserver obs;
  Simulation(make_setup(c), src, obs).run();
  double wait = 0, e2e = 0;
  for (const auto& [id, o] : obs.by_id) {
    wait += time_to_seconds(*o.admitted - *o.arrival);
    e2e += time_to_seconds(*o.finish - *o.arrival);
  }
  wait /= n;
  e2e /= n;
  MESSAGE("simulated Wq = " << wait << " s, P-K Wq = " << wq << " s");
  CHECK(wait == doctest::Approx(wq).epsilon(0.05));
  CHECK(e2e == doctest::Approx(wq + en * S).epsilon(0.03));
}

namespace {
// Checks every iteration's decode sums (BatchShape::DecodeSums, kept by the decode
// lane as members join and leave) against sums over the contexts themselves.
class DecodeSumsObserver final : public RunObserver {
 public:
  void on_request(const RequestOutcome&) override {}
  void on_iteration(WorkerId, Time, Time, const BatchShape& b) override {
    if (!b.decode_sums) return;
    std::int64_t kv = 0, splits = 0;
    for (std::int64_t c : b.decode_contexts) {
      kv += c + 1;
      splits += (c + kDecodeSplitTokenCount) / kDecodeSplitTokenCount;
    }
    ++checked;
    if (b.decode_sums->kv != kv || b.decode_sums->splits != splits) ++wrong;
  }
  int checked = 0, wrong = 0;
};
}  // namespace

TEST_CASE("the decode lane's context sums equal the sums over the batch's contexts in every iteration") {
  // Prompts and outputs long enough that contexts cross many multiples of the
  // split granularity (256) while members join (staggered arrivals), finish and
  // are preempted (a KV pool that cannot hold them all).
  const std::vector<RequestSpec> v = random_requests(11, 600, 0.01, 900, 700, 4);
  for (std::int64_t pages : {std::int64_t{1} << 20, std::int64_t{600}}) {
    CAPTURE(pages);
    TinyCluster c;
    c.workers = 2;
    c.kv_pages = pages;
    VectorSource src(v);
    DecodeSumsObserver obs;
    Simulation sim(make_setup(c), src, obs);
    SimulationTotals tot = sim.run();
    CHECK(tot.finished == 600);
    CHECK(obs.checked > 1000);
    CHECK(obs.wrong == 0);
  }
}

namespace {

// DLPM behind a wrapper that says whether the worker may hold its decode tokens
// (LocalPolicy::defers_decode_tokens), counts the token calls it hears, and logs
// the deficits it has at every schedule() while requests wait (the only place
// DLPM reads them).
class LoggedDlpm final : public LocalPolicy {
 public:
  LoggedDlpm(DlpmOptions o, bool defers, ClientId clients) : d_(o), defers_(defers), clients_(clients) {}
  void enqueue(const QueuedRequest& r) override { d_.enqueue(r); }
  std::size_t queued() const override { return d_.queued(); }
  void schedule(AdmissionContext& ctx) override {
    if (d_.queued() > 0)
      for (ClientId c = 0; c < clients_; ++c) seen.push_back(d_.deficit(c));
    d_.schedule(ctx);
  }
  void on_decode_tokens(ClientId c, std::int64_t n) override {
    ++calls;
    d_.on_decode_tokens(c, n);
  }
  void on_decode_token_each(ClientId c, std::int64_t n) override {
    ++calls;
    d_.on_decode_token_each(c, n);
  }
  bool counts_decode_tokens() const override { return d_.counts_decode_tokens(); }
  bool finish_ignores_decode_tokens() const override { return d_.finish_ignores_decode_tokens(); }
  bool defers_decode_tokens() const override { return defers_; }
  void on_finish(const RequestSpec& spec) override { d_.on_finish(spec); }

  DlpmPolicy d_;
  std::vector<double> seen;
  std::int64_t calls = 0;

 private:
  bool defers_;
  ClientId clients_;
};

}  // namespace

TEST_CASE("a worker holding DLPM's decode tokens until a schedule() reads them changes nothing DLPM sees") {
  // Preemptions (a pool too small for the load), refills (a small quantum) and a
  // weight that rounds (0.1: the charges are made one by one), in both batch modes
  // (the decode lane's per-client reports and the step-by-step pass's per token).
  constexpr ClientId kClients = 3;
  const std::vector<RequestSpec> v = random_requests(5, 500, 0.004, 900, 500, kClients);
  for (const BatchMode mode : {BatchMode::kMixed, BatchMode::kPrefillFirst}) {
    for (const double w_out : {2.0, 0.1}) {
      CAPTURE(static_cast<int>(mode));
      CAPTURE(w_out);
      DlpmOptions o;
      o.quantum = 300;
      o.w_out = w_out;
      struct Run {
        std::map<RequestId, Outcome> by_id;
        std::vector<LoggedDlpm*> policies;
        std::int64_t preemptions = 0;
      };
      auto run = [&](bool defers) {
        TinyCluster c;
        c.workers = 2;
        c.kv_pages = 400;
        c.batching.mode = mode;
        SimulationSetup s = make_setup(c);
        Run r;
        for (WorkerSetup& w : s.workers) {
          auto p = std::make_unique<LoggedDlpm>(o, defers, kClients);
          r.policies.push_back(p.get());
          w.policy = std::move(p);
        }
        VectorSource src(v);
        CollectingObserver obs;
        auto sim = std::make_unique<Simulation>(std::move(s), src, obs);
        CHECK(sim->run().finished == v.size());
        for (const auto& w : sim->worker_list()) r.preemptions += w->stats().preemptions;
        r.by_id = obs.by_id;
        return std::make_pair(std::move(sim), std::move(r));
      };
      auto [sim_told, told] = run(false);  // (the simulations own the policies: kept for the checks)
      auto [sim_held, held] = run(true);
      CHECK(told.preemptions > 0);
      REQUIRE(told.by_id.size() == held.by_id.size());
      for (const auto& [id, a] : told.by_id) {
        const Outcome& b = held.by_id.at(id);
        CHECK(a.worker == b.worker);
        CHECK(a.admitted == b.admitted);
        CHECK(a.first_token == b.first_token);
        CHECK(a.finish == b.finish);
        CHECK(a.preemptions == b.preemptions);
      }
      std::int64_t told_calls = 0, held_calls = 0;
      for (std::size_t w = 0; w < told.policies.size(); ++w) {
        const LoggedDlpm& a = *told.policies[w];
        const LoggedDlpm& b = *held.policies[w];
        CHECK(a.seen.size() > 3 * kClients);
        CHECK(a.seen == b.seen);  // bit for bit, at every read
        CHECK(a.d_.refills() > 0);
        CHECK(a.d_.refills() == b.d_.refills());
        for (ClientId cl = 0; cl < kClients; ++cl) CHECK(a.d_.deficit(cl) == b.d_.deficit(cl));  // the run's end
        told_calls += a.calls;
        held_calls += b.calls;
      }
      CHECK(held_calls < told_calls);  // the tokens were held
    }
  }
}
