// Behaviour tests: the effects the scheduling papers claim, on small
// deterministic workloads (Llama-3-8B on H100 with the roofline cost model;
// KV memory shrunk through memory_utilization so that caches matter). Each
// test prints its measured values (MESSAGE) and asserts the stated
// inequality with a clear margin.
#include <doctest/doctest.h>

#include "policies/testing/policy_runs.h"
#include "sim/cli/bench_scenarios.h"

using namespace servesim;
using namespace servesim::testing;

namespace {

std::string fmt_s(double s) { return fmt::format("{:.2f} s", s); }

// 1. Many requests sharing a few long prefixes; the cache (~27K tokens) holds
// only about half of the 16 templates (~3K tokens each).
const char* kSharedPrefixes = R"(name: shared_prefixes
seed: 7
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 1}
batching: {memory_utilization: 0.27}
policy: {local: fcfs, global: round_robin}
workload:
  type: templates
  requests: 1200
  block_size: 16
  pools:
    - {name: docs, count: 16, zipf: 0, tokens: {dist: uniform, min: 2500, max: 3500}}
  clients:
    - {name: a, rate: 40, pool: docs, prompt: {dist: uniform, min: 20, max: 200}, output: {dist: uniform, min: 20, max: 200}}
report: {requests_csv: false}
)";

// 2/3. Client `flood` sends far more than the worker can serve, all sharing one
// 4000-token document; client `modest` sends unique 1.5-2.5K-token prompts.
const char* kFlood = R"(name: flood
seed: 3
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 1}
batching: {memory_utilization: 0.3}
policy: {local: fcfs, global: round_robin}
workload:
  type: templates
  duration_s: 60
  block_size: 16
  pools:
    - {name: a_doc, count: 1, tokens: 4000}
  clients:
    - {name: flood, rate: 60, pool: a_doc, prompt: {dist: uniform, min: 20, max: 100}, output: {dist: uniform, min: 50, max: 150}}
    - {name: modest, rate: 3, prompt: {dist: uniform, min: 1500, max: 2500}, output: {dist: uniform, min: 50, max: 150}}
cost_model: {backend: roofline, model: flat}  # pinned: its margins were set under the flat roofline
report: {requests_csv: false}
)";

// 4a. Four workers, 60 Zipf-popular system prompts; each worker's KV holds ~75K
// tokens, about half of all templates.
const char* kZipfTemplates = R"(name: zipf_templates
seed: 11
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 4}
batching: {memory_utilization: 0.35}
policy: {local: lpm, global: round_robin}
workload:
  type: templates
  requests: 6000
  block_size: 16
  pools:
    - {name: sys, count: 60, zipf: 1.1, tokens: {dist: uniform, min: 2000, max: 4000}}
  clients:
    - {name: a, rate: 60, pool: sys, prompt: {dist: lognormal, median: 150, sigma: 0.7, max: 2000},
       output: {dist: lognormal, median: 120, sigma: 0.7, max: 1000}}
    - {name: b, rate: 40, pool: sys, prompt: {dist: lognormal, median: 150, sigma: 0.7, max: 2000},
       output: {dist: lognormal, median: 120, sigma: 0.7, max: 1000}}
report: {requests_csv: false}
)";

// 4b. Four workers; `flood` overloads the cluster with two long shared
// documents, `b` (own templates) and `c` (unique prompts) send modest traffic.
const char* kMultiTenant = R"(name: multi_tenant
seed: 5
horizon_s: 30
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 4}
batching: {memory_utilization: 0.35}
policy: {local: lpm, global: cache_aware}
workload:
  type: templates
  duration_s: 30
  block_size: 16
  pools:
    - {name: a_doc, count: 2, zipf: 0, tokens: 4000}
    - {name: b_doc, count: 20, zipf: 1.0, tokens: {dist: uniform, min: 500, max: 1500}}
  clients:
    - {name: flood, rate: 250, pool: a_doc, prompt: {dist: uniform, min: 20, max: 100}, output: {dist: uniform, min: 50, max: 150}}
    - {name: b, rate: 8, pool: b_doc, prompt: {dist: uniform, min: 500, max: 1500}, output: {dist: uniform, min: 50, max: 150}}
    - {name: c, rate: 8, prompt: {dist: uniform, min: 1000, max: 2000}, output: {dist: uniform, min: 50, max: 150}}
