// Conformance suite over EVERY registered local and global policy (the
// registries are iterated, so a new policy is covered by adding its registry
// line): on a memory-tight, multi-client, shared-prefix workload, no request
// is lost, KV use never exceeds capacity, the output is byte-identical across
// two runs, and no worker idles while a request that fits waits (the engine
// checks work conservation at every step; a violation throws). Then unit
// tests of the policies' decisions against a scripted AdmissionContext.
#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <set>
#include <type_traits>

#include "policies/d2lpm_policy.h"
#include "policies/dfs_weight_policy.h"
#include "policies/dlpm_policy.h"
#include "policies/lpm_policy.h"
#include "policies/ltr_policy.h"
#include "policies/policy_registry.h"
#include "policies/testing/policy_runs.h"
#include "costmodel/fixed_cost_model.h"
#include "policies/preble_e2_policy.h"
#include "policies/preble_local_policy.h"
#include "policies/simple_global_policies.h"
#include "policies/sjf_policy.h"
#include "policies/vtc_policy.h"

using namespace servesim;
using namespace servesim::testing;

namespace {


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
  cases.push_back({"{name: lpm, preset: sglang, fcfs_above: 6}", "round_robin"});
  cases.push_back({"{name: lpm, preset: sglang}", "round_robin"});
  cases.push_back({"preble_local", "{name: preble_e2, rebalance_every: 1}"});
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
    RunResult a = run_yaml(kMemoryTightWorkload, sets, name + "_a");
    RunResult b = run_yaml(kMemoryTightWorkload, sets, name + "_b");
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
    // policy_local / policy_global: name(parameters); the name is what counts here.
    auto name_of = [](const std::string& label) { return label.substr(0, label.find('(')); };
    locals_seen.insert(name_of(a.summary.at("policy_local")));
    globals_seen.insert(name_of(a.summary.at("policy_global")));
    MESSAGE(fmt::format("{:<52} {:<60} {:<13} hit {:.3f}  e2e mean {:.2f} s  preemptions {}", c.local, c.global,
                        c.mode, a.num("cache_hit_rate"), a.num("e2e_mean_s"), preemptions));
  }
  for (const auto& t : local_policy_types()) CHECK_MESSAGE(locals_seen.count(t.name) == 1, t.name);
  for (const auto& t : global_policy_types()) CHECK_MESSAGE(globals_seen.count(t.name) == 1, t.name);
}

