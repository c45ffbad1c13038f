// Configuration identity is by value (issue 22): config.resolved.yaml states
// every worker whose hardware or attention differs from the defaults in any
// field (not only by name or description), parse(resolved(c)) == c, and a run
// of config.resolved.yaml reproduces every output file byte for byte — for
// every shipped scenario (cut to 60 simulated seconds) and a set of
// heterogeneous clusters. Also: workers that differ in any field get their own
// cost model.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "configs/run_builder.h"
#include "configs/config_test_util.h"
#include "costmodel/synthetic_profile.h"

using namespace servesim;
using servesim::testing::synthetic_profile_path;
using servesim::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

ScenarioConfig parse_text(const std::string& yaml, const std::string& name) {
  fs::path p = temp_dir() / (name + ".yaml");
  std::ofstream(p) << yaml;
  return load_scenario(p.string(), {});
}

RunOutput run_into(const ScenarioConfig& c, const fs::path& dir) {
  RunOptions o;
  o.out_dir = dir.string();
  o.progress = false;
  return execute_run(c, o);
}

// Every file of a run folder: name → bytes.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out[e.path().filename().string()] = ss.str();
  }
  return out;
}

// Runs `c`, re-parses the run's config.resolved.yaml, checks it equals `c`,
// runs it again and checks every output file is byte-identical.
void check_resolved_round_trip(const ScenarioConfig& c, const std::string& label) {
  INFO("scenario: " << label);
  const fs::path first = temp_dir() / (label + "_first"), second = temp_dir() / (label + "_second");
  run_into(c, first);
  ScenarioConfig again = load_scenario((first / "config.resolved.yaml").string(), {});
  CHECK(again == c);
  CHECK(again.workers == c.workers);  // named separately: the part issue 22's bugs broke
  run_into(again, second);
  const auto a = files_of(first), b = files_of(second);
  CHECK(a.size() >= 5);
  for (const auto& file : a) {
    const auto& name = file.first;  // not a structured binding: clang 14 cannot capture one in INFO
    const auto& bytes = file.second;
    INFO("file: " << name);
    REQUIRE(b.count(name) == 1);
    CHECK(b.at(name) == bytes);
  }
  CHECK(a.size() == b.size());
}

const char* kWorkload = R"(workload:
  type: synthetic
  requests: 300
  clients:
    - {name: a, rate: 20, prompt: {dist: uniform, min: 10, max: 3000}, output: {dist: lognormal, median: 50, sigma: 1.0, max: 400}}
    - {name: b, rate: 5, arrival: {process: gamma, cv: 2}}
)";

std::string scenario(const std::string& body) {
  return "name: t\nseed: 3\nmodel: llama-3.1-8b\nhardware: h100-sxm\n" + body + "\n" + kWorkload;
}

std::string calibrated(const std::string& body) {
  return scenario("cost_model: {backend: calibrated, profile: " + synthetic_profile_path() + "}\n" + body);
}

}  // namespace