report: {requests_csv: false}
)";

// 4c. configs/scenarios/hot_templates.yaml: 16 hot 6000-token templates shared by four
// clients over 4 workers at a load the cluster serves easily; each worker's KV holds
// about 10 templates, so a router that spreads templates thrashes the caches.
const char* kHotTemplates = R"(name: hot_templates
seed: 13
horizon_s: 90
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 4}
batching: {memory_utilization: 0.3}
policy: {local: dlpm, global: d2lpm}
workload:
  type: templates
  duration_s: 60
  block_size: 16
  pools:
    - {name: hot, count: 16, zipf: 0, tokens: 6000}
  clients:
    - {name: a, rate: 6, pool: hot, prompt: {dist: uniform, min: 50, max: 300}, output: {dist: uniform, min: 50, max: 300}}
    - {name: b, rate: 6, pool: hot, prompt: {dist: uniform, min: 50, max: 300}, output: {dist: uniform, min: 50, max: 300}}
    - {name: c, rate: 6, pool: hot, prompt: {dist: uniform, min: 50, max: 300}, output: {dist: uniform, min: 50, max: 300}}
    - {name: d, rate: 6, pool: hot, prompt: {dist: uniform, min: 50, max: 300}, output: {dist: uniform, min: 50, max: 300}}
report: {requests_csv: false}
)";

// 5. One worker with 8 running slots near saturation; heavy-tailed outputs.
const char* kHeavyTail = R"(name: heavy_tail
seed: 9
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 1}
batching: {max_running: 8}
policy: {local: fcfs, global: round_robin}
workload:
  type: synthetic
  requests: 3000
  clients:
    - {name: a, rate: 5.5, prompt: {dist: lognormal, median: 300, sigma: 0.5, max: 2000},
       output: {dist: lognormal, median: 60, sigma: 1.5, max: 4000}}
cost_model: {backend: roofline, model: flat}  # pinned: its margins were set under the flat roofline
report: {requests_csv: false}
)";

double share(const RunResult& r, std::size_t client, const char* col) {
  double total = 0;
  for (std::size_t c = 0; c < r.clients.size(); ++c) total += r.client(c, col);
  return r.client(client, col) / total;
}

}  // namespace

TEST_CASE("1: with many requests sharing a few long prefixes LPM's hit rate and throughput clearly beat FCFS") {
  RunResult fcfs = run_yaml(kSharedPrefixes, {"policy.local=fcfs"}, "b1_fcfs");
  RunResult lpm = run_yaml(kSharedPrefixes, {"policy.local=lpm"}, "b1_lpm");
  MESSAGE(fmt::format("FCFS: hit {:.3f}, throughput {:.2f} req/s, e2e mean {}", fcfs.num("cache_hit_rate"),
                      fcfs.num("throughput_rps"), fmt_s(fcfs.num("e2e_mean_s"))));
  MESSAGE(fmt::format("LPM:  hit {:.3f}, throughput {:.2f} req/s, e2e mean {}", lpm.num("cache_hit_rate"),
                      lpm.num("throughput_rps"), fmt_s(lpm.num("e2e_mean_s"))));
  CHECK(lpm.num("cache_hit_rate") > fcfs.num("cache_hit_rate") + 0.2);
  CHECK(lpm.num("throughput_rps") > 1.5 * fcfs.num("throughput_rps"));
}

