// Conformance suite over EVERY registered local and global policy (the
// registries are iterated, so a new policy is covered by adding its registry
// line): on a memory-tight, multi-client, shared-prefix workload, no request
// is lost, KV use never exceeds capacity, the output is byte-identical across
// two runs, and no worker idles while a request that fits waits (the engine
// checks work conservation at every step; a violation throws). Then unit
// tests of the policies' decisions against a scripted AdmissionContext.
#include <doctest/doctest.h>

#include <deque>
#include <set>

#include "policies/dlpm_policy.h"
#include "policies/lpm_policy.h"
#include "policies/policy_registry.h"
#include "policies/policy_test_util.h"
#include "policies/preble_local_policy.h"
#include "policies/sjf_policy.h"
#include "policies/vtc_policy.h"

using namespace servesim;
using namespace servesim::testing;

namespace {

// ~10K tokens of KV per worker: prompts up to ~6K tokens plus outputs force
// cache eviction and preemptions; three clients, one with on/off phases.
const char* kWorkload = R"(name: conformance
seed: 21
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 3}
batching: {memory_utilization: 0.25, max_running: 24, chunk_size: 2048}
policy: {local: fcfs, global: round_robin}
workload:
  type: templates
  requests: 360
  block_size: 16
  pools:
    - {name: docs, count: 6, zipf: 0.8, tokens: {dist: uniform, min: 300, max: 3000}}
  clients:
    - {name: a, rate: 40, pool: docs, prompt: {dist: lognormal, median: 200, sigma: 1.0, max: 3000},
       output: {dist: lognormal, median: 80, sigma: 1.2, max: 1500}}
    - {name: b, rate: 25, pool: docs, template_share: 0.5, on_s: 1, off_s: 2, prompt: {dist: uniform, min: 10, max: 800},
       output: {dist: uniform, min: 1, max: 300}}
    - {name: c, rate: 10, prompt: {dist: uniform, min: 100, max: 2500}, output: {dist: lognormal, median: 40, sigma: 1.0, max: 900}}
report: {requests_csv: true}
)";

struct Case {
  std::string local, global, mode = "mixed";
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& t : local_policy_types())
    for (const char* mode : {"mixed", "prefill_first"}) cases.push_back({t.name, "round_robin", mode});
  for (const auto& t : global_policy_types()) cases.push_back({"lpm", t.name});
  // Options that change decisions.
  cases.push_back({"{name: sjf, srtf: true}", "least_outstanding"});
  cases.push_back({"{name: lpm, in_queue_dedup: true, fcfs_above: 6}", "round_robin"});
  cases.push_back({"{name: dlpm, quantum: 1, refill: all, charge: prompt}", "round_robin"});
  cases.push_back({"{name: dlpm, quantum: 1000000}", "round_robin", "prefill_first"});
  cases.push_back({"{name: vtc, charge: extend, w_out: 0}", "round_robin"});
  cases.push_back({"{name: preble_local, k: 1, groups: 3}", "round_robin"});
  cases.push_back({"{name: ltr, ranker: noisy_oracle, tau: 0.6, preemptive: true}", "round_robin"});
  cases.push_back({"{name: ltr, warmup: 20, starvation_threshold: 5, priority_quantum: 2, preemptive: true}",
                   "least_outstanding", "prefill_first"});
  cases.push_back({"dlpm", "{name: d2lpm, update_delay_s: 0, charge: extend, quantum: 10}"});
  cases.push_back({"dlpm", "{name: d2lpm, update_delay_s: 5}"});
  cases.push_back({"preble_local", "{name: preble_e2, rebalance: false, replicate: false, window_s: 2}"});
  cases.push_back({"preble_local", "preble_e2"});
  cases.push_back({"lpm", "{name: cache_aware, cache_threshold: 0, balance_abs: 0}"});
  return cases;
}

