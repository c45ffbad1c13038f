// Sweep tests: expansion order, shards, results independent of --jobs,
// resume (keyed on the resolved config), output-folder protection, and
// merging shards into one sweep.csv (with its checks).
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "configs/config_test_util.h"
#include "configs/run_builder.h"
#include "configs/sweep_runner.h"
#include "reports/csv_reader.h"
#include "reports/output_dir.h"
#include "reports/sweep_merge.h"
#include "reports/sweep_summary.h"
#include "sim/core/rng.h"
#include "sim/core/error.h"
#include "sim/core/test_util.h"

using namespace servesim;
namespace fs = std::filesystem;
using servesim::testing::slurp;
using servesim::testing::contains;

namespace {
fs::path temp_dir(const std::string& name) {
  fs::path d = testing::temp_dir() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
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
  CHECK(select_shard(s.points, "1/2").size() == 3);  // indices 0, 2, 4
  CHECK(select_shard(s.points, "2/2").size() == 2);
  CHECK(select_shard(s.points, "1/2")[1].index == 2);
  for (const char* bad : {"0/2", "3/2", "1/-2", "-1/2", "1/0", "x", "1/2x", "1/", "/2", " 1/2", "1/+2", "1/99999999999"})
    CHECK_THROWS_AS(select_shard(s.points, bad), InputError);
  CHECK(parse_shard("16/16").k == 16);
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

  run_sweep(s, SweepOptions{(d / "shard1").string(), 2, "1/2", {}, false});
  run_sweep(s, SweepOptions{(d / "shard2").string(), 1, "2/2", {}, false});
  // Shards given in any order merge, in point order, into the very bytes of
  // the unsharded sweep.csv.
  MergeResult m = merge_sweeps({(d / "shard2").string(), (d / "shard1").string()}, (d / "merged.csv").string());
  CHECK(m.points == 5);
  CHECK(m.missing.empty());
  CHECK(slurp(d / "merged.csv") == slurp(d / "one" / "sweep.csv"));
  CsvTable whole = read_csv((d / "one" / "sweep.csv").string());
  // point, repetition, seed, run, then the swept keys in snake_case.
  CHECK(whole.header[0] == "point");
  CHECK(whole.header[3] == "run");
  CHECK(whole.column("policy_global") == 4);
  CHECK(whole.column("policy.global") == -1);  // one naming style
  CHECK(whole.rows[1][whole.column("seed")] == "2");
  CHECK(fs::exists(d / "one" / "sweep_summary.csv"));
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

TEST_CASE("a base path longer than the file system allows is an input error naming base (found by fuzz_sweep)") {
  fs::path d = temp_dir("long_base");
  std::ofstream(d / "long.yaml") << "name: long\nbase: " << std::string(5000, 'b') << ".yaml\ngrid:\n  seed: [1]\n";
  try {
    (void)load_sweep((d / "long.yaml").string());
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("base") != std::string::npos);
  }
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
  CHECK_FALSE(fs::exists(d / "out"));  // refused before the folder was touched
}

namespace {
SweepOutcome run_quiet(const SweepSpec& s, const fs::path& out, const std::string& shard = "",
                       std::vector<std::string> sets = {}) {
  return run_sweep(s, SweepOptions{out.string(), 1, shard, std::move(sets), false});
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Files larger than `bytes` cannot be written (EFBIG, as on a full disk)
// until the guard is destroyed.
struct FileSizeLimit {
  rlimit saved{};
  explicit FileSizeLimit(rlim_t bytes) {
    std::signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &saved);
    rlimit l = saved;
    l.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &l);
  }
  ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &saved); }
};
}  // namespace