TEST_CASE("2: a flooding client starves a modest one under LPM while VTC and DLPM keep the backlogged difference bounded") {
  // Latency and backlogged differences over the whole run; shares of service in the contended first 60 s.
  const double qu = 2048;          // DLPM's default Q^u
  const double max_cost = 2500 + 2 * 150;  // largest request: w_in · 2500 extend + w_out · 150 output
  struct Row {
    const char* name;
    std::string local;
    RunResult full, window, longer;
  };
  std::vector<Row> rows = {{"LPM", "lpm", {}, {}, {}}, {"VTC", "vtc", {}, {}, {}}, {"DLPM", "dlpm", {}, {}, {}}};
  for (Row& r : rows) {
    r.full = run_yaml(kFlood, {"policy.local=" + r.local}, std::string("b2_full_") + r.local);
    r.window = run_yaml(kFlood, {"policy.local=" + r.local, "horizon_s=60"}, std::string("b2_win_") + r.local);
    r.longer = run_yaml(kFlood, {"policy.local=" + r.local, "workload.duration_s=120"}, std::string("b2_long_") + r.local);
    MESSAGE(fmt::format(
        "{:<4}: modest's share of service in 0-60 s {:.3f} (extend {:.3f}); modest e2e mean {} p99 {}; backlogged "
        "diff max {:.0f} (extend {:.0f}), mean {:.0f} (extend {:.0f}); with 120 s of arrivals: diff max {:.0f} (extend {:.0f})",
        r.name, share(r.window, 1, "service"), share(r.window, 1, "extend_service"),
        fmt_s(r.full.client(1, "e2e_mean_s")), fmt_s(r.full.client(1, "e2e_p99_s")), r.full.num("service_diff_max"),
        r.full.num("extend_service_diff_max"), r.full.num("service_diff_mean"), r.full.num("extend_service_diff_mean"),
        r.longer.num("service_diff_max"), r.longer.num("extend_service_diff_max")));
  }
  const Row &lpm = rows[0], &vtc = rows[1], &dlpm = rows[2];
  MESSAGE(fmt::format("DLPM extend diff max / (Q^u + largest request cost) = {:.0f} / ({:.0f} + {:.0f}) = {:.2f}",
                      dlpm.full.num("extend_service_diff_max"), qu, max_cost,
                      dlpm.full.num("extend_service_diff_max") / (qu + max_cost)));
  // LPM: the modest client's share collapses and its latency explodes.
  CHECK(share(lpm.window, 1, "extend_service") < 0.25 * share(vtc.window, 1, "extend_service"));
  CHECK(share(lpm.window, 1, "extend_service") < 0.25 * share(dlpm.window, 1, "extend_service"));
  CHECK(lpm.full.client(1, "e2e_mean_s") > 5 * vtc.full.client(1, "e2e_mean_s"));
  CHECK(lpm.full.client(1, "e2e_mean_s") > 5 * dlpm.full.client(1, "e2e_mean_s"));
  // VTC (charging all prompt tokens) bounds the service difference, DLPM (charging
  // extend tokens) the extend-service difference, both far below LPM's ...
  CHECK(vtc.full.num("service_diff_max") < 0.05 * lpm.full.num("service_diff_max"));
  CHECK(dlpm.full.num("extend_service_diff_max") < 0.05 * lpm.full.num("extend_service_diff_max"));
  // ... within a few (Q^u + largest request cost) ...
  CHECK(dlpm.full.num("extend_service_diff_max") < 8 * (qu + max_cost));
  // ... and they do not grow with the length of the contention, while LPM's does.
  CHECK(lpm.longer.num("extend_service_diff_max") > 1.6 * lpm.full.num("extend_service_diff_max"));
  CHECK(dlpm.longer.num("extend_service_diff_max") < 1.3 * dlpm.full.num("extend_service_diff_max"));
  CHECK(vtc.longer.num("service_diff_max") < 1.3 * vtc.full.num("service_diff_max"));
}

// Admissions (first admissions, within the run) and their mean queueing delay per client, from requests.csv.
struct Admissions {
  double count[2] = {0, 0};
  double wait_s[2] = {0, 0};
  double mean_wait(std::size_t c) const { return count[c] > 0 ? wait_s[c] / count[c] : 0; }
};

Admissions admissions(const RunResult& r) {
  Admissions a;
  for (auto& row : read_csv(r.dir + "/requests.csv")) {
    if (row.at("admitted_s").empty()) continue;
    const std::size_t c = row.at("client") == "1" ? 1 : 0;
    a.count[c] += 1;
    a.wait_s[c] += std::stod(row.at("admitted_s")) - std::stod(row.at("arrival_s"));
  }
  return a;
}

