// Scenario parsing and config.resolved.yaml through scenario_options() (the top
// level, configs/scenario_options.cc); model and hardware files by name, path or
// inline map; attention read and written for the scenario, pools and overrides.
// See scenario_config.h and docs/configuration.md.
#include "configs/scenario_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/ranges.h>

#include "configs/option_tables.h"
#include "configs/scenario_sections.h"
#include "sim/core/number_format.h"
#include "sim/core/text_split.h"

namespace servesim {
namespace fs = std::filesystem;

std::string config_dir() {
  if (const char* d = std::getenv("SERVESIM_CONFIG_DIR"); d && *d) return d;
  return SERVESIM_CONFIGS_DIR;  // compiled in: <source>/configs
}

std::string profile_dir() {
  if (const char* d = std::getenv("SERVESIM_PROFILE_DIR"); d && *d) return d;
  return (fs::path(SERVESIM_CONFIGS_DIR).parent_path() / "costmodel" / "profiles").string();
}

namespace {

std::vector<std::string> known_names(const std::string& sub) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(config_dir()) / sub, ec))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A named file (`llama-3-8b` → <config_dir>/models/llama-3-8b.yaml), a path
// ending in .yaml (relative to the scenario file), or an inline map.
// Returns the map to parse and the file it lives in.
std::pair<YamlMap, std::string> resolve_named(YamlMap& parent, const std::string& key, const std::string& sub,
                                              const std::string& def) {
  if (parent.has(key) && parent.node()[key].IsMap()) return {parent.map(key), ""};
  std::string name = parent.get<std::string>(key, def);
  fs::path p;
  if (name.size() > 5 && name.ends_with(".yaml")) {
    p = fs::path(name);
    if (p.is_relative()) p = fs::path(parent.file()).parent_path() / p;
  } else {
    p = fs::path(config_dir()) / sub / (ascii_lower(name) + ".yaml");
  }
  std::error_code ec;  // e.g. a name longer than the file system allows: not found, not a throw
  if (!fs::is_regular_file(p, ec)) {
    parent.fail(key, fmt::format("{}; no file {}",
                                 unknown_name_message(sub == "models" ? "model" : "hardware", name, known_names(sub)),
                                 p.string()));
  }
  return {YamlMap(load_yaml_file(p.string()), p.string()), name};
}

ModelSpec parse_model(YamlMap& m, const std::string& fallback_name) {
  ModelSpec s;
  s.name = m.get<std::string>("name", fallback_name.empty() ? "custom" : fallback_name);
  read_options(m, model_options(), s);
  if (s.heads % s.kv_heads != 0)
    m.fail("kv_heads", fmt::format("heads ({}) must be a multiple of kv_heads ({})", s.heads, s.kv_heads));
  m.finish();
  return s;
}

HardwareSpec parse_hardware(YamlMap& m, const std::string& fallback_name) {
  HardwareSpec h;
  h.name = m.get<std::string>("name", fallback_name.empty() ? "custom" : fallback_name);
  if (m.has("interconnect_gbps") || m.null_value("interconnect_gbps"))
    m.fail("interconnect_gbps", "renamed to tp_allreduce_gbps (the TP all-reduce bandwidth, GB/s; the KV transfer "
                                "links are in the interconnect: map)");
  read_options(m, hardware_options(), h);
  m.get<std::string>("source", "");  // provenance note (datasheet), informational
  m.finish();
  return h;
}

}  // namespace

ModelSpec load_model(YamlMap& parent, const std::string& key, const std::string& def) {
  auto [m, name] = resolve_named(parent, key, "models", def);
  return parse_model(m, name);
}

YAML::Node model_node(const ModelSpec& s) {
  YAML::Node x;
  x["name"] = s.name;
  write_options(x, model_options(), s);
  return x;
}

HardwareSpec load_hardware(YamlMap& parent, const std::string& key, const std::string& def) {
  auto [m, name] = resolve_named(parent, key, "hardware", def);
  return parse_hardware(m, name);
}

YAML::Node hardware_node(const HardwareSpec& h) {
  YAML::Node x;
  x["name"] = h.name;
  write_options(x, hardware_options(), h);  // its interconnect: map last
  return x;
}

AttentionConfig parse_attention(YamlMap& parent, const AttentionConfig& def) {
  AttentionConfig a = def;
  YamlMap m = parent.map("attention");
  read_options(m, attention_options(), a);
  m.finish();
  return a;
}

YAML::Node attention_node(const AttentionConfig& a) {
  YAML::Node n;
  write_options(n, attention_options(), a);
  return n;
}

HardwareSpec load_hardware_named(const std::string& name_or_path) {
  YAML::Node n;
  n["hardware"] = name_or_path;
  YamlMap m(n, "(command line)");
  return load_hardware(m, "hardware", "");
}

ScenarioConfig parse_scenario(const YAML::Node& root, const std::string& file) {
  ScenarioConfig c;
  c.file = file;
  YamlMap m(root, file);
  read_options(m, scenario_options(), c);
  m.finish();
  return c;
}

ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& set_overrides) {
  YAML::Node root = load_yaml_file(path);
  for (const auto& s : set_overrides) apply_override(root, s);
  return parse_scenario(root, path);
}

namespace {

// yaml-cpp writes a double with 17 significant digits (0.9 -> 0.90000000000000002): exact,
// but it reads like a rounding error. A scalar of 16 or more significant digits that is
// a number is rewritten with the shortest digits that read back as the same double (fmt's
// "{}"), so config.resolved.yaml says 0.9. Nothing else changes (names, short numbers).
void shorten_doubles(YAML::Node n) {
  if (n.IsMap()) {
    for (auto kv : n) shorten_doubles(kv.second);
    return;
  }
  if (n.IsSequence()) {
    for (auto x : n) shorten_doubles(x);
    return;
  }
  if (!n.IsScalar()) return;
  const std::string s = n.Scalar();
  const auto mantissa_end = s.find_first_of("eE");
  const auto digits = std::count_if(s.begin(), mantissa_end == std::string::npos ? s.end() : s.begin() + mantissa_end,
                                    [](char ch) { return ch >= '0' && ch <= '9'; });
  if (digits < 16) return;
  if (const auto t = shortest_double_text(s); t && t->size() < s.size()) n = *t;
}

}  // namespace

YAML::Node ScenarioConfig::resolved() const {
  YAML::Node n;
  write_options(n, scenario_options(), *this);
  // A deep copy first: n shares nodes with members (the policies' resolved options).
  YAML::Node out = YAML::Clone(n);
  shorten_doubles(out);
  return out;
}

}  // namespace servesim