std::string global_with_local(const Case& c) {
  // A global policy that requires a local one gets it.
  for (const auto& t : global_policy_types()) {
    if (t.name != c.global) continue;
    YAML::Node n;
    n["policy"]["global"] = c.global;
    YamlMap m(n, "<case>");
    YamlMap pm = m.map("policy");
    ParsedPolicy<GlobalPolicy> g = parse_global_policy(pm, "global", "");
    if (!g.requires_local.empty()) return g.requires_local;
  }
  return c.local;
}

}  // namespace

TEST_CASE("every registered policy loses no request and stays within KV capacity and is deterministic") {
  std::set<std::string> locals_seen, globals_seen;
  int n = 0;
  for (Case c : all_cases()) {
    c.local = global_with_local(c);
    const std::vector<std::string> sets = {"policy.local=" + c.local, "policy.global=" + c.global,
                                           "batching.mode=" + c.mode};
    CAPTURE(c.local);
    CAPTURE(c.global);
    CAPTURE(c.mode);
    const std::string name = fmt::format("conformance_{}", n++);
    RunResult a = run_yaml(kWorkload, sets, name + "_a");
    RunResult b = run_yaml(kWorkload, sets, name + "_b");
    // No request lost: every one reported, and (no horizon, all fit) finished.
    CHECK(a.out.totals.requests == 360);
    CHECK(a.out.totals.finished == 360);
    CHECK(read_csv(a.dir + "/requests.csv").size() == 360);
    // KV never over capacity (also SIM_CHECKed on every allocation).
    std::int64_t preemptions = 0;
    for (const WorkerStats& w : a.out.workers) {
      CHECK(w.peak_kv_pages <= w.kv_capacity_pages);
      preemptions += w.preemptions;
    }
    // Deterministic: byte-identical run folders.
    for (const char* f : {"requests.csv", "clients.csv", "workers.csv", "summary.csv", "config.resolved.yaml"})
      CHECK_MESSAGE(slurp(a.dir + "/" + f) == slurp(b.dir + "/" + f), f);
    locals_seen.insert(a.summary.at("policy_local"));
    globals_seen.insert(a.summary.at("policy_global"));
    MESSAGE(fmt::format("{:<52} {:<60} {:<13} hit {:.3f}  e2e mean {:.2f} s  preemptions {}", c.local, c.global,
                        c.mode, a.num("cache_hit_rate"), a.num("e2e_mean_s"), preemptions));
  }
  for (const auto& t : local_policy_types()) CHECK_MESSAGE(locals_seen.count(t.name) == 1, t.name);
  for (const auto& t : global_policy_types()) CHECK_MESSAGE(globals_seen.count(t.name) == 1, t.name);
}

TEST_CASE("a global policy that needs a local policy rejects any other") {
  YAML::Node root = YAML::Load(kWorkload);
  apply_override(root, "policy.global=d2lpm");
  apply_override(root, "policy.local=lpm");
  CHECK_THROWS_WITH_AS(parse_scenario(root, "x.yaml"), doctest::Contains("set local: dlpm"), InputError);
  apply_override(root, "policy.global={name: lpm}");
  CHECK_THROWS_WITH_AS(parse_scenario(root, "x.yaml"), doctest::Contains("unknown global policy"), InputError);
  apply_override(root, "policy.global=round_robin");
  apply_override(root, "policy.local={name: dlpm, quantm: 3}");
  CHECK_THROWS_WITH_AS(parse_scenario(root, "x.yaml"), doctest::Contains("quantm"), InputError);
}

// ---------------------------------------------------------------------------
// Policy decisions against a scripted engine.

namespace {

// A scripted AdmissionContext: `slots` admissions fit, cached tokens per handle.
class FakeContext final : public AdmissionContext {
 public:
  int slots = 1000;
  std::map<RequestHandle, std::int64_t> cached, key;
  std::vector<RequestHandle> admitted, preempted;
  std::vector<RunningRequest> running_set;
  LocalPolicy* policy = nullptr;  // for re-enqueueing preempted requests
  std::vector<QueuedRequest> all;