TEST_CASE("2b: Preble's local scheduler gives the unique-prompt client its group's share under the flood where LPM starves it") {
  // modest's requests sit in hit group 0 (quota k), flood's in group 9 (quota 10k); with one group served
  // per step and the rotation kept across steps, group 0 gets every other step instead of none. When both
  // groups have more waiting than fits, group 0's quota share of the admissions is k / (k + 10k) = 1/11;
  // modest then gets min(its arrivals, 1/11 of all admissions).
  const double quota_share = 1.0 / 11.0;
  auto expected = [&](const RunResult& r, const Admissions& a) {
    return std::min(r.client(1, "requests"), quota_share * (a.count[0] + a.count[1]));
  };
  // (i) memory_utilization 0.4 (~106K KV tokens): the 256-request running cap binds before KV memory.
  const std::vector<std::string> roomy = {"batching.memory_utilization=0.4", "horizon_s=60", "report.requests_csv=true"};
  auto with = [](std::vector<std::string> v, const std::string& s) { v.push_back(s); return v; };
  RunResult lpm_r = run_yaml(kFlood, with(roomy, "policy.local=lpm"), "b2b_lpm_roomy");
  RunResult preble_r = run_yaml(kFlood, with(roomy, "policy.local=preble_local"), "b2b_preble_roomy");
  // (ii) the flood scenario as is (memory_utilization 0.3, ~45K KV tokens): 256 flood requests
  // (~165 private tokens each) plus the 4000-token document fill KV, so memory binds first.
  const std::vector<std::string> tight = {"horizon_s=60", "report.requests_csv=true"};
  RunResult lpm = run_yaml(kFlood, with(tight, "policy.local=lpm"), "b2b_lpm");
  RunResult preble = run_yaml(kFlood, with(tight, "policy.local=preble_local"), "b2b_preble");
  RunResult dlpm = run_yaml(kFlood, with(tight, "policy.local=dlpm"), "b2b_dlpm");
  const Admissions a_lpm_r = admissions(lpm_r), a_preble_r = admissions(preble_r), a_lpm = admissions(lpm),
                   a_preble = admissions(preble), a_dlpm = admissions(dlpm);
  for (const auto& [name, r, a] : {std::tuple<const char*, const RunResult*, const Admissions*>{"LPM, KV 0.4", &lpm_r, &a_lpm_r},
                                   {"preble_local, KV 0.4", &preble_r, &a_preble_r},
                                   {"LPM, KV 0.3", &lpm, &a_lpm},
                                   {"preble_local, KV 0.3", &preble, &a_preble},
                                   {"DLPM, KV 0.3", &dlpm, &a_dlpm}})
    MESSAGE(fmt::format("{:<21}: modest admitted {:.0f} (quota-share expectation {:.0f}), finished {:.0f}/{:.0f}, mean "
                        "wait {:.2f} s; flood admitted {:.0f}, finished {:.0f}/{:.0f}, mean wait {:.2f} s; modest extend "
                        "share {:.3f}; throughput {:.2f} req/s, hit {:.3f}; peak running {}, preemptions {}",
                        name, a->count[1], expected(*r, *a), r->client(1, "finished"), r->client(1, "requests"),
                        a->mean_wait(1), a->count[0], r->client(0, "finished"), r->client(0, "requests"), a->mean_wait(0),
                        share(*r, 1, "extend_service"), r->num("throughput_rps"), r->num("cache_hit_rate"),
                        r->out.workers[0].peak_running, r->out.workers[0].preemptions));
  // (i) With memory not binding, the flood stays backlogged (its requests wait ~10 s) and modest gets
  // its quota share within 10% and waits a small fraction of the flood's time; LPM still starves it.
  CHECK(preble_r.client(0, "finished") < 0.6 * preble_r.client(0, "requests"));
  CHECK(a_preble_r.count[1] >= 0.9 * expected(preble_r, a_preble_r));
  CHECK(a_preble_r.mean_wait(1) < 0.1 * a_preble_r.mean_wait(0));
  CHECK(a_lpm_r.count[1] < 0.25 * expected(lpm_r, a_lpm_r));
  // (ii) With KV memory binding, a 2K-token modest request fits only into what was freed since the
  // flood's last turn (the flood's turn takes all freed memory in ~160-token requests, far below its
  // quota of 100), as in Preble, whose fit check also counts free + evictable KV and skips what does not
  // fit. Group 0 then gets well below its quota share, but still ~3x LPM's service.
  CHECK(a_preble.count[1] < 0.5 * expected(preble, a_preble));
  CHECK(preble.client(1, "finished") > 2 * lpm.client(1, "finished"));
  CHECK(share(preble, 1, "extend_service") > 2 * share(lpm, 1, "extend_service"));
  CHECK(preble.num("cache_hit_rate") > dlpm.num("cache_hit_rate"));
}

