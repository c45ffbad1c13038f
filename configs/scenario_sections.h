// The scenario config's sections, parsed and written back by the files that
// own them; the rows of scenario_options() (scenario_options.cc) call them, so
// parse_scenario() and ScenarioConfig::resolved() follow that one table. Internal
// to configs/: the public interface is scenario_config.h.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

#include "configs/kv_tiers_config.h"
#include "configs/scenario_config.h"
#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"

namespace servesim {

// scenario_config.cc
// parent's `key`: a model name (configs/models/<name>.yaml), a path or an inline map.
ModelSpec load_model(YamlMap& parent, const std::string& key, const std::string& def);
YAML::Node model_node(const ModelSpec& s);
// parent's `key`: a hardware name (configs/hardware/<name>.yaml), a path or an inline map.
HardwareSpec load_hardware(YamlMap& parent, const std::string& key, const std::string& def);
YAML::Node hardware_node(const HardwareSpec& h);
// parent's `attention` map over `def`.
AttentionConfig parse_attention(YamlMap& parent, const AttentionConfig& def);
YAML::Node attention_node(const AttentionConfig& a);

// Rows of the keys a pool and an override share with the scenario, over any struct S
// with members hardware, attention and kv_tiers (ScenarioConfig, PoolConfig,
// WorkerConfig): each reads over s's current value, which the caller sets to the
// scenario's first.
// hardware: a name, path or inline map; absent keeps s's.
template <class S>
OptionCustom<S> hardware_override_row() {
  return custom<S>(
      [](YamlMap& m, const char* key, S& s) {
        if (m.has(key)) s.hardware = load_hardware(m, key, "");
      },
      [](const S& s) { return hardware_node(s.hardware); });
}
// attention: keys not set keep s's.
template <class S>
OptionCustom<S> attention_row() {
  return custom<S>([](YamlMap& m, const char*, S& s) { s.attention = parse_attention(m, s.attention); },
                   [](const S& s) { return attention_node(s.attention); });
}
// kv_cache: keys not set keep s's.
template <class S>
OptionCustom<S> kv_cache_row() {
  return custom<S>([](YamlMap& m, const char*, S& s) { s.kv_tiers = parse_kv_tiers(m, s.kv_tiers); },
                   [](const S& s) { return kv_tiers_node(s.kv_tiers); });
}

// cluster_config.cc
// cluster: workers (with overrides) or pools, pd, kv_store. Needs the model,
// hardware, attention, memory keys and kv_cache of `c` already parsed.
void parse_cluster(YamlMap& root, ScenarioConfig& c);
// The pools' local policies against policy.global's required local policy (after policy_options()).
void check_pool_policies(YamlMap& policy, const ScenarioConfig& c);
YAML::Node cluster_node(const ScenarioConfig& c);

// cost_model_config.cc
// cost_model: needs c.workers.
void parse_cost_model(YamlMap& root, ScenarioConfig& c);
YAML::Node cost_model_node(const ScenarioConfig& c);

}  // namespace servesim
