// The scenario config's sections, parsed and written back by the files that
// own them; the rows of scenario_options() (scenario_options.cc) call them, so
// parse_scenario() and ScenarioConfig::resolved() follow that one table. Internal
// to configs/: the public interface is scenario_config.h.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

#include "configs/scenario_config.h"
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