  Time now() const override { return 0; }
  AdmitResult try_admit(const QueuedRequest& r) override {
    if (slots <= 0) return AdmitResult::kNoSlot;
    --slots;
    admitted.push_back(r.handle);
    return AdmitResult::kAdmitted;
  }
  std::int64_t cached_tokens(const QueuedRequest& r) const override {
    auto it = cached.find(r.handle);
    return it == cached.end() ? 0 : it->second;
  }
  std::uint64_t uncached_prefix_key(const QueuedRequest& r) const override {
    auto it = key.find(r.handle);
    return it == key.end() ? 0 : static_cast<std::uint64_t>(it->second);
  }
  std::int64_t running() const override { return static_cast<std::int64_t>(running_set.size()); }
  bool has_room() const override { return slots > 0; }
  void running_requests(std::vector<RunningRequest>& out) const override { out = running_set; }
  bool preempt(RequestHandle h) override {
    for (auto it = running_set.begin(); it != running_set.end(); ++it) {
      if (it->handle != h) continue;
      QueuedRequest q{h, it->spec, 0, it->spec->prompt_tokens + it->generated, true};
      running_set.erase(it);
      preempted.push_back(h);
      ++slots;
      policy->enqueue(q);
      return true;
    }
    return false;
  }
};

struct Specs {
  std::deque<RequestSpec> v;
  QueuedRequest add(RequestHandle h, ClientId c, std::int64_t prompt, std::int64_t output = 10) {
    RequestSpec s;
    s.id = h;
    s.client = c;
    s.prompt_tokens = prompt;
    s.output_tokens = output;
    v.push_back(s);
    return QueuedRequest{h, &v.back(), 0, prompt, false};
  }
};

}  // namespace

TEST_CASE("DLPM admits even when every active client's deficit is negative by refilling in closed form") {
  DlpmOptions o;
  o.quantum = 100;
  DlpmPolicy p(o);
  Specs s;
  p.enqueue(s.add(1, 0, 50));
  p.enqueue(s.add(2, 1, 50));
  p.on_decode_tokens(0, 1000);  // q0 = -2000
  p.on_decode_tokens(1, 600);   // q1 = -1200
  FakeContext ctx;
  ctx.slots = 1;
  p.schedule(ctx);
  // Client 1 needs floor(1200/100)+1 = 13 refills to become positive; client 0 would need 21.
  REQUIRE(ctx.admitted == std::vector<RequestHandle>{2});
  CHECK(p.refills() == 13);
  CHECK(p.deficit(1) == doctest::Approx(-1200 + 1300 - 50));
  CHECK(p.deficit(0) == doctest::Approx(-2000 + 1300));
  CHECK(p.queued() == 1);
}

TEST_CASE("DLPM skips a client without deficit however long its match and LPM does not") {
  Specs s;
  std::vector<QueuedRequest> q = {s.add(1, 0, 1000), s.add(2, 0, 1000), s.add(3, 1, 1000)};
  FakeContext ctx;
  ctx.cached = {{1, 900}, {2, 800}, {3, 0}};
  ctx.slots = 2;
  LpmPolicy lpm(LpmOptions{});
  for (auto& r : q) lpm.enqueue(r);
  lpm.schedule(ctx);
  CHECK(ctx.admitted == std::vector<RequestHandle>{1, 2});
  // DLPM, Q^u = 100: both clients refilled to 100; request 1 costs 100 extend tokens and
  // exhausts client 0, so request 2 is skipped for client 1's request 3.
  DlpmOptions o;
  o.quantum = 100;
  DlpmPolicy dlpm(o);
  for (auto& r : q) dlpm.enqueue(r);
  FakeContext ctx2 = ctx;
  ctx2.admitted.clear();
  ctx2.slots = 2;
  dlpm.schedule(ctx2);
  CHECK(ctx2.admitted == std::vector<RequestHandle>{1, 3});
}