// The same suite on a PD cluster (docs/simulation.md, "Prefill/decode
// disaggregation"): every global policy routes prefills over the prefill-capable
// pool (2 prefill-role + 1 mixed worker) and, where it can, picks decode
// workers over the decode-capable one (1 decode-role + the mixed worker), with
// slow RDMA links so transfers contend and tight memory so back-pressure
// happens; every other policy runs with layer-wise streaming. No request is
// lost across the hand-off, prefill-role workers never decode, and the runs
// are byte-identical.
TEST_CASE("every global policy loses no request across the PD hand-off and is deterministic") {
  std::string pd = kMemoryTightWorkload;
  pd.replace(pd.find("cluster: {workers: 3}"), 21,
             "cluster:\n  pools:\n    - {name: p, role: prefill, workers: 2}\n    - {name: d, role: decode}\n"
             "    - {name: m, role: mixed}\n  pd: {link: rdma}\nhardware: {name: slow_nic, interconnect: "
             "{rdma_nic_gbps: 0.5, rdma_latency_us: 100}}");
  pd.replace(pd.find("hardware: h100-sxm\n"), 18, "");
  int n = 0;
  for (const auto& t : global_policy_types()) {
    for (const char* decider : {"always", "prefix_aware"}) {
      Case c{"lpm", t.name};
      c.local = global_with_local(c);
      std::vector<std::string> sets = {"policy.local=" + c.local, "policy.global=" + c.global,
                                       std::string("cluster.pd.decider=") + decider};
      if (std::string(decider) == "prefix_aware") sets.push_back("cluster.pd.threshold_tokens=256");
      // Every other policy (both deciders) with layer-wise streaming: covered at no extra runs.
      const bool layerwise = (n / 2) % 2 == 1;
      if (layerwise) sets.push_back("cluster.pd.streaming=layerwise");
      // The decode side: the same policy where it can pick decode workers, else least_load.
      YAML::Node g;
      g["policy"]["global"] = t.name;
      YamlMap m(g, "<case>");
      YamlMap pm = m.map("policy");
      const bool decode_ok = parse_global_policy(pm, "global", "").requires_local.empty();
      sets.push_back("policy.decode_global=" + std::string(decode_ok ? t.name : "least_load"));
      CAPTURE(t.name);
      const std::string decider_name = decider;
      CAPTURE(decider_name);
      CAPTURE(layerwise);
      const std::string name = fmt::format("pd_conformance_{}", n++);
      RunResult a = run_yaml(pd, sets, name + "_a");
      RunResult b = run_yaml(pd, sets, name + "_b");
      CHECK(a.out.totals.requests == 360);
      CHECK(a.out.totals.finished == 360);
      CHECK(read_csv(a.dir + "/requests.csv").size() == 360);
      REQUIRE(a.out.workers.size() == 4);
      std::int64_t handoffs = 0, received = 0;
      for (const WorkerStats& w : a.out.workers) {
        CHECK(w.peak_kv_pages <= w.kv_capacity_pages);
        handoffs += w.handoffs;
        received += w.received;
      }
      CHECK(a.out.workers[0].decode_tokens == 0);  // prefill-role workers never decode
      CHECK(a.out.workers[1].decode_tokens == 0);
      CHECK(handoffs == received);
      CHECK(handoffs > 0);
      for (const char* f : {"requests.csv", "clients.csv", "workers.csv", "summary.csv", "config.resolved.yaml"})
        CHECK_MESSAGE(slurp(a.dir + "/" + f) == slurp(b.dir + "/" + f), f);
      MESSAGE(fmt::format("PD {:<12} {:<13} {:<9} e2e mean {:.2f} s  handoffs {}", t.name, decider,
                          layerwise ? "layerwise" : "none", a.num("e2e_mean_s"), handoffs));
    }
  }
}

