// Test helpers for policy tests: run a scenario given as YAML text (plus
// `--set`-style overrides) through the real wiring function into a temporary
// run folder, and read back its summary and clients.csv.
#pragma once
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "configs/run_builder.h"
#include "sim/core/test_util.h"  // slurp

namespace servesim::testing {

// A memory-tight, multi-client, shared-prefix workload (policy_conformance_test,
// decode_lane_test): ~10K tokens of KV per worker, so prompts up to ~6K tokens
// plus outputs force cache eviction and preemptions; three clients, one with
// on/off phases.
inline const char* const kMemoryTightWorkload = R"(name: conformance
seed: 21
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 3}
batching: {memory_utilization: 0.25, max_running: 24, chunk_size: 2048}
policy: {local: fcfs, global: round_robin}
workload:
  type: templates
  requests: 360
  block_size: 16
  pools:
    - {name: docs, count: 6, zipf: 0.8, tokens: {dist: uniform, min: 300, max: 3000}}
  clients:
    - {name: a, rate: 40, pool: docs, prompt: {dist: lognormal, median: 200, sigma: 1.0, max: 3000},
       output: {dist: lognormal, median: 80, sigma: 1.2, max: 1500}}
    - {name: b, rate: 25, pool: docs, template_share: 0.5, on_s: 1, off_s: 2, prompt: {dist: uniform, min: 10, max: 800},
       output: {dist: uniform, min: 1, max: 300}}
    - {name: c, rate: 10, prompt: {dist: uniform, min: 100, max: 2500}, output: {dist: lognormal, median: 40, sigma: 1.0, max: 900}}
report: {requests_csv: true}
)";

struct RunResult {
  RunOutput out;
  std::map<std::string, std::string> summary;
  std::vector<std::map<std::string, std::string>> clients;  // clients.csv rows
  std::string dir;

  double num(const std::string& key) const { return std::stod(summary.at(key)); }
  double client(std::size_t c, const std::string& key) const { return std::stod(clients.at(c).at(key)); }
};

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

inline std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split_csv_line(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

inline RunResult run_yaml(const std::string& yaml, const std::vector<std::string>& sets, const std::string& name) {
  YAML::Node root = YAML::Load(yaml);
  for (const auto& s : sets) apply_override(root, s);
  ScenarioConfig c = parse_scenario(root, "<" + name + ">");
  RunResult r;
  r.dir = (std::filesystem::temp_directory_path() / "servesim_policy_tests" / name).string();
  std::filesystem::remove_all(r.dir);
  r.out = execute_run(c, RunOptions{r.dir, false});
  for (const auto& [k, v] : r.out.summary) r.summary[k] = v;
  r.clients = read_csv(r.dir + "/clients.csv");
  return r;
}

}  // namespace servesim::testing