TEST_CASE("resume re-runs every point after --set, the sweep's set: block or the base scenario changed") {
  fs::path d = temp_dir("resume_config");
  SweepSpec s = load_sweep(write_sweep(d).string());
  const fs::path out = d / "out";
  CHECK(run_quiet(s, out).ran == 5);
  CHECK(run_quiet(s, out).skipped == 5);  // nothing changed: all done

  // --set: before the fix, "5 already done" with the numbers of 150 requests.
  SweepOutcome a = run_quiet(s, out, "", {"workload.requests=60"});
  CHECK(a.ran == 5);
  CHECK(a.skipped == 0);
  CHECK(read_csv((out / "sweep.csv").string()).rows[0][read_csv((out / "sweep.csv").string()).column("requests")] ==
        "60");
  CHECK(run_quiet(s, out, "", {"workload.requests=60"}).skipped == 5);

  // The sweep file's set: block (same grid, so the same sweep).
  std::string text = slurp(d / "sweep.yaml");
  text.replace(text.find("150"), 3, "140");
  std::ofstream(d / "sweep.yaml") << text;
  SweepSpec s2 = load_sweep((d / "sweep.yaml").string());
  CHECK(s2.identity() == s.identity());
  CHECK(run_quiet(s2, out).ran == 5);

  // The base scenario.
  std::string base = slurp(d / "base.yaml");
  base.replace(base.find("workers: 2"), 10, "workers: 3");
  std::ofstream(d / "base.yaml") << base;
  SweepOutcome b = run_quiet(s2, out);
  CHECK(b.ran == 5);
  CHECK(read_csv((out / "sweep.csv").string()).rows[0][read_csv((out / "sweep.csv").string()).column("workers")] ==
        "3");
}

TEST_CASE("resume re-runs a point whose trace file changed (size and mtime)") {
  fs::path d = temp_dir("resume_trace");
  auto write_trace = [&](int rows) {
    std::ofstream t(d / "trace.csv");
    t << "id,arrival_s,prompt_tokens,output_tokens\n";
    for (int i = 0; i < rows; ++i) t << i << "," << i * 0.1 << ",100,10\n";
  };
  write_trace(20);
  std::ofstream(d / "base.yaml") << "name: t\nseed: 1\ncluster: {workers: 1}\n"
                                    "cost_model: {backend: fixed, base_ms: 5, per_prefill_token_us: 2, "
                                    "per_decode_token_us: 20}\n"
                                    "workload: {type: trace, path: " << (d / "trace.csv").string() << "}\n";
  std::ofstream(d / "sweep.yaml") << "name: t\nbase: base.yaml\ngrid: {seed: [1, 2]}\n";
  SweepSpec s = load_sweep((d / "sweep.yaml").string());
  CHECK(run_quiet(s, d / "out").ran == 2);
  CHECK(run_quiet(s, d / "out").skipped == 2);
  write_trace(25);
  SweepOutcome again = run_quiet(s, d / "out");
  CHECK(again.ran == 2);
  CHECK(read_csv((d / "out" / "sweep.csv").string()).rows[0][read_csv((d / "out" / "sweep.csv").string()).column(
            "requests")] == "25");
}

TEST_CASE("a sweep folder holding another sweep or another shard is refused, naming the folder") {
  fs::path d = temp_dir("identity");
  SweepSpec s = load_sweep(write_sweep(d).string());
  run_quiet(s, d / "out", "1/2");
  std::ofstream(d / "other.yaml") << "name: other\nbase: base.yaml\ngrid: {seed: [7, 8]}\n";
  SweepSpec other = load_sweep((d / "other.yaml").string());
  std::string e = error_of([&] { run_quiet(other, d / "out"); });
  CHECK(contains(e, (d / "out").string()));
  CHECK(contains(e, "different sweep"));
  e = error_of([&] { run_quiet(s, d / "out", "2/2"); });
  CHECK(contains(e, "holds shard 1/2"));
  // A folder of an older servesim (points/ but no sweep_meta.yaml) is refused too.
  fs::create_directories(d / "old" / "points" / "p0000-00000000");
  CHECK(contains(error_of([&] { run_quiet(s, d / "old"); }), "sweep_meta.yaml"));
  // Nothing of the refused runs was written.
  CHECK(read_sweep_meta((d / "out").string())->shard == "1/2");
}

