// A run's helper threads (RunOptions::background: requests read ahead,
// traces/read_ahead_source.h; reported requests' rows and latency samples,
// reports/ordered_handoff.h) are a speed path only: every output file is
// byte-identical with them on and off, and a bad trace row fails the run with
// the same error either way. The runs here are longer than the helpers'
// start thresholds (1,024 requests), so the threads do start.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "configs/config_test_util.h"
#include "configs/run_builder.h"
#include "policies/testing/policy_runs.h"
#include "sim/core/error.h"

using namespace servesim;
using namespace servesim::testing;

namespace {

FolderFiles run_files(const ScenarioConfig& c, bool background, const std::string& name) {
  const std::filesystem::path dir = temp_dir() / "background" / (name + (background ? "_on" : "_off"));
  std::filesystem::remove_all(dir);
  RunOptions o{dir.string(), false};
  o.background = background;
  execute_run(c, o);
  return folder_files(dir);
}

void check_same_outputs(const ScenarioConfig& c, const std::string& name) {
  check_same_files(run_files(c, true, name), run_files(c, false, name));
}

// A native trace of `rows` requests; clients "t<k>" appear one after another
// (a new name every 400 rows, so names arrive while the reader runs ahead);
// row `bad` (1-based data row; 0: none) has a malformed prompt.
std::string write_trace(const std::string& file, int rows, int bad = 0) {
  const std::filesystem::path p = temp_dir() / file;
  std::ofstream out(p);
  out << "id,client,arrival_ns,prompt_tokens,output_tokens\n";
  for (int i = 0; i < rows; ++i)
    out << i << ",t" << i / 400 << ',' << static_cast<std::int64_t>(i) * 20'000'000 << ','
        << (i + 1 == bad ? std::string("12x") : std::to_string(50 + (i * 37) % 900)) << ',' << 1 + (i * 13) % 200
        << '\n';
  return p.string();
}

ScenarioConfig trace_scenario(const std::string& path, const std::vector<std::string>& sets) {
  YAML::Node root = YAML::Load(kMemoryTightWorkload);
  root["workload"] = YAML::Load("{type: trace, format: native}");
  root["workload"]["path"] = path;
  for (const auto& s : sets) apply_override(root, s);
  return parse_scenario(root, "<trace>");
}

}  // namespace

TEST_CASE("every output file is the same with the run's helper threads on and off") {
  {  // templates with prefix caching, SLOs, a measurement window, timeline and per-client service
    YAML::Node root = YAML::Load(kMemoryTightWorkload);
    for (const char* s : {"workload.requests=3000", "slo={ttft_s: 2, e2e_s: 60, clients: {b: {ttft_s: 30}}}",
                          "report.window={warmup_s: 5, cooldown_requests: 200}", "report.timeline_interval_s=2"})
      apply_override(root, s);
    check_same_outputs(parse_scenario(root, "<templates>"), "templates");
  }
  {  // a trace whose client names arrive as it is read, cut by a horizon (unfinished and not-arrived requests)
    const std::string path = write_trace("names.csv", 4000);
    check_same_outputs(trace_scenario(path, {}), "trace");
    check_same_outputs(trace_scenario(path, {"horizon_s=50"}), "trace_horizon");
  }
}

TEST_CASE("a bad trace row past the read-ahead start fails the run with the same error, helpers on or off") {
  const std::string path = write_trace("bad.csv", 4000, 3000);
  const ScenarioConfig c = trace_scenario(path, {});
  std::string errors[2];
  for (const bool background : {true, false}) {
    const std::filesystem::path dir = temp_dir() / "background" / (background ? "bad_on" : "bad_off");
    std::filesystem::remove_all(dir);
    RunOptions o{dir.string(), false};
    o.background = background;
    try {
      execute_run(c, o);
    } catch (const InputError& e) {
      errors[background] = e.what();
    }
    CHECK(!std::filesystem::exists(dir / "DONE"));
    CHECK(!std::filesystem::exists(dir / "requests.csv"));  // no partial output presented as complete
  }
  CHECK(errors[0].find("bad.csv:3001") != std::string::npos);  // line 3001: the header is line 1
  CHECK(errors[0].find("prompt_tokens") != std::string::npos);
  CHECK(errors[1] == errors[0]);
}
