// The policy registries: one line per policy.
#include "policies/policy_registry.h"

#include "policies/fcfs_policy.h"
#include "policies/simple_global_policies.h"

namespace servesim {
namespace {

// A policy without parameters: reject any key besides `name`.
template <class P, class Concrete>
ParsedPolicy<P> no_params(YamlMap& params, const std::string& name) {
  params.finish();
  ParsedPolicy<P> out;
  out.make = [](const PolicyContext&) { return std::make_unique<Concrete>(); };
  out.resolved["name"] = name;
  return out;
}

template <class P>
ParsedPolicy<P> parse_policy(YamlMap& parent, const std::string& key, const std::string& def,
                             const std::vector<PolicyType<P>>& types, const char* kind) {
  std::string name = def;
  YamlMap params(YAML::Node(), parent.file(), parent.key_path(key));
  if (parent.has(key) && parent.node()[key].IsMap()) {
    params = parent.map(key);
    name = params.template require<std::string>("name");
  } else {
    name = parent.get<std::string>(key, def);
  }
  for (const auto& t : types)
    if (t.name == name) return t.parse(params);
  std::string known;
  for (const auto& t : types) known += (known.empty() ? "" : ", ") + t.name;
  parent.fail(key, fmt::format("unknown {} policy '{}'; known: {}", kind, name, known));
}

}  // namespace

const std::vector<PolicyType<LocalPolicy>>& local_policy_types() {
  static const std::vector<PolicyType<LocalPolicy>> types = {
      {"fcfs", "first come, first served (preempted requests return to the front)",
       [](YamlMap& p) { return no_params<LocalPolicy, FcfsPolicy>(p, "fcfs"); }},
  };
  return types;
}

const std::vector<PolicyType<GlobalPolicy>>& global_policy_types() {
  static const std::vector<PolicyType<GlobalPolicy>> types = {
      {"round_robin", "k-th request to worker k mod N",
       [](YamlMap& p) { return no_params<GlobalPolicy, RoundRobinPolicy>(p, "round_robin"); }},
      {"least_outstanding", "fewest waiting + running requests (ties: lowest index)",
       [](YamlMap& p) { return no_params<GlobalPolicy, LeastOutstandingPolicy>(p, "least_outstanding"); }},
      {"random", "uniform random worker (seeded by the scenario seed)",
       [](YamlMap& p) {
         p.finish();
         ParsedPolicy<GlobalPolicy> out;
         out.make = [](const PolicyContext& ctx) { return std::make_unique<RandomPolicy>(ctx.seed); };
         out.resolved["name"] = "random";
         return out;
       }},
  };
  return types;
}

ParsedPolicy<LocalPolicy> parse_local_policy(YamlMap& parent, const std::string& key, const std::string& def) {
  return parse_policy(parent, key, def, local_policy_types(), "local");
}

ParsedPolicy<GlobalPolicy> parse_global_policy(YamlMap& parent, const std::string& key, const std::string& def) {
  return parse_policy(parent, key, def, global_policy_types(), "global");
}

}  // namespace servesim