TEST_CASE("a global policy that needs a local policy rejects any other") {
  YAML::Node root = YAML::Load(kMemoryTightWorkload);
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
  mutable int cached_reads = 0;  // cached_tokens() calls

  Time now() const override { return 0; }
  AdmitResult try_admit(const QueuedRequest& r) override {
    if (slots <= 0) return AdmitResult::kNoSlot;
    --slots;
    admitted.push_back(r.handle);
    return AdmitResult::kAdmitted;
  }
  std::int64_t cached_tokens(const QueuedRequest& r) const override {
    ++cached_reads;
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

TEST_CASE("LPM and DLPM skip a step without room: no match read, and the next step admits as if it had not been") {
  Specs s;
  std::vector<QueuedRequest> q = {s.add(1, 0, 1000), s.add(2, 0, 1000), s.add(3, 1, 1000)};
  auto check = [&](auto make) {
    auto skipped = make(), plain = make();
    for (auto& r : q) {
      skipped.enqueue(r);
      plain.enqueue(r);
    }
    FakeContext full;
    full.cached = {{1, 900}, {2, 800}, {3, 0}};
    full.slots = 0;  // no running slot: has_room() is false
    skipped.schedule(full);
    CHECK(full.cached_reads == 0);
    CHECK(full.admitted.empty());
    CHECK(skipped.queued() == 3);
    FakeContext a = full, b = full;
    a.slots = b.slots = 2;
    skipped.schedule(a);
    plain.schedule(b);
    CHECK(a.admitted == b.admitted);
    CHECK(a.admitted.size() == 2);
    CHECK(skipped.queued() == plain.queued());
  };
  DlpmOptions o;
  o.quantum = 100;
  check([&] { return DlpmPolicy(o); });
  check([] { return LpmPolicy(LpmOptions{}); });
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

TEST_CASE("VTC lifts a returning client to the current counter of the last client that left") {
  VtcPolicy p(VtcOptions{});
  Specs s;
  FakeContext ctx;
  p.enqueue(s.add(1, 0, 100));
  ctx.slots = 1;
  p.schedule(ctx);  // client 0 leaves the queue at counter 100
  CHECK(p.counter(0) == 100);
  p.on_decode_tokens(0, 50);  // its request decodes on: counter 200
  // No client is queued: client 1 is lifted to client 0's counter now (200), not at the time it left (100).
  p.enqueue(s.add(2, 1, 10));
  CHECK(p.counter(1) == 200);
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

namespace {
void set_blocks(Specs& s, std::vector<BlockHash> blocks) {
  s.v.back().prefix_block_size = 16;
  s.v.back().prefix_blocks = std::move(blocks);
}
}  // namespace

TEST_CASE("SGLang's LPM preset falls back to FCFS above 128 waiting requests, the ideal LPM does not") {
  Specs s;
  LpmOptions sg;
  sg.sglang = true;
  sg.fcfs_above = 128;
  sg.in_batch_check = true;
  LpmPolicy ideal(LpmOptions{}), sglang(sg);
  FakeContext a, b;
  for (RequestHandle h = 1; h <= 130; ++h) {
    const QueuedRequest q = s.add(h, 0, 100);
    ideal.enqueue(q);
    sglang.enqueue(q);
  }
  a.cached[130] = b.cached[130] = 90;
  a.slots = b.slots = 1;
  ideal.schedule(a);
  sglang.schedule(b);
  CHECK(a.admitted == std::vector<RequestHandle>{130});
  CHECK(b.admitted == std::vector<RequestHandle>{1});
}

TEST_CASE("SGLang's in-batch prefix check moves a request sharing >= 32 tokens with an earlier one to the end") {
  Specs s;
  std::vector<QueuedRequest> q;
  q.push_back(s.add(1, 0, 100));
  set_blocks(s, {1, 2, 3, 4, 5, 6, 7});
  q.push_back(s.add(2, 0, 100));
  set_blocks(s, {1, 2, 3, 40, 50, 60, 70});  // shares 48 tokens with request 1
  q.push_back(s.add(3, 0, 100));
  set_blocks(s, {100, 200, 300, 400, 500, 600, 700});
  q.push_back(s.add(4, 0, 100));
  set_blocks(s, {100, 201, 301, 401, 501, 601, 701});  // shares 16 tokens with 3: below the threshold
  LpmOptions o;
  o.in_batch_check = true;
  LpmPolicy sglang(o), ideal(LpmOptions{});
  FakeContext a, b;
  for (const auto& r : q) {
    sglang.enqueue(r);
    ideal.enqueue(r);
  }
  sglang.schedule(a);
  ideal.schedule(b);
  CHECK(a.admitted == std::vector<RequestHandle>{1, 3, 4, 2});  // deprioritised, not skipped
  CHECK(b.admitted == std::vector<RequestHandle>{1, 2, 3, 4});
}

TEST_CASE("SGLang's dfs-weight serves the heaviest cached subtree first where LPM serves the longest match") {
  Specs s;
  std::vector<QueuedRequest> q;
  FakeContext a, b;
  q.push_back(s.add(1, 0, 100));  // cached: block 5, 6 (one request below [5, 6])
  set_blocks(s, {5, 6, 7});
  q.push_back(s.add(2, 0, 100));  // cached: block 1 (two requests below [1])
  set_blocks(s, {1, 2});
  q.push_back(s.add(3, 0, 100));
  set_blocks(s, {1, 3});
  q.push_back(s.add(4, 0, 100));  // nothing cached
  set_blocks(s, {9});
  a.cached = b.cached = {{1, 32}, {2, 16}, {3, 16}, {4, 0}};
  DfsWeightPolicy dfs;
  LpmPolicy lpm(LpmOptions{});
  for (const auto& r : q) {
    dfs.enqueue(r);
    lpm.enqueue(r);
  }
  dfs.schedule(a);
  lpm.schedule(b);
  CHECK(a.admitted == std::vector<RequestHandle>{2, 3, 1, 4});
  CHECK(b.admitted == std::vector<RequestHandle>{1, 2, 3, 4});
}

TEST_CASE("Preble's local scheduler serves one hit-ratio group per step with a rotation kept across steps") {
  Specs s;
  PrebleLocalPolicy p(PrebleLocalOptions{10, 1});
  FakeContext ctx;
  // Three requests in group 9 (hit 99%), three in group 0 (no hit).
  for (RequestHandle h = 1; h <= 6; ++h) {
    p.enqueue(s.add(h, 0, 100));
    ctx.cached[h] = h <= 3 ? 0 : 99;
  }
  ctx.slots = 100;
  p.schedule(ctx);
  // Step 1 serves group 9 only (quota 10): the old scheduler went on to group 0 in the same step.
  CHECK(ctx.admitted == std::vector<RequestHandle>{4, 5, 6});
  p.schedule(ctx);  // the pointer moved on: groups 8..1 are empty, group 0 takes one (quota 1)
  CHECK(ctx.admitted == std::vector<RequestHandle>{4, 5, 6, 1});
  // A new group-9 request arrives; the pointer wrapped to 9, so it goes next, then group 0 again.
  p.enqueue(s.add(7, 0, 100));
  ctx.cached[7] = 99;
  p.schedule(ctx);
  CHECK(ctx.admitted.back() == 7);
  p.schedule(ctx);
  CHECK(ctx.admitted.back() == 2);
  // The group is fixed on entry: request 3 stays in group 0 although its hit is now 100%.
  ctx.cached[3] = 99;
  p.enqueue(s.add(8, 0, 100));
  ctx.cached[8] = 99;
  p.schedule(ctx);
  CHECK(ctx.admitted.back() == 8);
  CHECK(p.group_size(0) == 1);
  CHECK(p.queued() == 1);
}

namespace {
// Admits every request except the handles listed as too big for free memory.
class NoMemoryContext final : public AdmissionContext {
 public:
  std::vector<RequestHandle> too_big, admitted;
  Time now() const override { return 0; }
  AdmitResult try_admit(const QueuedRequest& r) override {
    if (std::find(too_big.begin(), too_big.end(), r.handle) != too_big.end()) return AdmitResult::kNoMemory;
    admitted.push_back(r.handle);
    return AdmitResult::kAdmitted;
  }
  std::int64_t cached_tokens(const QueuedRequest&) const override { return 0; }
  std::uint64_t uncached_prefix_key(const QueuedRequest&) const override { return 0; }
  std::int64_t running() const override { return 1; }
  bool has_room() const override { return true; }
  void running_requests(std::vector<RunningRequest>&) const override {}
  bool preempt(RequestHandle) override { return false; }
};
}  // namespace

TEST_CASE("Preble's local scheduler skips a request that does not fit instead of stopping") {
  Specs s;
  PrebleLocalPolicy p(PrebleLocalOptions{10, 2});
  for (RequestHandle h = 1; h <= 4; ++h) p.enqueue(s.add(h, 0, 100));
  NoMemoryContext ctx;
  ctx.too_big = {1};
  p.schedule(ctx);  // group 0, quota 2: request 1 is skipped, 2 and 3 join
  CHECK(ctx.admitted == std::vector<RequestHandle>{2, 3});
  ctx.too_big.clear();
  p.schedule(ctx);  // request 1 kept its place ahead of request 4
  CHECK(ctx.admitted == std::vector<RequestHandle>{2, 3, 1, 4});
  CHECK(p.queued() == 0);
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

namespace {

class FakeCluster final : public ClusterView {
 public:
  explicit FakeCluster(std::size_t n) : model_(FixedCostOptions{kNsPerMs, 10 * 1000, 0}), n_(n) {}
  Time t = 0;
  Time now() const override { return t; }
  std::size_t workers() const override { return n_; }
  std::vector<std::int64_t> waiting = std::vector<std::int64_t>(8, 0);
  WorkerLoad load(WorkerId w) const override {
    WorkerLoad l;
    l.waiting = waiting[w];
    l.kv_capacity_pages = 100000;
    l.page_size = 16;
    return l;
  }
  const CostModel& cost_model(WorkerId) const override { return model_; }

 private:
  FixedCostModel model_;
  std::size_t n_;
};

// A 2000-token prompt: 1920 tokens of template `p`, then 80 unique tokens.
RequestSpec templated(RequestId id, int p, Time at) {
  RequestSpec s;
  s.id = id;
  s.arrival = at;
  s.prompt_tokens = 2000;
  s.output_tokens = 10;
  s.prefix_block_size = 16;
  for (int i = 0; i < 125; ++i)
    s.prefix_blocks.push_back(i < 120 ? static_cast<BlockHash>(p * 1000 + i + 1) : static_cast<BlockHash>(id * 1000 + i + 7'000'000));
  return s;
}

std::vector<WorkerId> holders(const PrebleE2Policy& e2, int p) {
  std::vector<std::int64_t> per;
  e2.view().match(templated(999'999, p, 0), per);
  std::vector<WorkerId> out;
  for (WorkerId w = 0; w < per.size(); ++w)
    if (per[w] >= 1920) out.push_back(w);
  return out;
}

}  // namespace

TEST_CASE("Preble E2 keeps four hot prefixes on one worker each at light load and replicates a sustained hot spot") {
  PrebleE2Policy e2(PrebleE2Options{}, 4);
  FakeCluster c(4);
  RequestId id = 0;
  auto send = [&](int p, double latency_s) {
    c.t += 100 * kNsPerMs;
    const RequestSpec r = templated(++id, p, c.t);
    const WorkerId w = e2.route(r, c);
    e2.on_finish(r, w, c.t + seconds_to_time(latency_s));
    return w;
  };
  // Light load, uneven popularity (2:1:1:1): the old rule re-routed an exploit whenever its holder's
  // load exceeded 1.5x the smallest (idle workers at 0 included) and copied the prefixes at once.
  const int pattern[] = {0, 0, 1, 2, 3};
  for (int i = 0; i < 1000; ++i) send(pattern[i % 5], 0.05);
  for (int p = 0; p < 4; ++p) {
    CAPTURE(p);
    CHECK(holders(e2, p).size() == 1);
  }
  CHECK(e2.counts().checks == 1000 / 200);
  CHECK(e2.counts().moved_subtrees == 0);
  CHECK(e2.counts().replicated == 0);
  const std::vector<WorkerId> home = holders(e2, 0);
  // A sustained hot spot on prefix 0: its TTFT keeps rising; the overload detector fires at a check
  // and the next request for it gets a second home.
  for (int i = 0; i < 1200; ++i) {
    const int p = i % 5 == 4 ? 1 + (i / 5) % 3 : 0;
    send(p, p == 0 ? 0.05 * (1 + i / 40.0) : 0.05);
  }
  CHECK(e2.counts().replicated >= 1);
  CHECK(holders(e2, 0).size() >= 2);
  for (int p = 1; p < 4; ++p) CHECK(holders(e2, p).size() == 1);
  MESSAGE(fmt::format("prefix 0 first held by worker {}, now by {} workers; checks {}, moves {}, replications {}",
                      home.front(), holders(e2, 0).size(), e2.counts().checks, e2.counts().moved_subtrees,
                      e2.counts().replicated));
}

TEST_CASE("Preble E2 counts a request's decode in its worker's load only until it finishes, so a backlog shows") {
  // FakeCluster: a step costs 1 ms + 10 us per prefill token; nothing runs, so a
  // worker's TPOT is one 1 ms decode step. E[out] is the prior, 256 tokens,
  // until a request finishes.
  PrebleE2Policy e2(PrebleE2Options{}, 2);
  FakeCluster c(2);
  const double prefill = 0.001 + 2000 * 10e-6, decode = 256 * 0.001;
  RequestSpec a = templated(1, 0, c.t);
  a.output_tokens = 1000;  // a long answer
  REQUIRE(e2.route(a, c) == 0);
  CHECK(e2.window_load(0) == doctest::Approx(prefill + decode));
  const RequestSpec z = templated(2, 9, c.t);  // another template: the idle worker
  REQUIRE(e2.route(z, c) == 1);
  c.t += seconds_to_time(2.0);
  e2.on_finish(a, 0, c.t);
  // Worker 0's request is done: its prefill stays in the window, its decode leaves.
  CHECK(e2.window_load(0) == doctest::Approx(prefill));
  CHECK(e2.window_load(1) == doctest::Approx(prefill + decode));
  // So a third template goes to worker 0, not to the worker still decoding. (Counting
  // finished requests' decode at their true length, as servesim did before, gave
  // worker 0 a load of 0.021 + 1.0 s against worker 1's 0.277 s: the busy worker won.)
  CHECK(e2.route(templated(3, 2, c.t), c) == 0);
  // The window forgets entries as it goes; a finish after its entry left changes nothing.
  c.t += PrebleE2Options{}.window + 1;
  REQUIRE(e2.route(templated(4, 3, c.t), c) == 0);
  e2.on_finish(z, 1, c.t);
  CHECK(e2.window_load(1) == doctest::Approx(0.0));
}

TEST_CASE("Preble E2 moves a whole prefix subtree from the heaviest to the lightest worker") {
  GlobalPrefixIndex v(3);
  const RequestSpec a = templated(1, 0, 0), b = templated(2, 0, 0), x = templated(3, 5, 0);
  v.record(a, 0);
  v.record(b, 0);  // same template, another suffix: one subtree with two leaves
  v.record(x, 0);
  std::vector<std::int64_t> per;
  const GlobalPrefixIndex::Match m = v.match(a, per);
  const IndexNodeId t = v.top_of(m.node);
  const std::int64_t held = v.held_tokens(0);
  const std::int64_t moved = v.move_subtree(t, 0, 2);
  CHECK(moved == 1920 + 2 * 80);
  CHECK(v.held_tokens(0) == held - moved);
  CHECK(v.held_tokens(2) == moved);
  v.match(b, per);
  CHECK(per == std::vector<std::int64_t>{0, 0, 2000});
  v.match(x, per);
  CHECK(per[0] == 2000);
  v.check_invariants();
}

TEST_CASE("preemptive LTR preempts a lower-ranked running request for a running slot, as vLLM-LTR does") {
  for (bool for_slots : {true, false}) {
    CAPTURE(for_slots);
    Specs s;
    LtrOptions o;
    o.ranker = LtrOptions::Ranker::kNoisyOracle;
    o.tau = 1.0;
    o.preemptive = true;
    o.preempt_for_slots = for_slots;
    o.promoted_by_score = true;
    LtrPolicy p(o, 1);
    FakeContext ctx;
    ctx.policy = &p;
    const QueuedRequest long_one = s.add(10, 0, 10, 1000);
    p.enqueue(long_one);
    ctx.slots = 1;
    p.schedule(ctx);
    REQUIRE(ctx.admitted == std::vector<RequestHandle>{10});
    ctx.running_set = {{10, long_one.spec, 5}};
    ctx.slots = 0;  // the running cap is reached; memory is plenty
    p.enqueue(s.add(11, 0, 10, 20));
    p.schedule(ctx);
    if (for_slots) {
      CHECK(ctx.preempted == std::vector<RequestHandle>{10});
      CHECK(ctx.admitted == std::vector<RequestHandle>{10, 11});
    } else {
      CHECK(ctx.preempted.empty());
      CHECK(ctx.admitted == std::vector<RequestHandle>{10});
    }
  }
}

TEST_CASE("D2LPM records a routed prefix at routing and charges extend tokens, so a template stays on its worker") {
  D2lpmPolicy d2(D2lpmOptions{}, 4);
  FakeCluster c(4);
  const double q = D2lpmOptions{}.quantum;
  // Four requests of template 0 from two clients, none finished yet: the old view (updated at
  // finish + 0.1 s) saw nothing and sent each to the shortest queue, one per worker.
  for (RequestId id = 1; id <= 4; ++id) {
    RequestSpec r = templated(id, 0, c.t);
    r.client = static_cast<ClientId>(id % 2);
    const WorkerId w = d2.route(r, c);
    c.waiting[w]++;
    CHECK(w == 0);
  }
  // Client 1 paid the whole prompt once (its first request), then its 80-token suffixes.
  CHECK(d2.deficit(1, 0) == doctest::Approx(q - 2000 - 80));
  CHECK(d2.deficit(0, 0) == doctest::Approx(q - 80 - 80));
  // Another template goes to the shortest queue.
  CHECK(d2.route(templated(5, 1, c.t), c) == 1);
}

TEST_CASE("LTR orders promoted (starving) requests by score in vLLM-LTR's mode and by promotion otherwise") {
  for (bool by_score : {true, false}) {
    CAPTURE(by_score);
    Specs s;
    LtrOptions o;
    o.ranker = LtrOptions::Ranker::kNoisyOracle;
    o.tau = 1.0;
    o.starvation_threshold = 2;
    o.promoted_by_score = by_score;
    LtrPolicy p(o, 1);
    FakeContext ctx;
    ctx.slots = 0;  // nothing can join: both requests starve
    p.enqueue(s.add(1, 0, 10, 1000));  // long: promoted first
    p.schedule(ctx);
    p.enqueue(s.add(2, 0, 10, 10));  // short: promoted one step later
    for (int i = 0; i < 4; ++i) p.schedule(ctx);
    REQUIRE(p.promotions() == 2);
    ctx.slots = 1;
    p.schedule(ctx);
    CHECK(ctx.admitted == std::vector<RequestHandle>{by_score ? RequestHandle{2} : RequestHandle{1}});
  }
}

TEST_CASE("exactly the policies that count decode tokens say so (the worker calls them only then)") {
  // Worker::finish_iteration calls on_decode_tokens once per token only for a
  // policy whose counts_decode_tokens() is true (local_policy.h): DLPM's
  // deficits and VTC's counters. Every other registered policy ignores them.
  const std::set<std::string> counting = {"dlpm", "vtc"};
  for (const auto& t : local_policy_types()) {
    YamlMap m(YAML::Load("local: " + t.name), "<case>");
    const ParsedPolicy<LocalPolicy> p = parse_local_policy(m, "local", "fcfs");
    const std::unique_ptr<LocalPolicy> policy = p.make(PolicyContext{2, 1});
    CHECK_MESSAGE(policy->counts_decode_tokens() == (counting.count(t.name) == 1), t.name);
    // Those two let the decode lane report a step's tokens before its finishes
    // (finish_ignores_decode_tokens): neither has an on_finish of its own.
    CHECK_MESSAGE(policy->finish_ignores_decode_tokens() == (counting.count(t.name) == 1), t.name);
    // DLPM reads its deficits only in schedule() while requests wait, so the worker
    // may hold its tokens until then (defers_decode_tokens; sim/simulation_test.cc
    // compares a run holding them with one that does not). VTC reads its counters
    // when a client returns (enqueue), so it does not say so.
    CHECK_MESSAGE(policy->defers_decode_tokens() == (t.name == "dlpm"), t.name);
  }
  static_assert(std::is_same_v<decltype(&DlpmPolicy::on_finish), void (LocalPolicy::*)(const RequestSpec&)>,
                "DLPM says its on_finish ignores decode tokens: it has none of its own");
  static_assert(std::is_same_v<decltype(&VtcPolicy::on_finish), void (LocalPolicy::*)(const RequestSpec&)>,
                "VTC says its on_finish ignores decode tokens: it has none of its own");
}

TEST_CASE("on_decode_token_each(c, n) equals n calls of on_decode_tokens(c, 1), bit for bit") {
  // The decode lane reports a step's tokens per client (local_policy.h); DLPM
  // and VTC override it with a loop of the same charges. Weights that round
  // (0.1, 1/3) and large counts make any reassociation show.
  for (const double w : {1.0, 0.1, 1.0 / 3.0, 2.5}) {
    DlpmOptions d;
    d.w_out = w;
    DlpmPolicy one_d(d), each_d(d);
    VtcOptions v;
    v.w_out = w;
    VtcPolicy one_v(v), each_v(v);
    for (const std::int64_t n : {1, 2, 7, 1000, 33333}) {
      for (const ClientId c : {ClientId{0}, ClientId{3}}) {
        for (std::int64_t i = 0; i < n; ++i) {
          one_d.on_decode_tokens(c, 1);
          one_v.on_decode_tokens(c, 1);
        }
        each_d.on_decode_token_each(c, n);
        each_v.on_decode_token_each(c, n);
        CHECK(one_d.deficit(c) == each_d.deficit(c));
        CHECK(one_v.counter(c) == each_v.counter(c));
      }
    }
  }
  // Whole-number charges past 2^53 round: the one-addition shortcut for whole numbers
  // (charge_repeated) must not be taken there (2^53 + 1 rounds back to 2^53, three times over).
  DlpmOptions d;
  d.w_out = 1.0;
  DlpmPolicy one_d(d), each_d(d);
  VtcOptions v;
  v.w_out = 1.0;
  VtcPolicy one_v(v), each_v(v);
  const std::int64_t big = std::int64_t{1} << 53;
  one_d.on_decode_tokens(0, big);
  each_d.on_decode_tokens(0, big);
  one_v.on_decode_tokens(0, big);
  each_v.on_decode_tokens(0, big);
  for (int i = 0; i < 3; ++i) {
    one_d.on_decode_tokens(0, 1);
    one_v.on_decode_tokens(0, 1);
  }
  each_d.on_decode_token_each(0, 3);
  each_v.on_decode_token_each(0, 3);
  CHECK(one_d.deficit(0) == -9007199254740992.0);
  CHECK(each_d.deficit(0) == one_d.deficit(0));
  CHECK(one_v.counter(0) == 9007199254740992.0);
  CHECK(each_v.counter(0) == one_v.counter(0));
}

TEST_CASE("least-outstanding routing takes the worker with the fewest waiting + running, the lowest id among ties") {
  FakeCluster c(5);
  LeastOutstandingPolicy p;
  RequestSpec r;
  c.waiting = {3, 1, 4, 1, 2, 0, 0, 0};
  CHECK(c.least_outstanding() == 1);
  CHECK(p.route(r, c) == 1);
  c.waiting = {2, 2, 2, 2, 2, 0, 0, 0};
  CHECK(p.route(r, c) == 0);
  c.waiting = {5, 4, 3, 2, 1, 0, 0, 0};  // (workers beyond workers() are not looked at)
  CHECK(p.route(r, c) == 4);
}
