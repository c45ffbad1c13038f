// cluster.kv_store (configs/kv_store_config.h): parsing, config.resolved.yaml
// round trip (and absence when not set), errors naming file, line and key,
// and runs that report the store's hit rate in summary.csv: routers that see
// the store (kv_aware; cache_aware, d2lpm and preble_e2 with view: cluster) on a
// shared-template workload.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "configs/config_test_util.h"
#include "configs/run_builder.h"
#include "reports/csv_reader.h"

using namespace servesim;
namespace fs = std::filesystem;

namespace {

// Shared templates in a small KV pool: the HBM cache must evict.
const char* kBase = R"(name: store
seed: 5
model: llama-3-8b
hardware: h100-sxm
cluster:
  workers: 2
batching:
  memory_utilization: 0.3
policy:
  local: fcfs
  global: round_robin
workload:
  type: templates
  duration_s: 20
  block_size: 16
  pools:
    - {name: docs, count: 60, zipf: 0.6, tokens: {dist: uniform, min: 3000, max: 6000}}
  clients:
    - name: a
      rate: 30
      pool: docs
      prompt: {dist: uniform, min: 20, max: 200}
      output: {dist: uniform, min: 20, max: 100}
)";

std::string write_temp(const std::string& name, const std::string& text) {
  fs::path p = testing::temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

double cell(const CsvTable& t, const char* column) {
  const int c = t.column(column);
  REQUIRE_MESSAGE(c >= 0, column);
  return std::strtod(t.rows.at(0).at(static_cast<std::size_t>(c)).c_str(), nullptr);
}

}  // namespace

TEST_CASE("cluster.kv_store parses, round-trips, and is absent from the resolved YAML when not set") {
  const std::string path = write_temp("store_ok.yaml", kBase);
  ScenarioConfig plain = load_scenario(path, {});
  CHECK_FALSE(plain.kv_store.enabled());
  CHECK_FALSE(plain.resolved()["cluster"]["kv_store"].IsDefined());
  ScenarioConfig c = load_scenario(path, {"cluster.kv_store={capacity_gb: 500, placement: write_through}"});
  CHECK(c.kv_store.enabled());
  CHECK(c.kv_store.capacity_gb == 500);
  CHECK(c.kv_store.bandwidth_gbps == 100);
  CHECK(c.kv_store.link_gbps == 0);
  CHECK(c.kv_store.latency_us == 20);
  CHECK(c.kv_store.placement == KvStorePlacement::kWriteThrough);
  const YAML::Node r = c.resolved();
  CHECK(r["cluster"]["kv_store"]["placement"].as<std::string>() == "write_through");
  CHECK(parse_scenario(r, path) == c);
  CHECK_FALSE(plain == c);
}

TEST_CASE("bad cluster.kv_store settings are errors naming file, line and key") {
  const std::string base = kBase;
  const std::pair<const char*, const char*> cases[] = {
      {"cluster.kv_store={capacity_gb: -1}", "cluster.kv_store.capacity_gb"},
      {"cluster.kv_store={capacity_gb: 0}", "cluster.kv_store.capacity_gb"},
      {"cluster.kv_store={bandwidth_gbps: 10}", "cluster.kv_store"},
      {"cluster.kv_store={capacity_gb: 10, bandwidth_gbps: 0}", "cluster.kv_store.bandwidth_gbps"},
      {"cluster.kv_store={capacity_gb: 10, placement: lru}", "placement"},
      {"cluster.kv_store={capacity_gb: 10, size_gb: 3}", "size_gb"},
      {"policy.global={name: kv_aware, decode_weight: -1}", "decode_weight"},
  };
  for (const auto& bad : cases) {
    const auto& set = bad.first;  // not a structured binding: clang cannot capture one
    const auto& key = bad.second;
    CAPTURE(set);
    std::string e;
    try {
      load_scenario(write_temp("bad_store.yaml", base), {set});
    } catch (const InputError& x) {
      e = x.what();
    }
    CHECK(e.find("bad_store.yaml") != std::string::npos);
    CHECK(e.find(key) != std::string::npos);
  }
}

TEST_CASE("runs with a store report its hit rate, and routers that see it keep it") {
  const fs::path base = testing::temp_dir() / "store_run";
  fs::remove_all(base);
  const std::string path = write_temp("store_ok.yaml", kBase);
  const std::string store = "cluster.kv_store={capacity_gb: 1000, placement: write_through}";
  execute_run(load_scenario(path, {}), RunOptions{(base / "none").string(), false});
  execute_run(load_scenario(path, {store}), RunOptions{(base / "rr").string(), false});
  execute_run(load_scenario(path, {store, "policy.global=kv_aware"}), RunOptions{(base / "kv").string(), false});
  execute_run(load_scenario(path, {store, "policy.global={name: cache_aware, view: cluster}"}),
              RunOptions{(base / "ca").string(), false});
  execute_run(load_scenario(path, {store, "policy.local=dlpm", "policy.global={name: d2lpm, view: cluster}"}),
              RunOptions{(base / "d2").string(), false});
  execute_run(load_scenario(path, {store, "policy.global={name: preble_e2, view: cluster}"}),
              RunOptions{(base / "pr").string(), false});
  const CsvTable sn = read_csv((base / "none" / "summary.csv").string());
  CHECK(sn.column("store_hit_rate") < 0);  // no store: no store columns (outputs as before)
  for (const char* run : {"rr", "kv", "ca", "d2", "pr"}) {
    CAPTURE(run);
    const CsvTable s = read_csv((base / run / "summary.csv").string());
    CHECK(cell(s, "store_hit_rate") > 0);
    CHECK(cell(s, "total_hit_rate") > cell(sn, "cache_hit_rate"));
    CHECK(cell(s, "store_peak_pages") <= cell(s, "store_capacity_pages"));
    CHECK(cell(s, "total_hit_rate") <= 1);
    CHECK(cell(s, "finished") == cell(sn, "finished"));
  }
  // The resolved config states the view (written only when not the default index).
  CHECK(load_scenario(path, {"policy.global={name: d2lpm, view: cluster}", "policy.local=dlpm"})
            .resolved()["policy"]["global"]["view"]
            .as<std::string>() == "cluster");
  CHECK_FALSE(load_scenario(path, {"policy.global=cache_aware"}).resolved()["policy"]["global"]["view"].IsDefined());
}
