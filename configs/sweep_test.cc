// Sweep tests: expansion order, shards, results independent of --jobs,
// resume, and merging shards into one sweep.csv.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "configs/config_test_util.h"
#include "configs/sweep_runner.h"
#include "reports/csv_reader.h"
#include "reports/sweep_merge.h"
#include "sim/core/error.h"

using namespace servesim;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
  fs::path d = testing::temp_dir() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path write_sweep(const fs::path& dir) {
  std::ofstream(dir / "base.yaml") << R"(name: base
seed: 5
cluster: {workers: 2}
cost_model: {backend: fixed, base_ms: 5, per_prefill_token_us: 2, per_decode_token_us: 20}
workload:
  type: synthetic
  requests: 200
  clients:
    - {name: a, rate: 40, prompt: {dist: uniform, min: 10, max: 500}, output: {dist: uniform, min: 1, max: 60}}
)";
  std::ofstream(dir / "sweep.yaml") << R"(name: s
base: base.yaml
set: {workload.requests: 150}
grid:
  policy.global: [round_robin, least_outstanding]
  seed: [1, 2]
points:
  - {policy.global: random, workload.rate_scale: 2}
)";
  return dir / "sweep.yaml";
}
}  // namespace

TEST_CASE("a sweep expands the grid in file order, then the explicit points") {
  fs::path d = temp_dir("expand");
  SweepSpec s = load_sweep(write_sweep(d).string());
  REQUIRE(s.points.size() == 5);
  CHECK(s.points[0].overrides == std::vector<Override>{{"policy.global", "round_robin"}, {"seed", "1"}});
  CHECK(s.points[1].overrides == std::vector<Override>{{"policy.global", "round_robin"}, {"seed", "2"}});
  CHECK(s.points[2].overrides[0].second == "least_outstanding");
  CHECK(s.points[4].overrides[1] == Override{"workload.rate_scale", "2"});
  CHECK(s.swept_keys == std::vector<std::string>{"policy.global", "seed", "workload.rate_scale"});
  CHECK(select_shard(s.points, "1/2").size() == 2);
  CHECK(select_shard(s.points, "0/2").size() == 3);
  CHECK_THROWS_AS(select_shard(s.points, "2/2"), InputError);
  CHECK_THROWS_AS(select_shard(s.points, "x"), InputError);
}

TEST_CASE("sweep results are identical with one job or several, and shards merge into the same sweep.csv") {
  fs::path d = temp_dir("jobs");
  SweepSpec s = load_sweep(write_sweep(d).string());
  SweepOutcome one = run_sweep(s, SweepOptions{(d / "one").string(), 1, "", {}, false});
  SweepOutcome three = run_sweep(s, SweepOptions{(d / "three").string(), 3, "", {}, false});
  CHECK(one.ran == 5);
  CHECK(three.ran == 5);
  CHECK(slurp(d / "one" / "sweep.csv") == slurp(d / "three" / "sweep.csv"));
  for (const auto& p : s.points)
    CHECK(slurp(d / "one" / "points" / p.id / "requests.csv") == slurp(d / "three" / "points" / p.id / "requests.csv"));

  run_sweep(s, SweepOptions{(d / "shard0").string(), 2, "0/2", {}, false});
  run_sweep(s, SweepOptions{(d / "shard1").string(), 1, "1/2", {}, false});
  merge_sweeps({(d / "shard0").string(), (d / "shard1").string()}, (d / "merged.csv").string());
  CsvTable merged = read_csv((d / "merged.csv").string());
  CsvTable whole = read_csv((d / "one" / "sweep.csv").string());
  CHECK(merged.rows.size() == 5);
  CHECK(merged.header == whole.header);
  // Same rows; merge orders shard by shard, so compare as sets.
  auto sorted = [](std::vector<std::vector<std::string>> r) {
    std::sort(r.begin(), r.end());
    return r;
  };
  CHECK(sorted(merged.rows) == sorted(whole.rows));
  CHECK(whole.column("policy.global") == 1);
  CHECK(whole.column("throughput_rps") > 0);
}

TEST_CASE("a resumed sweep skips finished points and reruns unfinished ones") {
  fs::path d = temp_dir("resume");
  SweepSpec s = load_sweep(write_sweep(d).string());
  run_sweep(s, SweepOptions{(d / "out").string(), 1, "", {}, false});
  fs::remove(d / "out" / "points" / s.points[3].id / "DONE");  // as if killed mid-point
  SweepOutcome again = run_sweep(s, SweepOptions{(d / "out").string(), 1, "", {}, false});
  CHECK(again.skipped == 4);
  CHECK(again.ran == 1);
  CHECK(again.merged == 5);
}

TEST_CASE("a typo in a sweep point fails before any point runs, naming the point") {
  fs::path d = temp_dir("typo");
  write_sweep(d);
  std::ofstream(d / "bad.yaml") << "name: bad\nbase: base.yaml\ngrid:\n  policy.globl: [round_robin]\n";
  SweepSpec s = load_sweep((d / "bad.yaml").string());
  try {
    run_sweep(s, SweepOptions{(d / "out").string(), 1, "", {}, false});
    FAIL("expected an error");
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(m.find("point 0") != std::string::npos);
    CHECK(m.find("policy.globl") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(d / "out" / "points" / s.points[0].id / "DONE"));
}