TEST_CASE("VTC serves the least-counted client and lifts a returning client to the smallest active counter") {
  VtcPolicy p(VtcOptions{});
  Specs s;
  FakeContext ctx;
  p.enqueue(s.add(1, 0, 100));
  p.enqueue(s.add(2, 0, 100));
  p.enqueue(s.add(3, 1, 10));
  ctx.slots = 1;
  p.schedule(ctx);  // tie at 0: lower client index
  CHECK(ctx.admitted.back() == 1);
  CHECK(p.counter(0) == 100);
  ctx.slots = 1;
  p.schedule(ctx);  // client 1 (counter 0) now
  CHECK(ctx.admitted.back() == 3);
  p.on_decode_tokens(1, 5);  // client 1 counter 10 + 2*5 = 20
  // Client 2 arrives after being idle: lifted to the smallest active counter (client 0's 100).
  p.enqueue(s.add(4, 2, 10));
  CHECK(p.counter(2) == 100);
  ctx.slots = 2;
  p.schedule(ctx);
  CHECK(ctx.admitted == std::vector<RequestHandle>{1, 3, 2, 4});
}

TEST_CASE("LPM in-queue dedup lets one request seed a shared uncached block per step") {
  Specs s;
  LpmPolicy p(LpmOptions{true, 0});
  FakeContext ctx;
  for (RequestHandle h = 1; h <= 4; ++h) p.enqueue(s.add(h, 0, 100));
  ctx.key = {{1, 7}, {2, 7}, {3, 7}, {4, 9}};
  p.schedule(ctx);
  CHECK(ctx.admitted == std::vector<RequestHandle>{1, 4});
  CHECK(p.queued() == 2);
}

TEST_CASE("Preble's local scheduler gives hit-ratio group g up to (g+1) times k admissions per visit") {
  Specs s;
  PrebleLocalPolicy p(PrebleLocalOptions{10, 1});
  FakeContext ctx;
  // Three requests in group 9 (hit 100%), three in group 0 (no hit).
  for (RequestHandle h = 1; h <= 6; ++h) {
    p.enqueue(s.add(h, 0, 100));
    ctx.cached[h] = h <= 3 ? 0 : 99;
  }
  ctx.slots = 5;
  p.schedule(ctx);
  // Visit 1: group 9 takes its three (quota 10), group 0 takes one (quota 1); visit 2: group 0 one more.
  CHECK(ctx.admitted == std::vector<RequestHandle>{4, 5, 6, 1, 2});
}

TEST_CASE("SJF orders by true output length and SRTF preempts the running request with the most remaining output") {
  Specs s;
  SjfPolicy sjf(SjfOptions{false});
  FakeContext ctx;
  sjf.enqueue(s.add(1, 0, 10, 500));
  sjf.enqueue(s.add(2, 0, 10, 5));
  sjf.enqueue(s.add(3, 0, 10, 50));
  sjf.schedule(ctx);
  CHECK(ctx.admitted == std::vector<RequestHandle>{2, 3, 1});

  SjfPolicy srtf(SjfOptions{true});
  FakeContext c2;
  c2.policy = &srtf;
  c2.slots = 0;
  QueuedRequest long_one = s.add(10, 0, 10, 1000), short_run = s.add(11, 0, 10, 20);
  c2.running_set = {{10, long_one.spec, 100}, {11, short_run.spec, 5}};
  srtf.enqueue(s.add(12, 0, 10, 30));
  srtf.schedule(c2);
  CHECK(c2.preempted == std::vector<RequestHandle>{10});
  CHECK(c2.admitted == std::vector<RequestHandle>{12});
  CHECK(srtf.queued() == 1);  // the preempted request waits with 900 tokens left
}
