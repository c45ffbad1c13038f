// kv_cache (configs/kv_tiers_config.h): parsing, per-worker overrides,
// config.resolved.yaml round trip (and absence when not set), errors naming
// file, line and key, hardware pcie_gbps as the host default, and a run that
// reports per-tier hit rates in workers.csv and summary.csv.
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
const char* kBase = R"(name: tiers
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

std::string error_of(const std::string& yaml) {
  try {
    load_scenario(write_temp("bad.yaml", yaml), {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

double cell(const CsvTable& t, std::size_t row, const char* column) {
  const int c = t.column(column);
  REQUIRE_MESSAGE(c >= 0, column);
  return std::strtod(t.rows.at(row).at(static_cast<std::size_t>(c)).c_str(), nullptr);
}

}  // namespace

TEST_CASE("kv_cache parses, overrides per worker, round-trips, and is absent from the resolved YAML when not set") {
  const std::string path = write_temp("ok.yaml", kBase);
  ScenarioConfig plain = load_scenario(path, {});
  CHECK_FALSE(plain.kv_tiers.enabled());
  CHECK_FALSE(plain.resolved()["kv_cache"].IsDefined());
  CHECK(plain.hardware.pcie_gbps == 64);  // configs/hardware/h100-sxm.yaml
  CHECK(plain.resolved()["hardware"]["pcie_gbps"].as<double>() == 64);

  ScenarioConfig c = load_scenario(
      path, {"kv_cache={host: {capacity_gb: 200}, ssd: {capacity_gb: 1000, bandwidth_gbps: 7, latency_us: 80}}",
             "cluster.overrides=[{worker: 1, kv_cache: {host: {capacity_gb: 50, latency_us: 5}, overlap: false}}]"});
  CHECK(c.kv_tiers.host == KvTierSpec{200, 0, 0});
  CHECK(c.kv_tiers.ssd == KvTierSpec{1000, 7, 80});
  CHECK(c.kv_tiers.overlap);
  CHECK(c.workers[0].kv_tiers == c.kv_tiers);
  CHECK(c.workers[1].kv_tiers.host == KvTierSpec{50, 0, 5});
  CHECK(c.workers[1].kv_tiers.ssd == c.kv_tiers.ssd);  // not set in the override: the scenario's
  CHECK_FALSE(c.workers[1].kv_tiers.overlap);
  const YAML::Node r = c.resolved();
  CHECK(r["kv_cache"]["host"]["capacity_gb"].as<double>() == 200);
  CHECK(r["cluster"]["overrides"][0]["kv_cache"]["overlap"].as<bool>() == false);
  CHECK(parse_scenario(r, path) == c);
  CHECK_FALSE(plain == c);
}

TEST_CASE("bad kv_cache settings are errors naming file, line and key") {
  const std::string base = kBase;
  const std::pair<const char*, const char*> cases[] = {
      {"kv_cache:\n  host: {capacity_gb: -1}\n", "kv_cache.host.capacity_gb"},
      {"kv_cache:\n  host: {capacity_gb: 10, bandwidth_gbps: -2}\n", "kv_cache.host.bandwidth_gbps"},
      {"kv_cache:\n  ssd: {capacity_gb: 10, bandwidth_gbps: 5}\n", "kv_cache.ssd"},
      {"kv_cache:\n  host: {capacity_gb: 10}\n  ssd: {capacity_gb: 10}\n", "kv_cache.ssd.capacity_gb"},
      {"kv_cache:\n  host: {size_gb: 10}\n", "size_gb"},
      {"kv_cache:\n  overlap: maybe\n", "overlap"},
  };
  for (const auto& bad : cases) {
    const auto& yaml = bad.first;  // not a structured binding: clang 14 cannot capture one in CAPTURE
    const auto& key = bad.second;
    CAPTURE(yaml);
    const std::string e = error_of(base + yaml);
    CHECK(e.find("bad.yaml:") != std::string::npos);
    CHECK(e.find(key) != std::string::npos);
  }
  std::string hw = base;
  hw.replace(hw.find("hardware: h100-sxm"), 18, "hardware: {name: x, pcie_gbps: 0}");
  CHECK(error_of(hw).find("pcie_gbps") != std::string::npos);
}

TEST_CASE("a run with a host tier reports per-tier hit rates, and zeros without one") {
  const fs::path base = testing::temp_dir() / "tier_run";
  fs::remove_all(base);
  const std::string path = write_temp("ok.yaml", kBase);
  execute_run(load_scenario(path, {}), RunOptions{(base / "none").string(), false});
  execute_run(load_scenario(path, {"kv_cache={host: {capacity_gb: 100}}"}), RunOptions{(base / "host").string(), false});
  const CsvTable wn = read_csv((base / "none" / "workers.csv").string());
  const CsvTable wh = read_csv((base / "host" / "workers.csv").string());
  REQUIRE(wn.rows.size() == 2);
  REQUIRE(wh.rows.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK(cell(wn, i, "host_hit_tokens") == 0);
    CHECK(cell(wn, i, "host_capacity_pages") == 0);
    CHECK(cell(wn, i, "recompute_rate") == doctest::Approx(1 - cell(wn, i, "cache_hit_rate")).epsilon(1e-5));
    CHECK(cell(wh, i, "host_hit_tokens") > 0);
    CHECK(cell(wh, i, "host_capacity_pages") > 0);
    CHECK(cell(wh, i, "host_peak_pages") <= cell(wh, i, "host_capacity_pages"));
    CHECK(cell(wh, i, "cache_hit_rate") + cell(wh, i, "host_hit_rate") + cell(wh, i, "ssd_hit_rate") +
              cell(wh, i, "recompute_rate") ==
          doctest::Approx(1).epsilon(1e-5));
  }
  const CsvTable sn = read_csv((base / "none" / "summary.csv").string());
  const CsvTable sh = read_csv((base / "host" / "summary.csv").string());
  CHECK(cell(sn, 0, "host_hit_rate") == 0);
  CHECK(cell(sh, 0, "host_hit_rate") > 0);
  // The host tier serves what HBM evicted: fewer prompt tokens are computed.
  CHECK(cell(sh, 0, "recompute_rate") < cell(sn, 0, "recompute_rate"));
}
