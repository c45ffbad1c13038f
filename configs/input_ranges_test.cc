// Issue 16 regression tests at the scenario level: duplicate and non-scalar
// YAML keys, ranges of config keys (option tables, trace settings, length
// distributions, timeline interval), and the idle-stretch timeline: a trace
// whose arrivals are UNIX epoch seconds runs quickly and writes a small
// timeline.csv.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "configs/run_builder.h"
#include "configs/sweep_spec.h"
#include "reports/csv_reader.h"
#include "sim/core/error.h"
#include "sim/core/test_util.h"

using namespace servesim;
namespace fs = std::filesystem;
using servesim::testing::contains;

namespace {

fs::path temp_dir() {
  static const struct Dir {
    fs::path path = fs::temp_directory_path() / ("servesim_input_ranges_test_" + std::to_string(getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

std::string write(const std::string& name, const std::string& text) {
  fs::path p = temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

const char* kBase = R"(name: t
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 1}
cost_model: {backend: roofline}
)";

std::string error_of(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario(write("s.yaml", yaml), sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kWorkload = "workload: {type: synthetic, requests: 10, clients: [{name: a, rate: 1}]}\n";

}  // namespace

TEST_CASE("a duplicate YAML key is an error naming file, line and key") {
  std::string err = error_of(std::string(kBase) + kWorkload + "cluster: {workers: 2}\n");
  CHECK(contains(err, "s.yaml:7:1: duplicate key 'cluster' (first at line 4)"));
  err = error_of(std::string(kBase) + "workload: {type: synthetic, requests: 10, requests: 20, clients: [{name: a, rate: 1}]}\n");
  CHECK(contains(err, "s.yaml:6:"));
  CHECK(contains(err, "duplicate key 'requests'"));
  // The same key in two different maps is fine.
  CHECK(error_of(std::string(kBase) + kWorkload + "report: {out: x}\n").empty());
  CHECK(contains(error_of(std::string(kBase) + kWorkload, {"workload={a: 1, a: 2}"}), "duplicate key 'a'"));
}

TEST_CASE("a non-scalar YAML key is an input error naming the file") {
  std::string err = error_of(std::string(kBase) + kWorkload + "[a, b]: 1\n");
  CHECK(contains(err, "s.yaml:7:1: a map key must be a plain value, got a list"));
  err = error_of(std::string(kBase) + kWorkload + "? {x: 1}\n: 2\n");
  CHECK(contains(err, "s.yaml:7:"));
  CHECK(contains(err, "got a map"));
}

TEST_CASE("huge config numbers are range errors, not overflow or nan") {
  CHECK(contains(error_of(std::string(kBase) + kWorkload + "report: {w_in: 1e300}\n"), "report.w_in: must be at most"));
  CHECK(contains(error_of(std::string(kBase) + kWorkload, {"cost_model.iteration_overhead_us=1e300"}),
                 "iteration_overhead_us: must be at most 1000000"));
  CHECK(contains(error_of(std::string(kBase) + kWorkload, {"batching.max_batch_tokens=1e300"}), "max_batch_tokens"));
  CHECK(contains(error_of(std::string(kBase) + kWorkload, {"seed=1e300"}), "out of range"));
  CHECK(contains(error_of(std::string(kBase) +
                          "workload: {type: synthetic, requests: 10, clients: [{name: a, rate: 1, prompt: 9.2e18}]}\n"),
                 "must be at most 1000000000 tokens"));
  CHECK(contains(error_of(std::string(kBase) + "workload: {type: synthetic, requests: 10, clients: [{name: a, rate: 1, "
                                               "output: {dist: lognormal, median: 10, sigma: 1e300}}]}\n"),
                 "sigma"));
  const std::string trace = write("t.csv", "arrival_ns,prompt_tokens,output_tokens\n0,4,4\n");
  CHECK(contains(error_of(std::string(kBase) + "workload: {type: trace, path: " + trace + ", rate_scale: 1e-300}\n"),
                 "workload.rate_scale: must be at least 1e-06"));
  CHECK(contains(error_of(std::string(kBase) + "workload: {type: trace, path: " + trace + ", window: {start_s: 1e300}}\n"),
                 "start_s"));
  CHECK(contains(error_of(std::string(kBase) + kWorkload + "report: {timeline_interval_s: 1e-9}\n"),
                 "timeline_interval_s: must be at least 0.001 (or 0), got 1e-09"));
  CHECK(error_of(std::string(kBase) + kWorkload + "report: {timeline_interval_s: 0.001}\n").empty());
}

TEST_CASE("an arrival that rate_scale pushes past the time limit is an error naming the row") {
  const std::string trace =
      write("late.csv", "arrival_ns,prompt_tokens,output_tokens\n0,4,4\n3000000000000000000,4,4\n");
  ScenarioConfig c = load_scenario(
      write("late.yaml", std::string(kBase) + "workload: {type: trace, path: " + trace + ", rate_scale: 0.5}\n"), {});
  RunOptions o;
  o.out_dir = (temp_dir() / "late_out").string();
  o.progress = false;
  std::string err;
  try {
    execute_run(c, o);
  } catch (const InputError& e) {
    err = e.what();
  }
  CHECK(contains(err, "late.csv:3: arrival 3000000000000000000 ns divided by rate_scale 0.5"));
}

TEST_CASE("a trace with UNIX-epoch arrivals runs quickly and writes a small timeline") {
  // Arrivals ~1.7e9 s: at 1 s per sample the old timeline wrote 1.7e9 rows of
  // an idle cluster before the first request. Now an idle stretch is two rows.
  std::string csv = "id,arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 5; ++i) csv += std::to_string(i) + "," + std::to_string(1700000000 + 3 * i) + ",100,10\n";
  const std::string trace = write("epoch.csv", csv);
  ScenarioConfig c = load_scenario(
      write("epoch.yaml", std::string(kBase) + "workload: {type: trace, path: " + trace + ", time_origin: zero}\n" +
                              "report: {timeline_interval_s: 0.001}\n"),
      {});
  RunOptions o;
  o.out_dir = (temp_dir() / "epoch_out").string();
  o.progress = false;
  RunOutput out = execute_run(c, o);
  CHECK(out.totals.requests == 5);
  CsvTable tl = read_csv(o.out_dir + "/timeline.csv");
  CHECK(tl.rows.size() < 50000);  // O(events), not 1.7e12 samples
  CHECK(tl.rows.size() > 2);
  // The first rows: the idle stretch from t = 0, written as its first and last instant.
  CHECK(tl.rows[0][0] == "0.000000");
  CHECK(std::stod(tl.rows[1][0]) > 1.6e9);
  CHECK(fs::file_size(o.out_dir + "/timeline.csv") < 4'000'000);
}

TEST_CASE("a malformed multi-line scalar document ends in an error, not a hang in the key check (fuzz_sweep)") {
  const std::string p = write("hang.yaml", "# The Q^# The Q^u sweep onntum: 8192}, {name: dlpm, quantum: 131072},\n         , tenants\n# assigned by the first differing prefix block, two workers with cache-aware\n# routing and a tight KV budget, so queue, ws fit");
  std::string err;
  try {
    load_sweep(p);
  } catch (const InputError& e) {
    err = e.what();
  }
  CHECK(contains(err, "hang.yaml:2:"));
}

TEST_CASE("tiny positive hardware and roofline numbers are range errors, not an overflowing cost (issue 16)") {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/configs/hardware/h100-sxm.yaml");
  std::stringstream h100;
  h100 << in.rdbuf();
  REQUIRE(contains(h100.str(), "bf16_tflops: 989"));
  for (const char* key : {"bf16_tflops", "mem_bandwidth_gbps", "tp_allreduce_gbps", "memory_gb", "l2_mb",
                          "bandwidth_fraction", "gemm_flops_fraction", "prefill_attention_flops_fraction",
                          "decode_attention_bandwidth_fraction"}) {
    CAPTURE(key);
    std::string text;
    std::stringstream lines(h100.str());
    for (std::string line; std::getline(lines, line);)
      text += (line.starts_with(std::string(key) + ":") ? std::string(key) + ": 1e-300" : line) + "\n";
    const std::string hw = write(std::string("hw_") + key + ".yaml", text);
    std::string base = kBase;
    base.replace(base.find("hardware: h100-sxm"), 18, "hardware: " + hw);
    const std::string err = error_of(base + kWorkload);
    CHECK(contains(err, hw));
    CHECK(contains(err, std::string(key) + ": must be at least 0.001, got 1e-300"));
  }
  for (const char* key : {"cost_model.compute_efficiency", "cost_model.memory_efficiency"})
    CHECK(contains(error_of(std::string(kBase) + kWorkload, {std::string(key) + "=1e-300"}), "must be at least 0.001"));
  // The floors are far below real parts: 0.001 itself is accepted.
  CHECK(error_of(std::string(kBase) + kWorkload, {"cost_model.memory_efficiency=0.001"}).empty());
}

TEST_CASE("horizon_s and KV tier bandwidths are bounded so that derived times fit the clock (issue 34)") {
  // horizon_s=1e10 wrapped to -9.2e9 s: 0 requests finished, exit 0.
  for (const char* h : {"1e10", "9.3e9", "1e300"})
    CHECK(contains(error_of(std::string(kBase) + kWorkload, {std::string("horizon_s=") + h}),
                   "horizon_s: must be in (0, 1e+09] s"));
  CHECK(error_of(std::string(kBase) + kWorkload, {"horizon_s=1e9"}).empty());
  // bandwidth 1e-9 was "time went backwards", <= 1e-11 free loads (the float -> int64 cast).
  for (const char* tier : {"host", "ssd"})
    for (const char* bw : {"1e-9", "1e-11"})
      CHECK(contains(error_of(std::string(kBase) + kWorkload,
                              {std::string("kv_cache.") + tier + ".capacity_gb=10",
                               std::string("kv_cache.") + tier + ".bandwidth_gbps=" + bw}),
                     std::string("kv_cache.") + tier + ".bandwidth_gbps: must be at least 0.001"));
}

TEST_CASE("a key with a null value is an error naming it, not its default (issue 34)") {
  const std::string head = "name: t\nmodel: llama-3-8b\nhardware: h100-sxm\ncost_model: {backend: roofline}\n";
  CHECK(contains(error_of(head + "cluster: {workers: ~}\n" + kWorkload), "cluster.workers: is null"));
  CHECK(contains(error_of(head + "cluster:\n  workers:\n" + kWorkload), "cluster.workers: is null"));
  CHECK(contains(error_of(std::string(kBase) + kWorkload + "horizon_s: null\n"), "horizon_s: is null"));
  CHECK(contains(error_of(std::string(kBase) + "workload: {type: synthetic, requests: ~, clients: [{rate: 1}]}\n"),
                 "workload.requests: is null"));
  // A trace window's end_s: null means no end (config.resolved.yaml writes it so).
  const std::string trace = write("t2.csv", "arrival_ns,prompt_tokens,output_tokens\n0,4,4\n");
  CHECK(error_of(std::string(kBase) + "workload: {type: trace, path: " + trace + ", window: {start_s: 0, end_s: ~}}\n")
            .empty());
}

TEST_CASE("a string value that is not valid UTF-8 is an error naming the key, not raw bytes in summary.csv (issue 34)") {
  CHECK(contains(error_of("name: \"bad\xff\"\n" + std::string(kBase).substr(std::string(kBase).find('\n') + 1) + kWorkload),
                 "name: is not valid UTF-8 (byte 4 of the value)"));
  CHECK(contains(error_of("name: \"over\xc0\xaflong\"\n" + std::string(kBase).substr(std::string(kBase).find('\n') + 1) +
                          kWorkload),
                 "is not valid UTF-8 (byte 5"));
  CHECK(error_of("name: \"caf\xc3\xa9 \xf0\x9f\x9a\x80\"\n" + std::string(kBase).substr(std::string(kBase).find('\n') + 1) +
                 kWorkload)
            .empty());
}

TEST_CASE("an unknown report.window key lists all four window keys, the *_s ones too (issue 34)") {
  const std::string e = error_of(std::string(kBase) + kWorkload, {"report.window.warmup=1"});
  for (const char* key : {"warmup_s", "cooldown_s", "warmup_requests", "cooldown_requests"}) CHECK(contains(e, key));
}