TEST_CASE("3: sweeping Q^u moves DLPM from VTC-like fairness to LPM-like throughput") {
  const std::vector<double> qus = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  std::vector<RunResult> runs;
  std::string table = "\n     Q^u  throughput_rps  hit_rate  extend_diff_max  extend_diff_mean  modest_share\n";
  for (double q : qus) {
    runs.push_back(run_yaml(kFlood, {fmt::format("policy.local={{name: dlpm, quantum: {}}}", q), "horizon_s=60"},
                            fmt::format("b3_{}", q)));
    const RunResult& r = runs.back();
    table += fmt::format("{:>8g}  {:>14.2f}  {:>8.4f}  {:>15.0f}  {:>16.0f}  {:>12.3f}\n", q, r.num("throughput_rps"),
                         r.num("cache_hit_rate"), r.num("extend_service_diff_max"), r.num("extend_service_diff_mean"),
                         share(r, 1, "extend_service"));
  }
  RunResult vtc = run_yaml(kFlood, {"policy.local=vtc", "horizon_s=60"}, "b3_vtc");
  RunResult lpm = run_yaml(kFlood, {"policy.local=lpm", "horizon_s=60"}, "b3_lpm");
  for (const auto& [name, r] : {std::pair<const char*, const RunResult*>{"VTC", &vtc}, {"LPM", &lpm}})
    table += fmt::format("{:>8}  {:>14.2f}  {:>8.4f}  {:>15.0f}  {:>16.0f}  {:>12.3f}\n", name, r->num("throughput_rps"),
                         r->num("cache_hit_rate"), r->num("extend_service_diff_max"),
                         r->num("extend_service_diff_mean"), share(*r, 1, "extend_service"));
  MESSAGE(table);
  // Monotone within noise: each step keeps throughput (1%) and unfairness (30%).
  for (std::size_t i = 1; i < runs.size(); ++i) {
    CAPTURE(qus[i]);
    CHECK(runs[i].num("throughput_rps") >= 0.99 * runs[i - 1].num("throughput_rps"));
    CHECK(runs[i].num("extend_service_diff_mean") >= 0.7 * runs[i - 1].num("extend_service_diff_mean"));
    CHECK(share(runs[i], 1, "extend_service") <= share(runs[i - 1], 1, "extend_service") + 0.02);
  }
  // End points: VTC-like at the small end, LPM-like at the large end.
  const RunResult &small = runs.front(), &large = runs.back();
  CHECK(large.num("throughput_rps") > 1.1 * small.num("throughput_rps"));
  CHECK(large.num("extend_service_diff_mean") > 10 * small.num("extend_service_diff_mean"));
  CHECK(std::abs(share(small, 1, "extend_service") - share(vtc, 1, "extend_service")) < 0.1);
  CHECK(std::abs(share(large, 1, "extend_service") - share(lpm, 1, "extend_service")) < 0.1);
}

TEST_CASE("4a: on four workers with Zipf-popular templates Preble E2 beats round robin + LPM on mean and p99 latency") {
  RunResult rr = run_yaml(kZipfTemplates, {"policy.global=round_robin", "policy.local=lpm"}, "b4_rr");
  RunResult preble = run_yaml(kZipfTemplates, {"policy.global=preble_e2", "policy.local=preble_local"}, "b4_preble");
  for (const auto& [name, r] : {std::pair<const char*, const RunResult*>{"RR+LPM", &rr}, {"Preble E2", &preble}})
    MESSAGE(fmt::format("{:<9}: e2e mean {} p99 {}, ttft mean {} p99 {}, hit {:.3f}, throughput {:.2f} req/s", name,
                        fmt_s(r->num("e2e_mean_s")), fmt_s(r->num("e2e_p99_s")), fmt_s(r->num("ttft_mean_s")),
                        fmt_s(r->num("ttft_p99_s")), r->num("cache_hit_rate"), r->num("throughput_rps")));
  CHECK(preble.num("e2e_mean_s") < 0.8 * rr.num("e2e_mean_s"));
  CHECK(preble.num("e2e_p99_s") < 0.8 * rr.num("e2e_p99_s"));
  CHECK(preble.num("cache_hit_rate") > rr.num("cache_hit_rate"));
}