TEST_CASE("a worker override that differs from worker 0 only in andpro.block is kept, resolved and priced apart") {
  // Issue 22, bug 1a: describe() omitted andpro.block, so resolved() dropped
  // this override and the re-run sized worker 1's KV like worker 0's.
  ScenarioConfig c = parse_text(calibrated(R"(attention: {kv: andpro}
cluster:
  workers: 2
  overrides:
    - {worker: 1, attention: {andpro: {block: 32}}})"), "andpro_block");
  REQUIRE(c.workers[1].attention.andpro.block == 32);
  CHECK(c.workers[0].attention.andpro.block == 16);
  CHECK(c.workers[0].attention != c.workers[1].attention);
  CHECK(c.workers[0].attention.describe() != c.workers[1].attention.describe());
  YAML::Node overrides = c.resolved()["cluster"]["overrides"];
  REQUIRE(overrides.size() == 1);
  CHECK(overrides[0]["worker"].as<int>() == 1);
  CHECK(overrides[0]["attention"]["andpro"]["block"].as<int>() == 32);
  CHECK(first_equal_worker(c.workers) == std::vector<std::size_t>{0, 1});
  check_resolved_round_trip(c, "andpro_block");
}

TEST_CASE("a hardware override with worker 0's name but other specs is priced with its own specs and resolved") {
  // Issue 22, bug 1b: workers were told apart by hardware name, so this
  // worker shared worker 0's cost model and vanished from resolved().
  const std::string slow = "{name: H100-SXM, memory_gb: 40, mem_bandwidth_gbps: 1000}";
  const std::string renamed = "{name: H100-slow, memory_gb: 40, mem_bandwidth_gbps: 1000}";
  auto with = [](const std::string& hw) {
    return scenario("cluster:\n  workers: 2\n  overrides:\n    - {worker: 1, hardware: " + hw + "}\n");
  };
  ScenarioConfig same_name = parse_text(with(slow), "same_name");
  ScenarioConfig other_name = parse_text(with(renamed), "other_name");
  REQUIRE(same_name.workers[1].hardware.name == same_name.workers[0].hardware.name);
  CHECK(same_name.workers[1].hardware != same_name.workers[0].hardware);
  CHECK(first_equal_worker(same_name.workers) == std::vector<std::size_t>{0, 1});
  YAML::Node overrides = same_name.resolved()["cluster"]["overrides"];
  REQUIRE(overrides.size() == 1);
  CHECK(overrides[0]["hardware"]["memory_gb"].as<double>() == 40);

  RunOutput a = run_into(same_name, temp_dir() / "same_name_run");
  RunOutput b = run_into(other_name, temp_dir() / "other_name_run");
  // The name does not price a worker: same specs, same busy time and capacity.
  CHECK(a.workers[1].busy_ns == b.workers[1].busy_ns);
  CHECK(a.workers[1].kv_capacity_pages == b.workers[1].kv_capacity_pages);
  CHECK(a.workers[1].kv_capacity_pages < a.workers[0].kv_capacity_pages);
  check_resolved_round_trip(same_name, "same_name");
}

TEST_CASE("workers equal by value share a representative, and any differing field separates them") {
  ScenarioConfig c = parse_text(scenario("cluster: {workers: 4}"), "equal_workers");
  CHECK(first_equal_worker(c.workers) == std::vector<std::size_t>{0, 0, 0, 0});
  c.workers[2].hardware.kernel_launch_us += 1;
  c.workers[3].attention.quest.dense_layers += 1;  // unused parameter, still a different value
  CHECK(first_equal_worker(c.workers) == std::vector<std::size_t>{0, 0, 2, 3});
}

TEST_CASE("heterogeneous clusters: parse(resolved(c)) == c and the resolved file re-runs byte for byte") {
  const std::map<std::string, std::string> cases = {
      {"named_hardware_mix", scenario(R"(cluster:
  workers: 3
  overrides:
    - {worker: 1, hardware: a100-80gb}
    - {worker: 2, hardware: h200})")},
      {"worker0_override", scenario(R"(cluster:
  workers: 3
  overrides:
    - {worker: 0, hardware: {name: H100-SXM, memory_gb: 60, kernel_launch_us: 6}})")},
      {"attention_mix", calibrated(R"(cluster:
  workers: 4
  overrides:
    - {worker: 1, attention: {decode: quest, quest: {budget: 1024}}}
    - {worker: 2, attention: {kv: andpro, andpro: {block: 32, budget: 1024, window: 64}}}
    - {worker: 3, attention: {prefill: minference, minference: {patterns: {vs_30_2048: 0.5, bs_100: 0.5}, min_length: 512}}})")},
      {"calibrated_default_andpro", calibrated(R"(attention: {kv: andpro, andpro: {block: 32}}
cluster:
  workers: 2
  overrides:
    - {worker: 1, attention: {andpro: {block: 16}}})")},
      {"fixed_prefill_first", scenario(R"(cluster: {workers: 2}
batching: {mode: prefill_first, max_batch_tokens: 4096, chunk_size: 1024, page_size: 32}
cost_model: {backend: fixed, base_ms: 7, per_prefill_token_us: 3, per_decode_token_us: 20, estimate_noise: 0.2}
policy: {local: sjf, global: least_load}
report: {w_in: 0.5, w_out: 3, requests_csv: false, timeline_interval_s: 0.25})")},
      // PD: pools of each role with their own hardware, batching, local policy and tiers;
      // every cluster.pd key away from its default; a decode router.
      {"pd_pools", scenario(R"(cluster:
  pools:
    - {name: pre, role: prefill, workers: 2, tp: 2, hardware: h200, batching: {chunk_size: 1024, mode: prefill_first}}
    - {name: dec, role: decode, workers: 1, policy: {local: sjf}, kv_cache: {host: {capacity_gb: 16}}}
    - {name: mix, role: mixed, workers: 1, hardware: {name: H100-SXM, memory_gb: 60, tp_allreduce_gbps: 400, interconnect: {nvlink_gbps: 300}}}
  pd: {link: nvlink, decider: prefix_aware, threshold_tokens: 64, streaming: layerwise}
policy: {local: fcfs, global: least_outstanding, decode_global: least_load})")},
      // KV tiers with a per-worker override, and the cluster KV store.
      {"kv_tiers_store", scenario(R"(batching: {memory_utilization: 0.3}
kv_cache: {host: {capacity_gb: 8, latency_us: 30}, ssd: {capacity_gb: 32, bandwidth_gbps: 5}}
cluster:
  workers: 3
  overrides:
    - {worker: 2, kv_cache: {host: {capacity_gb: 4}}}
  kv_store: {capacity_gb: 100, bandwidth_gbps: 50, link_gbps: 10, placement: write_through}
policy: {local: fcfs, global: kv_aware})")},
      // Every variance key away from its default: a σ for cost_noise, then a named choice.
      {"variance_sigma", calibrated(R"(variance: {resample: block_bootstrap, block_s: 30, arrival_jitter: 0.1, output_noise: 0.2, cost_noise: 0.05})")},
      {"variance_profile", calibrated(R"(variance: {resample: none, arrival_jitter: 0.05, cost_noise: profile})")},
      // The roofline backend with every option away from its default (a worker on a100).
      {"roofline_options", scenario(R"(cluster:
  workers: 2
  overrides:
    - {worker: 1, hardware: a100-80gb}
cost_model: {backend: roofline, model: flat, cuda_graph_decode: true, compute_efficiency: 0.6, memory_efficiency: 0.7, iteration_overhead_us: 50, kernels_per_layer: 8})")},
  };
  for (const auto& [name, yaml] : cases) check_resolved_round_trip(parse_text(yaml, name), name);
}

TEST_CASE("every workload type, keys away from their defaults: parse(resolved(c)) == c and the resolved file re-runs byte for byte") {
  const fs::path trace = temp_dir() / "workload_types_trace.csv";
  {
    std::ofstream out(trace);
    out << "arrival_ns,prompt_tokens,output_tokens\n";
    for (int i = 0; i < 12; ++i) out << i * 300000000LL << "," << 16 + 8 * i << "," << 4 + i << "\n";
  }
  const std::string head = "name: t\nseed: 3\nmodel: llama-3.1-8b\nhardware: h100-sxm\n";
  const std::map<std::string, std::string> cases = {
      {"wl_synthetic", R"(workload:
  type: synthetic
  requests: 60
  duration_s: 50
  rate_scale: 1.5
  clients:
    - {name: a, rate: 3, arrival: {process: gamma, cv: 2.5}, prompt: {dist: lognormal, median: 30, sigma: 0.5, min: 2, max: 90}, output: 7}
    - {rate: 2, output: {dist: uniform, min: 3, max: 9}})"},
      {"wl_templates", R"(workload:
  type: templates
  duration_s: 20
  block_size: 32
  pools: [{name: docs, count: 4, zipf: 0.5, tokens: 300}, {count: 2}]
  clients:
    - {name: t, rate: 4, pool: docs, template_share: 0.25, prompt: 20, output: 10, on_s: 2, off_s: 3, phase_s: 1}
    - {rate: 1, pool: pool1, arrival: {process: gamma, cv: 2}})"},
      {"wl_empirical", "workload: {type: empirical, path: " + trace.string() +
                           ", format: native_csv, skip_bad_rows: true, max_rows: 2, joint: false, requests: 30, "
                           "duration_s: 100, rate: 2, arrival: {process: gamma, cv: 0.5}, client: solo}"},
      {"wl_sessions", R"(workload: {type: sessions, sessions: 6, duration_s: 100, rate: 0.25, turns: 3, system_prompt_tokens: 64,
  first_prompt: 50, user_prompt: {dist: uniform, min: 5, max: 9}, output: 40, think_time_s: {dist: lognormal, median: 2, sigma: 0.3},
  max_context_tokens: 4096, block_size: 32, clients: 3})"},
      {"wl_agent_dag", R"(workload: {type: agent_dag, workflows: 3, rate: 0.5, arrival: {process: gamma, cv: 3}, system_prompt_tokens: 0,
  task: 12, block_size: 8, clients: 2, nodes: [{name: a, prompt: 5, output: 6},
  {name: b, count: 3, after: [a], think_time_s: {dist: uniform, min: 1, max: 2}}, {name: c, after: [a, b]}]})"},
      {"wl_trace", "workload: {type: trace, path: " + trace.string() +
                       ", skip_bad_rows: true, sort: true, failed: keep, time_origin: zero, window: {start_s: 0.1, end_s: 100}, "
                       "spread: {mode: uniform, bucket_s: 2}, sample: 0.9, rate_scale: 2, max_requests: 9, "
                       "clients: {by: random, name: x, count: 3, common_blocks: 2, weights: [1, 2, 0], zipf: 0.5}}"},
  };
  for (const auto& c : cases) check_resolved_round_trip(parse_text(head + c.second, c.first), c.first);
}

TEST_CASE("every shipped scenario: parse(resolved(c)) == c and the resolved file re-runs byte for byte") {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(SERVESIM_SOURCE_DIR) / "configs" / "scenarios")) {
    if (e.path().extension() != ".yaml") continue;
    YAML::Node root = load_yaml_file(e.path().string());
    root["horizon_s"] = 60;  // short and still deterministic
    YAML::Node w = root["workload"];
    if (w["type"].as<std::string>() == "trace")  // paths are relative to the repository root
      w["path"] = std::string(SERVESIM_SOURCE_DIR) + "/" + w["path"].as<std::string>();
    check_resolved_round_trip(parse_scenario(root, e.path().string()), e.path().stem().string());
    ++n;
  }
  CHECK(n >= 9);
}

TEST_CASE("config identity (the defaulted operator==): every member a run reads counts, but not provenance, how the backend was chosen or the profile cache") {
  const ScenarioConfig a = parse_text(scenario("cluster: {workers: 2}"), "identity_a");
  REQUIRE(a.cost_model.backend == CostBackend::kCalibrated);  // auto, on the measured H100 profile
  REQUIRE(a.cost_model.auto_selected.value);
  ScenarioConfig same = a;
  same.file = "elsewhere.yaml";
  same.cost_model.auto_selected = false;
  same.cost_model.fits.clear();
  CHECK(same == a);
  // Options of a backend not in use are not kept (config.resolved.yaml does not write them).
  CHECK(parse_text(scenario("cluster: {workers: 2}\ncost_model: {compute_efficiency: 0.5, model: flat}"), "identity_b") == a);
  CHECK(parse_text(scenario("cluster: {workers: 2}\ncost_model: {iteration_overhead_us: 40}"), "identity_c") != a);

  auto differs = [&a](auto change) {
    ScenarioConfig x = a;
    change(x);
    return !(x == a);
  };
  CHECK(differs([](ScenarioConfig& x) { x.seed += 1; }));
  CHECK(differs([](ScenarioConfig& x) { x.name = "other"; }));
  CHECK(differs([](ScenarioConfig& x) { x.cost_model.estimate_noise = 0.1; }));
  CHECK(differs([](ScenarioConfig& x) { x.cost_model.calibrated.layer_overhead_us += 1; }));
  CHECK(differs([](ScenarioConfig& x) { x.cost_model.stack = "vidur-2024"; }));
  CHECK(differs([](ScenarioConfig& x) { x.hardware.interconnect.rdma_nic_gbps = 1; }));
  CHECK(differs([](ScenarioConfig& x) { x.workers[1].hardware.tp_allreduce_gbps = 1; }));
  CHECK(differs([](ScenarioConfig& x) { x.pd.streaming = PdStreaming::kLayerwise; }));
  CHECK(differs([](ScenarioConfig& x) { x.pools.push_back(PoolConfig{}); }));
  CHECK(differs([](ScenarioConfig& x) { x.window.warmup_requests = 3; }));
  CHECK(differs([](ScenarioConfig& x) { x.memory.memory_utilization = 0.5; }));
  const ScenarioConfig sjf = parse_text(scenario("cluster: {workers: 2}\npolicy: {local: sjf}"), "identity_sjf");
  CHECK(differs([&sjf](ScenarioConfig& x) { x.local_policy = sjf.local_policy; }));
  const ScenarioConfig again = parse_text(scenario("cluster: {workers: 2}"), "identity_again");
  REQUIRE(again.workload.get() != a.workload.get());
  CHECK_FALSE(differs([&again](ScenarioConfig& x) { x.workload = again.workload; }));  // equal, another object
  std::string more = scenario("cluster: {workers: 2}");
  more.replace(more.find("requests: 300"), 13, "requests: 301");
  const ScenarioConfig longer = parse_text(more, "identity_longer");
  CHECK(differs([&longer](ScenarioConfig& x) { x.workload = longer.workload; }));
  // A pool's members count, its local policy by value.
  const ScenarioConfig pd = parse_text(scenario(R"(cluster:
  pools:
    - {name: pre, role: prefill}
    - {name: dec, role: decode, policy: {local: sjf}})"), "identity_pd");
  ScenarioConfig pd2 = pd;
  CHECK(pd2 == pd);
  pd2.pools[1].local_policy = sjf.local_policy;  // the same policy, parsed elsewhere
  CHECK(pd2 == pd);
  pd2.pools[1].local_policy.reset();
  CHECK(pd2 != pd);
  pd2 = pd;
  pd2.pools[0].batching.chunk_size += 1;
  CHECK(pd2 != pd);
}
