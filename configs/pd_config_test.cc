// cluster.pools / cluster.pd / policy.decode_global: parsing, errors naming
// file, line and key, config.resolved.yaml round trip, and a PD run's
// requests.csv and workers.csv columns.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "configs/config_test_util.h"
#include "configs/run_builder.h"
#include "reports/csv_reader.h"
#include "sim/core/test_util.h"

using namespace servesim;
namespace fs = std::filesystem;
using servesim::testing::slurp;

namespace {

const char* kPd = R"(name: pd
seed: 5
model: llama-3-8b
hardware: h100-sxm
cluster:
  pools:
    - {name: pre, role: prefill, workers: 2, tp: 2, hardware: h200, batching: {chunk_size: 4096}}
    - {name: dec, role: decode, workers: 2, policy: {local: sjf}}
  pd: {link: rdma}
policy:
  local: fcfs
  global: round_robin
  decode_global: least_outstanding
workload:
  type: synthetic
  requests: 200
  clients:
    - name: a
      rate: 20
      prompt: {dist: uniform, min: 500, max: 4000}
      output: {dist: uniform, min: 1, max: 200}
)";

std::string write_temp(const std::string& name, const std::string& text) {
  fs::path p = testing::temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario(write_temp("bad_pd.yaml", yaml), sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Field `col` of data row i (REQUIRES: the column exists).
const std::string& cell(const CsvTable& t, std::size_t i, const char* col) {
  const int k = t.column(col);
  REQUIRE(k >= 0);
  return t.rows.at(i).at(static_cast<std::size_t>(k));
}

}  // namespace

TEST_CASE("cluster.pools: each pool its own role, workers, tp, hardware, batching and local policy") {
  ScenarioConfig c = load_scenario(write_temp("pd.yaml", kPd), {});
  REQUIRE(c.pools.size() == 2);
  CHECK(c.disaggregated());
  CHECK(c.workers.size() == 4);
  CHECK(c.workers[0].tp == 2);
  CHECK(c.workers[0].hardware.name == "H200");
  CHECK(c.workers[0].pool == 0);
  CHECK(c.workers[3].tp == 1);
  CHECK(c.workers[3].hardware.name == "H100-SXM");
  CHECK(c.workers[3].pool == 1);
  CHECK(c.pools[0].batching.chunk_size == 4096);
  CHECK(c.pools[1].batching.chunk_size == c.batching.chunk_size);
  CHECK(!c.pools[0].local_policy.has_value());
  CHECK(c.pools[1].local_policy->resolved["name"].as<std::string>() == "sjf");
  CHECK(c.workers[0].hardware.interconnect.rdma_nic_gbps == 50);  // configs/hardware/h200.yaml, interconnect:
  CHECK(c.decode_global_policy.resolved["name"].as<std::string>() == "least_outstanding");
}

TEST_CASE("cluster.pools errors name file, line and key") {
  const std::string pd = kPd;
  CHECK(has(error_of(pd, {"cluster.workers=4"}), "cluster.workers cannot be set together with cluster.pools"));
  CHECK(has(error_of(pd, {"cluster.tp=2"}), "cluster.tp"));
  std::string e = error_of(pd, {"cluster.pools=[{name: a, role: prefil}]"});
  CHECK(has(e, "cluster.pools[0].role"));
  CHECK(has(e, "unknown pool role 'prefil'"));
  CHECK(has(error_of(pd, {"cluster.pools=[{name: a, role: prefill}]"}), "one that can decode (role decode or mixed)"));
  CHECK(has(error_of(pd, {"cluster.pools=[{name: a}, {name: a}]"}), "used twice"));
  CHECK(has(error_of(pd, {"cluster.pools=[{name: a, workers: 0}]"}), "cluster.pools[0].workers"));
  CHECK(has(error_of(pd, {"cluster.pools=[{name: a, tp: 3}]"}), "cluster.pools[0].tp"));
  CHECK(has(error_of(pd, {"cluster.pd.link=carrier_pigeon"}), "unknown link 'carrier_pigeon'"));
  CHECK(has(error_of(pd, {"cluster.pd.decider=coin"}), "unknown decider 'coin'"));
  CHECK(has(error_of(pd, {"cluster.pd.threshold_tokens=5"}), "only the prefix_aware decider"));
  CHECK(has(error_of(pd, {"cluster.pd.decider=prefix_aware", "cluster.pd.threshold_tokens=-1"}), "must be >= 0"));
  std::string streaming = pd;
  streaming.replace(streaming.find("pd: {link: rdma}"), 16, "pd: {link: rdma, streaming: per_layer}");
  e = error_of(streaming);
  CHECK(has(e, "bad_pd.yaml:9:"));  // the value's line
  CHECK(has(e, "cluster.pd.streaming: unknown streaming 'per_layer'; expected none or layerwise"));
  CHECK(has(error_of(pd, {"cluster.pd.streaming=1"}), "unknown streaming '1'"));
  CHECK(has(error_of(pd, {"cluster.pools=[{name: a, policy: {local: nope}}]"}), "unknown local policy 'nope'"));
  // pd and decode_global only with a prefill or decode pool.
  e = error_of(pd, {"cluster.pools=[{name: a, workers: 2}]"});
  CHECK(has(e, "cluster.pd needs cluster.pools with a pool of role prefill or decode"));
  CHECK(has(e, "bad_pd.yaml:"));
  std::string mixed = pd;
  mixed.replace(mixed.find("  pd: {link: rdma}\n"), 19, "");
  CHECK(has(error_of(mixed, {"cluster.pools=[{name: a, workers: 2}]"}), "policy.decode_global needs"));
  CHECK(has(error_of(pd, {"policy.decode_global=d2lpm", "policy.local=dlpm"}), "cannot pick decode workers"));
  CHECK(has(error_of(pd, {"hardware.interconnect.rdma_nic_gbps=0"}), "rdma_nic_gbps"));
  CHECK(has(error_of(pd, {"hardware.interconnect.nvlnk=1"}), "hardware.interconnect.nvlnk"));
}

TEST_CASE("hardware tp_allreduce_gbps (the TP all-reduce) is apart from the interconnect: map (KV transfers), and the old key names the new one") {
  std::string inline_hw = kPd;
  inline_hw.replace(inline_hw.find("hardware: h100-sxm\n"), 19,
                    "hardware:\n  name: H100-SXM\n  interconnect_gbps: 400\n");
  const std::string e = error_of(inline_hw);
  CHECK(has(e, "bad_pd.yaml:6:"));
  CHECK(has(e, "hardware.interconnect_gbps: renamed to tp_allreduce_gbps"));
  std::string null_hw = inline_hw;
  null_hw.replace(null_hw.find("interconnect_gbps: 400"), 22, "interconnect_gbps: ~");
  CHECK(has(error_of(null_hw), "hardware.interconnect_gbps: renamed to tp_allreduce_gbps"));
  // A hardware file with the old key: the error names the file.
  const std::string old_file = write_temp("old_hw.yaml", "name: Old\ninterconnect_gbps: 450\n");
  std::string with_file = kPd;
  with_file.replace(with_file.find("hardware: h100-sxm\n"), 19, "hardware: " + old_file + "\n");
  CHECK(has(error_of(with_file), "old_hw.yaml:2:"));
  CHECK(has(error_of(with_file), "interconnect_gbps: renamed to tp_allreduce_gbps"));

  std::string renamed = kPd;
  renamed.replace(renamed.find("hardware: h100-sxm\n"), 19, "hardware: {name: H100-SXM, tp_allreduce_gbps: 123}\n");
  ScenarioConfig c = load_scenario(write_temp("pd_links.yaml", renamed), {});
  CHECK(c.hardware.tp_allreduce_gbps == 123);
  CHECK(c.hardware.interconnect.nvlink_gbps == 450);  // the KV link keeps its own value
  const YAML::Node r = c.resolved();
  CHECK(r["hardware"]["tp_allreduce_gbps"].as<double>() == 123);
  CHECK_FALSE(r["hardware"]["interconnect_gbps"].IsDefined());
  CHECK(r["hardware"]["interconnect"]["rdma_nic_gbps"].as<double>() == 50);
}

TEST_CASE("a PD run: config.resolved.yaml round-trips, requests.csv and workers.csv carry the placement") {
  ScenarioConfig c = load_scenario(write_temp("pd.yaml", kPd), {});
  fs::path base = testing::temp_dir() / "pd_run";
  fs::remove_all(base);
  execute_run(c, RunOptions{(base / "a").string(), false});
  ScenarioConfig again = load_scenario((base / "a" / "config.resolved.yaml").string(), {});
  CHECK(again == c);
  execute_run(again, RunOptions{(base / "b").string(), false});
  for (const char* f : {"requests.csv", "workers.csv", "summary.csv", "config.resolved.yaml"}) {
    CAPTURE(f);
    CHECK(slurp(base / "a" / f) == slurp(base / "b" / f));
  }
  CsvTable req = read_csv((base / "a" / "requests.csv").string());
  const std::vector<std::string> tail = {"prefill_worker", "decode_worker", "transfer_start_s", "transfer_end_s",
                                         "transfer_bytes", "kv_wait_s"};
  REQUIRE(req.header.size() > tail.size());
  CHECK(std::vector<std::string>(req.header.end() - 6, req.header.end()) == tail);
  int transferred = 0;
  for (std::size_t i = 0; i < req.rows.size(); ++i) {
    if (cell(req, i, "status") != "finished") continue;
    const int p = std::stoi(cell(req, i, "prefill_worker")), d = std::stoi(cell(req, i, "decode_worker"));
    CHECK(p <= 1);  // the prefill pool is workers 0 and 1
    if (cell(req, i, "output_tokens") == "1") {
      CHECK(d == p);
      CHECK(cell(req, i, "transfer_bytes").empty());
      continue;
    }
    CHECK(d >= 2);
    CHECK(!cell(req, i, "transfer_bytes").empty());
    CHECK(std::stod(cell(req, i, "transfer_end_s")) >= std::stod(cell(req, i, "transfer_start_s")));
    ++transferred;
  }
  CHECK(transferred > 100);
  CsvTable wk = read_csv((base / "a" / "workers.csv").string());
  REQUIRE(wk.rows.size() == 4);
  CHECK(cell(wk, 0, "pool") == "pre");
  CHECK(cell(wk, 0, "role") == "prefill");
  CHECK(cell(wk, 0, "decode_tokens") == "0");
  CHECK(cell(wk, 3, "pool") == "dec");
  CHECK(cell(wk, 3, "role") == "decode");
  // A decode worker admits no prompt: its prompt-share rates are empty, not 0 (which
  // would read as "no cache hits"); the prefill workers' are numbers.
  CHECK(cell(wk, 3, "prompt_tokens") == "0");
  for (const char* rate : {"cache_hit_rate", "host_hit_rate", "ssd_hit_rate", "recompute_rate"}) {
    CAPTURE(rate);
    CHECK(cell(wk, 3, rate).empty());
    CHECK(!cell(wk, 0, rate).empty());
  }
}

TEST_CASE("cluster.pd.streaming: layerwise round-trips through config.resolved.yaml, none is not written") {
  ScenarioConfig none = load_scenario(write_temp("pd.yaml", kPd), {});
  CHECK(none.pd.streaming == PdStreaming::kNone);
  CHECK(!none.resolved()["cluster"]["pd"]["streaming"].IsDefined());  // resolves as before the key existed
  ScenarioConfig c = load_scenario(write_temp("pd.yaml", kPd), {"cluster.pd.streaming=layerwise"});
  CHECK(c.pd.streaming == PdStreaming::kLayerwise);
  fs::path base = testing::temp_dir() / "pd_stream_run";
  fs::remove_all(base);
  execute_run(c, RunOptions{(base / "a").string(), false});
  ScenarioConfig again = load_scenario((base / "a" / "config.resolved.yaml").string(), {});
  CHECK(again == c);
  CHECK(again.pd.streaming == PdStreaming::kLayerwise);
  execute_run(again, RunOptions{(base / "b").string(), false});
  for (const char* f : {"requests.csv", "workers.csv", "summary.csv", "config.resolved.yaml"}) {
    CAPTURE(f);
    CHECK(slurp(base / "a" / f) == slurp(base / "b" / f));
  }
  // Some transfers started before their request's first token (streamed), none ended before it.
  CsvTable req = read_csv((base / "a" / "requests.csv").string());
  int streamed = 0;
  for (std::size_t i = 0; i < req.rows.size(); ++i) {
    if (cell(req, i, "status") != "finished" || cell(req, i, "transfer_start_s").empty()) continue;
    const double first = std::stod(cell(req, i, "first_token_s"));
    if (std::stod(cell(req, i, "transfer_start_s")) < first) ++streamed;
    CHECK(std::stod(cell(req, i, "transfer_end_s")) >= first);
    CHECK(std::stod(cell(req, i, "kv_wait_s")) >= 0);
  }
  CHECK(streamed > 0);
}

TEST_CASE("without pools the cluster is one mixed pool: colocated columns, no PD keys written back") {
  std::string yaml = kPd;
  yaml = yaml.substr(0, yaml.find("cluster:")) + "cluster: {workers: 2}\npolicy: {local: fcfs}\n" +
         yaml.substr(yaml.find("workload:"));
  ScenarioConfig c = load_scenario(write_temp("colo.yaml", yaml), {});
  CHECK(c.pools.empty());
  CHECK(!c.disaggregated());
  const YAML::Node r = c.resolved();
  CHECK(!r["cluster"]["pools"].IsDefined());
  CHECK(!r["cluster"]["pd"].IsDefined());
  CHECK(!r["policy"]["decode_global"].IsDefined());
  fs::path base = testing::temp_dir() / "colo_run";
  fs::remove_all(base);
  execute_run(c, RunOptions{base.string(), false});
  CsvTable req = read_csv((base / "requests.csv").string());
  for (std::size_t i = 0; i < req.rows.size(); ++i) {
    CHECK(cell(req, i, "prefill_worker") == cell(req, i, "worker"));
    CHECK(cell(req, i, "decode_worker") == cell(req, i, "worker"));
    CHECK(cell(req, i, "transfer_start_s").empty());
    CHECK(cell(req, i, "kv_wait_s").empty());
  }
  CsvTable wk = read_csv((base / "workers.csv").string());
  CHECK(cell(wk, 0, "pool") == "default");
  CHECK(cell(wk, 0, "role") == "mixed");
}

TEST_CASE("PD: D2LPM and Preble E2 route the prefill pool by prefix locality, unchanged") {
  // 4 prefill workers that share hot templates; the prefill pool's hit rate
  // with a locality-aware router beats round robin's.
  const char* yaml = R"(name: pd_locality
seed: 9
model: llama-3-8b
hardware: h100-sxm
cluster:
  pools:
    - {name: pre, role: prefill, workers: 4}
    - {name: dec, role: decode, workers: 2}
  pd: {link: rdma}
batching: {memory_utilization: 0.3}
policy: {local: lpm, global: round_robin}
workload:
  type: templates
  requests: 600
  block_size: 16
  pools:
    - {name: docs, count: 12, zipf: 0.6, tokens: {dist: uniform, min: 1500, max: 3000}}
  clients:
    - {name: a, rate: 30, pool: docs, prompt: {dist: uniform, min: 20, max: 200}, output: {dist: uniform, min: 2, max: 50}}
report: {requests_csv: false, timeline_interval_s: 0}
)";
  auto hit_rate = [&](const std::vector<std::string>& sets, const std::string& name) {
    ScenarioConfig c = load_scenario(write_temp(name + ".yaml", yaml), sets);
    RunOutput out = execute_run(c, RunOptions{(testing::temp_dir() / name).string(), false});
    CHECK(out.totals.finished == 600);
    double prompt = 0, cached = 0;
    for (std::size_t w = 0; w < 4; ++w) {  // the prefill pool
      prompt += static_cast<double>(out.workers[w].prompt_tokens);
      cached += static_cast<double>(out.workers[w].cached_tokens);
    }
    return cached / prompt;
  };
  const double rr = hit_rate({}, "loc_rr");
  const double d2 = hit_rate({"policy.local=dlpm", "policy.global=d2lpm"}, "loc_d2lpm");
  const double e2 = hit_rate({"policy.local=preble_local", "policy.global=preble_e2"}, "loc_e2");
  MESSAGE("prefill-pool hit rate: round_robin " << rr << ", d2lpm " << d2 << ", preble_e2 " << e2);
  CHECK(d2 > rr);
  CHECK(e2 > rr);
}