TEST_CASE("merge checks identity, shard consistency and coverage") {
  fs::path d = temp_dir("merge_checks");
  SweepSpec s = load_sweep(write_sweep(d).string());
  run_quiet(s, d / "a1", "1/2");
  run_quiet(s, d / "a2", "2/2");
  run_quiet(s, d / "b1", "1/3");
  run_quiet(s, d / "whole");
  std::ofstream(d / "other.yaml") << "name: other\nbase: base.yaml\ngrid: {seed: [7, 8]}\n";
  run_quiet(load_sweep((d / "other.yaml").string()), d / "o2", "2/2");
  run_quiet(s, d / "set2", "2/2", {"workload.requests=60"});
  const std::string csv = (d / "m.csv").string();
  auto merge = [&](std::vector<std::string> dirs) {
    for (auto& x : dirs) x = (d / x).string();
    return error_of([&] { merge_sweeps(dirs, csv); });
  };
  CHECK(contains(merge({"a1", "a1"}), "both hold shard 1/2"));
  CHECK(contains(merge({"a1", "b1"}), "shards of different splits overlap"));
  CHECK(contains(merge({"whole", "a2"}), "holds the whole sweep"));
  CHECK(contains(merge({"a1", "o2"}), "different sweeps"));
  CHECK(contains(merge({"a1", "set2"}), "different settings"));
  // Coverage: shard 2/2 not given; the missing points are named.
  std::string e = merge({"a1"});
  CHECK(contains(e, "2 of the 5 points"));
  CHECK(contains(e, s.points[1].id));
  CHECK(contains(e, s.points[3].id));
  CHECK(contains(e, "shards not given: 2/2"));
  CHECK_FALSE(fs::exists(csv));
  MergeResult partial = merge_sweeps({(d / "a1").string()}, csv, MergeOptions{true});
  CHECK(partial.points == 3);
  CHECK(partial.missing == std::vector<std::string>{s.points[1].id, s.points[3].id});
  // An unfinished point (no DONE) counts as missing.
  fs::remove(d / "a2" / "points" / s.points[3].id / "DONE");
  CHECK(contains(merge({"a1", "a2"}), "1 of the 5 points"));
  CHECK(merge({"whole"}).empty());
}

TEST_CASE("a sweep grid is counted before it is expanded and refused above kMaxSweepPoints") {
  fs::path d = temp_dir("huge");
  write_sweep(d);
  std::string grid;
  for (int k = 0; k < 10; ++k) grid += "  k" + std::to_string(k) + ": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n";
  std::ofstream(d / "huge.yaml") << "name: huge\nbase: base.yaml\ngrid:\n" << grid;
  std::string e = error_of([&] { load_sweep((d / "huge.yaml").string()); });
  CHECK(contains(e, (d / "huge.yaml").string()));
  CHECK(contains(e, "1e+10 points"));
  CHECK(contains(e, std::to_string(kMaxSweepPoints)));
}

TEST_CASE("a point whose write fails (full disk) gets no DONE, keeps no stale output, and is re-run") {
  fs::path d = temp_dir("full_disk");
  SweepSpec s = load_sweep(write_sweep(d).string());
  const fs::path out = d / "out";
  run_quiet(s, out);
  const fs::path p0 = out / "points" / s.points[0].id;
  REQUIRE(fs::exists(p0 / "DONE"));
  SweepOutcome failed;
  {
    FileSizeLimit limit(2000);  // requests.csv of 150 requests is larger
    failed = run_quiet(s, out, "", {"workload.requests=100"});
  }
  CHECK(failed.failures.size() == 5);
  CHECK(contains(failed.failures[0], "requests.csv"));
  CHECK_FALSE(fs::exists(p0 / "DONE"));
  CHECK_FALSE(fs::exists(p0 / "summary.csv"));  // the earlier run's, removed before starting
  CHECK_FALSE(fs::exists(p0 / "requests.csv"));
  CHECK_FALSE(fs::exists(p0 / "requests.csv.tmp"));
  CHECK(failed.merged == 0);
  SweepOutcome again = run_quiet(s, out, "", {"workload.requests=100"});
  CHECK(again.ran == 5);
  CHECK(again.merged == 5);
}

