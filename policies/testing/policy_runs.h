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

namespace servesim::testing {

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

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