TEST_CASE("4b: D2LPM keeps per-client fairness that cache-aware routing with LPM loses") {
  RunResult ca = run_yaml(kMultiTenant, {"policy.global=cache_aware", "policy.local=lpm"}, "b4b_ca");
  RunResult d2 = run_yaml(kMultiTenant, {"policy.global=d2lpm", "policy.local=dlpm"}, "b4b_d2");
  for (const auto& [name, r] : {std::pair<const char*, const RunResult*>{"cache_aware+LPM", &ca}, {"D2LPM", &d2}}) {
    std::string per_client;
    for (std::size_t c = 0; c < r->clients.size(); ++c)
      per_client += fmt::format(" {} {:.0f}/{:.0f}", r->clients[c].at("client"), r->client(c, "finished"),
                                r->client(c, "requests"));
    MESSAGE(fmt::format("{:<15}: finished{}; extend diff max {:.0f} mean {:.0f}; Jain (extend) {:.3f}; "
                        "throughput {:.2f} req/s, hit {:.3f}",
                        name, per_client, r->num("extend_service_diff_max"), r->num("extend_service_diff_mean"),
                        r->num("jain_extend_service_rate"), r->num("throughput_rps"), r->num("cache_hit_rate")));
  }
  for (std::size_t c : {1, 2}) {
    const double ca_done = ca.client(c, "finished") / ca.client(c, "requests");
    const double d2_done = d2.client(c, "finished") / d2.client(c, "requests");
    CHECK(d2_done > 2 * ca_done);
  }
  CHECK(d2.num("extend_service_diff_mean") < 0.5 * ca.num("extend_service_diff_mean"));
  CHECK(d2.num("jain_extend_service_rate") > ca.num("jain_extend_service_rate") + 0.2);
}

TEST_CASE("4c: D2LPM keeps locality on shared hot templates: hit rate near cache_aware's, TTFT within 2x") {
  RunResult ca = run_yaml(kHotTemplates, {"policy.global=cache_aware", "policy.local=lpm"}, "b4c_ca");
  RunResult pr = run_yaml(kHotTemplates, {"policy.global=preble_e2", "policy.local=preble_local"}, "b4c_preble");
  RunResult d2 = run_yaml(kHotTemplates, {}, "b4c_d2");
  RunResult old = run_yaml(kHotTemplates, {"policy.global={name: d2lpm, quantum: 16384, charge: prompt}"}, "b4c_d2_small_q");
  for (const auto& [name, r] : {std::pair<const char*, const RunResult*>{"cache_aware+LPM", &ca}, {"Preble E2", &pr},
                                {"D2LPM", &d2}, {"D2LPM quantum 16384, prompt", &old}})
    MESSAGE(fmt::format("{:<30}: hit {:.3f}, ttft mean {:.1f} ms p99 {:.1f} ms, e2e mean {}, throughput {:.2f} req/s",
                        name, r->num("cache_hit_rate"), 1e3 * r->num("ttft_mean_s"), 1e3 * r->num("ttft_p99_s"),
                        fmt_s(r->num("e2e_mean_s")), r->num("throughput_rps")));
  CHECK(d2.num("cache_hit_rate") > ca.num("cache_hit_rate") - 0.05);
  CHECK(d2.num("ttft_mean_s") < 2 * ca.num("ttft_mean_s"));
  // A small Q^g charged with whole prompts spreads every client over every worker (the old defaults).
  CHECK(old.num("cache_hit_rate") < d2.num("cache_hit_rate") - 0.1);
}

