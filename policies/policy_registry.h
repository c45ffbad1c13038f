// Registries of local and global policies by name. Adding a policy takes its
// own header (class, options struct, option table, parse function), one entry
// in policy_registry.cc, a behaviour test and its docs section
// (docs/architecture.md, "Add a local or global policy").
//
// A policy's YAML is either a bare name (`local: fcfs`) or a map with `name:`
// plus parameters (`local: {name: dlpm, quantum: 2048}`). parse() reads the
// parameters strictly (unknown keys are errors) and returns a factory — each
// worker gets its own instance — plus the resolved parameters for
// config.resolved.yaml. A policy's parameters are one OptionTable
// (sim/core/option_table.h) next to its options struct: parsing, range
// checks, the parameter echo and the docs check all use it.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/option_table.h"
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
  // The same policy with the same parameters: by the resolved YAML (`make` is the
  // factory those determine, not compared).
  bool operator==(const ParsedPolicy& o) const {
    return YAML::Dump(resolved) == YAML::Dump(o.resolved) && oracle == o.oracle && requires_local == o.requires_local;
  }
};

// One parameter of a policy, from its option table (the policy's header or
// .cc): key, default as YAML text, help. docs/policies.md is checked against
// these (configs/option_tables_test.cc).
struct PolicyParam {
  std::string key, default_value, help;
};

template <class S>
std::vector<PolicyParam> policy_params(const OptionTable<S>& table) {
  std::vector<PolicyParam> out;
  for (const OptionField<S>& f : table) out.push_back({f.key, option_default(f), f.help});
  return out;
}

template <class P>
struct PolicyType {
  std::string name;
  std::string help;
  // Reads parameters from `params` (its `name` key is already consumed);
  // must call params.finish().
  std::function<ParsedPolicy<P>(YamlMap& params)> parse;
  // The parameters, from the policy's option table (written back by it in
  // `resolved`). Empty: no parameters.
  std::vector<PolicyParam> params;
};

// Reads a policy's options with its table (unknown keys are errors): every
// policy whose parameters are exactly its table.
template <class S>
S parse_policy_options(YamlMap& params, const OptionTable<S>& table) {
  S o;
  read_options(params, table, o);
  params.finish();
  return o;
}

const std::vector<PolicyType<LocalPolicy>>& local_policy_types();
const std::vector<PolicyType<GlobalPolicy>>& global_policy_types();

// Parses the policy at `key` of `parent` (bare name or map).
ParsedPolicy<LocalPolicy> parse_local_policy(YamlMap& parent, const std::string& key, const std::string& def);
ParsedPolicy<GlobalPolicy> parse_global_policy(YamlMap& parent, const std::string& key, const std::string& def);

}  // namespace servesim