TEST_CASE("a run removes only servesim's own stale files and writes DONE last") {
  fs::path d = temp_dir("run_folder");
  write_sweep(d);
  const fs::path out = d / "run";
  fs::create_directories(out);
  std::ofstream(out / "notes.txt") << "mine";
  std::ofstream(out / "timeline.csv") << "stale";       // this run writes no timeline
  std::ofstream(out / "summary.csv.tmp") << "partial";  // a killed earlier run
  ScenarioConfig c = load_scenario((d / "base.yaml").string(), {"report.timeline_interval_s=0"});
  execute_run(c, RunOptions{out.string(), false});
  CHECK(fs::exists(out / "DONE"));
  CHECK(fs::exists(out / "summary.csv"));
  CHECK(slurp(out / "notes.txt") == "mine");
  CHECK_FALSE(fs::exists(out / "timeline.csv"));
  CHECK_FALSE(fs::exists(out / "summary.csv.tmp"));
  {
    // A second writer into the folder is refused while the first holds it.
    OutputLock held(out.string());
    std::string e = error_of([&] { execute_run(c, RunOptions{out.string(), false}); });
    CHECK(contains(e, out.string()));
    CHECK(contains(e, "in use by another servesim process"));
  }
  {
    FileSizeLimit limit(2000);
    CHECK_THROWS_AS(execute_run(c, RunOptions{out.string(), false}), InputError);
  }
  CHECK_FALSE(fs::exists(out / "DONE"));
  CHECK_FALSE(fs::exists(out / "summary.csv"));
  CHECK(slurp(out / "notes.txt") == "mine");
}

TEST_CASE("repetition seeds: repetition 0 keeps the base seed, later ones are derived from (base, r) only") {
  CHECK(repetition_seed(5, 0) == 5);
  CHECK(repetition_seed(5, 1) == (Rng::stream(5, 1).next_u64() >> 33));
  CHECK(repetition_seed(5, 1) == repetition_seed(5, 1));
  std::vector<std::uint64_t> seen;
  for (std::uint64_t base : {1, 2, 5})
    for (std::size_t r = 1; r < 50; ++r) {
      const std::uint64_t x = repetition_seed(base, r);
      CHECK(x < (std::uint64_t{1} << 31));
      seen.push_back(x);
    }
  std::sort(seen.begin(), seen.end());
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());  // (1, 2) is not (2, 1)
}

TEST_CASE("repeat R makes R runs per point: adjacent indices, shared point id, the file's key or --repeat") {
  fs::path d = temp_dir("repeat_expand");
  write_sweep(d);
  SweepSpec s = load_sweep((d / "sweep.yaml").string(), 3);
  CHECK(s.repeat == 3);
  REQUIRE(s.points.size() == 15);
  CHECK(s.points[4].index == 4);
  CHECK(s.points[4].repetition == 1);
  CHECK(s.points[4].point == s.points[3].point);
  CHECK(s.points[4].id == s.points[3].point + "-r001");
  CHECK(s.points[5].point == s.points[4].point);
  CHECK(s.points[6].point != s.points[5].point);
  CHECK(load_sweep((d / "sweep.yaml").string()).points[1].id == s.points[3].point);  // repeat 1: ids unchanged
  std::ofstream(d / "rep.yaml") << "name: rep\nbase: base.yaml\nrepeat: 2\ngrid: {policy.global: [random]}\n";
  CHECK(load_sweep((d / "rep.yaml").string()).points.size() == 2);
  CHECK(load_sweep((d / "rep.yaml").string(), 4).points.size() == 4);  // --repeat wins
  for (const char* bad : {"0", "1001", "x"}) {
    std::ofstream(d / "bad.yaml") << "name: bad\nbase: base.yaml\nrepeat: " << bad << "\ngrid: {seed: [1]}\n";
    CAPTURE(bad);
    std::string e = error_of([&] { load_sweep((d / "bad.yaml").string()); });
    CHECK(contains(e, "repeat"));
    CHECK(contains(e, (d / "bad.yaml").string()));
  }
}

