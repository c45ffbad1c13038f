// Registries of local and global policies by name. Adding a policy takes one
// file and one line in policy_registry.cc.
//
// A policy's YAML is either a bare name (`local: fcfs`) or a map with `name:`
// plus parameters (`local: {name: dlpm, quantum: 2048}`). parse() reads the
// parameters strictly (unknown keys are errors) and returns a factory — each
// worker gets its own instance — plus the resolved parameters for
// config.resolved.yaml.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_map.h"
#include "policies/global_policy.h"
#include "policies/local_policy.h"

namespace servesim {

struct PolicyContext {
  std::size_t workers = 1;
  std::uint64_t seed = 0;
};

template <class P>
struct ParsedPolicy {
  std::function<std::unique_ptr<P>(const PolicyContext&)> make;
  YAML::Node resolved;  // {name: ..., params...}
  bool oracle = false;  // reads true output lengths (reports label it)
  // A global policy that is only defined together with one local policy
  // (D²LPM's global layer needs local DLPM) names it here; the scenario
  // loader rejects any other local policy. Empty: any.
  std::string requires_local;
};

template <class P>
struct PolicyType {
  std::string name;
  std::string help;
  // Reads parameters from `params` (its `name` key is already consumed);
  // must call params.finish().
  std::function<ParsedPolicy<P>(YamlMap& params)> parse;
};

const std::vector<PolicyType<LocalPolicy>>& local_policy_types();
const std::vector<PolicyType<GlobalPolicy>>& global_policy_types();

// Parses the policy at `key` of `parent` (bare name or map).
ParsedPolicy<LocalPolicy> parse_local_policy(YamlMap& parent, const std::string& key, const std::string& def);
ParsedPolicy<GlobalPolicy> parse_global_policy(YamlMap& parent, const std::string& key, const std::string& def);

}  // namespace servesim