// Sustained template load near the cluster's capacity: the engine bench's template
// workload (sim/cli/bench_scenarios.h) at a quarter of its rate on a quarter of its
// workers, 60k requests (~920 s of arrivals), Preble E2 + preble_local.
std::string sustained_templates() {
  YAML::Node root = YAML::Load(bench::kTemplateScenario);
  root["name"] = "sustained_templates";
  root["cluster"]["workers"] = 4;
  root["policy"]["local"] = "preble_local";
  root["policy"]["global"] = "preble_e2";
  root["workload"]["requests"] = 60000;
  for (YAML::Node c : root["workload"]["clients"]) c["rate"] = c["rate"].as<double>() / 4;
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

TEST_CASE("4d: under sustained template load Preble E2's queues stay bounded: its load sees a backlog") {
  // When E2's load L kept every routed request's decode for the whole window (at the per-token
  // share of a step), L stayed balanced while queues built up on some workers and others idled:
  // here the mean E2E rose from 1.88 s (first 300 s of arrivals) to 3.42 s (last 300 s), with
  // up to 162 requests waiting on one worker and the least busy worker at 97.4%: all three
  // checks below failed. Counting decode only while a request is active (Preble's code): 1.69 s
  // in both spans, at most 8 waiting, every worker busy > 99%.
  RunResult r = run_yaml(sustained_templates(), {}, "b4d_preble");
  double first = 0, last = 0, n_first = 0, n_last = 0, end = 0;
  const auto rows = read_csv(r.dir + "/requests.csv");
  for (const auto& row : rows) end = std::max(end, std::stod(row.at("arrival_s")));
  for (const auto& row : rows) {
    const double at = std::stod(row.at("arrival_s")), e2e = std::stod(row.at("e2e_s"));
    if (at < 300) {
      first += e2e;
      n_first += 1;
    } else if (at >= end - 300) {
      last += e2e;
      n_last += 1;
    }
  }
  REQUIRE(n_first > 1000);
  REQUIRE(n_last > 1000);
  first /= n_first;
  last /= n_last;
  double peak_waiting = 0, least_busy = 1;
  for (const auto& w : read_csv(r.dir + "/workers.csv")) {
    peak_waiting = std::max(peak_waiting, std::stod(w.at("peak_waiting")));
    least_busy = std::min(least_busy, std::stod(w.at("busy_fraction")));
  }
  MESSAGE(fmt::format("Preble E2: mean E2E {} (first 300 s of arrivals) -> {} (last 300 s); peak waiting {}, "
                      "least busy worker {:.3f}, hit {:.3f}",
                      fmt_s(first), fmt_s(last), peak_waiting, least_busy, r.num("cache_hit_rate")));
  CHECK(r.num("finished") == 60000);
  CHECK(last < 1.2 * first);
  CHECK(peak_waiting <= 40);
  CHECK(least_busy > 0.98);
}

TEST_CASE("5: SJF beats FCFS on mean end-to-end latency under load with heavy-tailed output lengths") {
  RunResult fcfs = run_yaml(kHeavyTail, {"policy.local=fcfs"}, "b5_fcfs");
  RunResult sjf = run_yaml(kHeavyTail, {"policy.local=sjf"}, "b5_sjf");
  RunResult srtf = run_yaml(kHeavyTail, {"policy.local={name: sjf, srtf: true}"}, "b5_srtf");
  for (const auto& [name, r] :
       {std::pair<const char*, const RunResult*>{"FCFS", &fcfs}, {"SJF", &sjf}, {"SRTF", &srtf}})
    MESSAGE(fmt::format("{:<4}: e2e mean {} p50 {} p99 {}, preemptions {}, oracle {}", name, fmt_s(r->num("e2e_mean_s")),
                        fmt_s(r->num("e2e_p50_s")), fmt_s(r->num("e2e_p99_s")), r->summary.at("preemptions"),
                        r->summary.at("oracle")));
  CHECK(sjf.num("e2e_mean_s") < 0.8 * fcfs.num("e2e_mean_s"));
  CHECK(sjf.summary.at("oracle") == "true");
  CHECK(fcfs.summary.at("oracle") == "false");
}