TEST_CASE("repetitions are runs: one sweep.csv row each, seeds derived, summarized per point, sharded and resumed") {
  fs::path d = temp_dir("repeat_run");
  write_sweep(d);
  SweepSpec s = load_sweep((d / "sweep.yaml").string(), 2);
  SweepOutcome whole = run_sweep(s, SweepOptions{(d / "whole").string(), 2, "", {}, false});
  CHECK(whole.ran == 10);
  CsvTable t = read_csv((d / "whole" / "sweep.csv").string());
  REQUIRE(t.rows.size() == 10);
  const int point = t.column("point"), rep = t.column("repetition"), seed = t.column("seed"), run = t.column("run");
  CHECK(t.rows[2][point] == s.points[2].point);
  CHECK(t.rows[2][rep] == "0");
  CHECK(t.rows[3][rep] == "1");
  CHECK(t.rows[3][run] == s.points[3].id);
  CHECK(t.rows[2][seed] == "2");  // the grid's seed: the base of the point's repetitions
  CHECK(t.rows[3][seed] == std::to_string(repetition_seed(2, 1)));
  CHECK(t.rows[8][seed] == "5");  // the explicit point runs with the base scenario's seed
  CHECK(t.rows[9][seed] == std::to_string(repetition_seed(5, 1)));
  CHECK(t.rows[2][t.column("throughput_rps")] != t.rows[3][t.column("throughput_rps")]);  // other seed, other run

  CsvTable sum = read_csv((d / "whole" / "sweep_summary.csv").string());
  REQUIRE(sum.rows.size() == 5);
  CHECK(sum.rows[1][sum.column("point")] == s.points[2].point);
  CHECK(sum.rows[1][sum.column("runs")] == "2");
  double a = std::stod(t.rows[2][t.column("throughput_rps")]), b = std::stod(t.rows[3][t.column("throughput_rps")]);
  CHECK(std::stod(sum.rows[1][sum.column("throughput_rps_mean")]) == doctest::Approx((a + b) / 2).epsilon(1e-5));
  CHECK(std::stod(sum.rows[1][sum.column("throughput_rps_ci95")]) ==
        doctest::Approx(12.7062047 * std::abs(a - b) / 2).epsilon(1e-5));

  // Shards split runs (a point's two repetitions land in different shards) and merge into the same bytes.
  run_sweep(s, SweepOptions{(d / "s1").string(), 1, "1/2", {}, false});
  run_sweep(s, SweepOptions{(d / "s2").string(), 1, "2/2", {}, false});
  CHECK(fs::exists(d / "s1" / "points" / s.points[0].id));
  CHECK(fs::exists(d / "s2" / "points" / s.points[1].id));
  MergeResult m = merge_sweeps({(d / "s1").string(), (d / "s2").string()}, (d / "merged.csv").string());
  CHECK(m.points == 10);
  CHECK(slurp(d / "merged.csv") == slurp(d / "whole" / "sweep.csv"));

  // Resume: one lost repetition is re-run, nothing else.
  fs::remove(d / "whole" / "points" / s.points[7].id / "DONE");
  SweepOutcome again = run_sweep(s, SweepOptions{(d / "whole").string(), 1, "", {}, false});
  CHECK(again.ran == 1);
  CHECK(again.skipped == 9);
  CHECK(slurp(d / "whole" / "sweep.csv") == slurp(d / "merged.csv"));
}

TEST_CASE("a swept map value is expanded into snake_case columns, never written as YAML text") {
  fs::path d = temp_dir("map_columns");
  write_sweep(d);
  std::ofstream(d / "map.yaml") << "name: map\nbase: base.yaml\nset: {workload.requests: 40}\n"
                                   "grid:\n  policy.local: [{name: dlpm, quantum: 512}, vtc]\n";
  SweepSpec s = load_sweep((d / "map.yaml").string());
  run_sweep(s, SweepOptions{(d / "out").string(), 1, "", {}, false});
  CsvTable t = read_csv((d / "out" / "sweep.csv").string());
  REQUIRE(t.rows.size() == 2);
  REQUIRE(t.column("policy_local") >= 0);
  REQUIRE(t.column("policy_local_quantum") >= 0);
  CHECK(t.column("policy_local") < t.column("scenario"));  // a swept column, before the summary's
  CHECK(t.rows[0][t.column("policy_local")] == "dlpm");
  CHECK(t.rows[0][t.column("policy_local_quantum")] == "512");
  CHECK(t.rows[1][t.column("policy_local")] == "vtc");
  CHECK(t.rows[1][t.column("policy_local_quantum")].empty());
  CHECK_FALSE(contains(slurp(d / "out" / "sweep.csv"), "{"));
  CHECK(swept_column("policy.local.quantum") == "policy_local_quantum");
}
