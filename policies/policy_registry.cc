// The policy registries: one line per policy.
#include "policies/policy_registry.h"

#include "policies/cache_aware_policy.h"
#include "policies/d2lpm_policy.h"
#include "policies/dfs_weight_policy.h"
#include "policies/dlpm_policy.h"
#include "policies/kv_aware_policy.h"
#include "policies/fcfs_policy.h"
#include "policies/least_load_policy.h"
#include "policies/lpm_policy.h"
#include "policies/ltr_policy.h"
#include "policies/preble_e2_policy.h"
#include "policies/preble_local_policy.h"
#include "policies/simple_global_policies.h"
#include "policies/sjf_policy.h"
#include "policies/vtc_policy.h"

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

// A policy with options `o` (already read), which `table` states back; `make`
// builds one instance from them.
template <class P, class Options, class Make>
ParsedPolicy<P> with_options(const Options& o, const std::string& name, const OptionTable<Options>& table, Make make) {
  ParsedPolicy<P> out;
  out.make = [o, make](const PolicyContext& ctx) -> std::unique_ptr<P> { return make(o, ctx); };
  out.resolved["name"] = name;
  write_options(out.resolved, table, o);
  return out;
}

// A policy whose parameters are exactly its option table.
template <class P, class Options, class Make>
ParsedPolicy<P> with_params(YamlMap& params, const std::string& name, const OptionTable<Options>& table, Make make) {
  return with_options<P>(parse_policy_options(params, table), name, table, make);
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
  std::vector<std::string> known;
  for (const auto& t : types) known.push_back(t.name);
  parent.fail(key, unknown_name_message(fmt::format("{} policy", kind), name, known));
}

}  // namespace

const std::vector<PolicyType<LocalPolicy>>& local_policy_types() {
  static const std::vector<PolicyType<LocalPolicy>> types = {
      {"fcfs", "first come, first served (preempted requests return to the front)",
       [](YamlMap& p) { return no_params<LocalPolicy, FcfsPolicy>(p, "fcfs"); }, {}},
      {"sjf", "shortest true output first (oracle); srtf: shortest remaining with preemption",
       [](YamlMap& p) {
         auto out = with_params<LocalPolicy>(p, "sjf", sjf_option_table(),
                                             [](const SjfOptions& o, const PolicyContext&) { return std::make_unique<SjfPolicy>(o); });
         out.oracle = true;
         return out;
       },
       policy_params(sjf_option_table())},
      {"lpm", "longest cached prefix first (SGLang); preset ideal (paper) or sglang (FCFS above 128, in-batch check)",
       [](YamlMap& p) {
         return with_options<LocalPolicy>(parse_lpm_options(p), "lpm", lpm_option_table(),
                                         [](const LpmOptions& o, const PolicyContext&) { return std::make_unique<LpmPolicy>(o); });
       },
       policy_params(lpm_option_table())},
      {"dfs_weight", "SGLang's dfs-weight: depth-first over cached prefixes, heaviest subtree (most waiting requests) first",
       [](YamlMap& p) { return no_params<LocalPolicy, DfsWeightPolicy>(p, "dfs_weight"); }, {}},
      {"vtc", "virtual token counter fairness (OSDI'24): least-served client first, counter lift",
       [](YamlMap& p) {
         return with_params<LocalPolicy>(p, "vtc", vtc_option_table(),
                                         [](const VtcOptions& o, const PolicyContext&) { return std::make_unique<VtcPolicy>(o); });
       },
       policy_params(vtc_option_table())},
      {"dlpm", "deficit longest prefix match: LPM order with per-client deficits (quantum Q^u)",
       [](YamlMap& p) {
         return with_params<LocalPolicy>(p, "dlpm", dlpm_option_table(),
                                         [](const DlpmOptions& o, const PolicyContext&) { return std::make_unique<DlpmPolicy>(o); });
       },
       policy_params(dlpm_option_table())},
      {"preble_local", "Preble's local scheduler: hit-ratio priority groups with (g+1)·k quotas",
       [](YamlMap& p) {
         return with_params<LocalPolicy>(p, "preble_local", preble_local_option_table(),
                                         [](const PrebleLocalOptions& o, const PolicyContext&) {
                                           return std::make_unique<PrebleLocalPolicy>(o);
                                         });
       },
       policy_params(preble_local_option_table())},
      {"ltr", "predicted output-length rank (vLLM-LTR): ranker learned (model/warmup) or noisy_oracle (tau; oracle)",
       [](YamlMap& p) {
         const LtrOptions o = parse_ltr_options(p);
         ParsedPolicy<LocalPolicy> out;
         out.make = [o](const PolicyContext& ctx) { return std::make_unique<LtrPolicy>(o, ctx.seed); };
         out.resolved = ltr_options_yaml(o);
         out.oracle = o.ranker == LtrOptions::Ranker::kNoisyOracle;
         return out;
       },
       policy_params(ltr_option_table())},
  };
  return types;
}

const std::vector<PolicyType<GlobalPolicy>>& global_policy_types() {
  static const std::vector<PolicyType<GlobalPolicy>> types = {
      {"round_robin", "k-th request to worker k mod N",
       [](YamlMap& p) { return no_params<GlobalPolicy, RoundRobinPolicy>(p, "round_robin"); }, {}},
      {"least_outstanding", "fewest waiting + running requests (ties: lowest index)",
       [](YamlMap& p) { return no_params<GlobalPolicy, LeastOutstandingPolicy>(p, "least_outstanding"); }, {}},
      {"random", "uniform random worker (seeded by the scenario seed)",
       [](YamlMap& p) {
         p.finish();
         ParsedPolicy<GlobalPolicy> out;
         out.make = [](const PolicyContext& ctx) { return std::make_unique<RandomPolicy>(ctx.seed); };
         out.resolved["name"] = "random";
         return out;
       }, {}},
      {"least_load", "least estimated remaining work (seconds, from each worker's cost model)",
       [](YamlMap& p) {
         p.finish();
         ParsedPolicy<GlobalPolicy> out;
         out.make = [](const PolicyContext&) { return std::make_unique<LeastLoadPolicy>(); };
         out.resolved["name"] = "least_load";
         return out;
       }, {}},
      {"cache_aware", "SGLang router: longest approximate prefix match unless load is imbalanced",
       [](YamlMap& p) {
         return with_params<GlobalPolicy>(p, "cache_aware", cache_aware_option_table(),
                                          [](const CacheAwareOptions& o, const PolicyContext& ctx) {
                                            return std::make_unique<CacheAwarePolicy>(o, ctx.workers);
                                          });
       },
       policy_params(cache_aware_option_table())},
      {"d2lpm", "distributed DLPM: locality first, per-(client, worker) deficits over a prefix view (needs local dlpm)",
       [](YamlMap& p) {
         auto out = with_params<GlobalPolicy>(p, "d2lpm", d2lpm_option_table(),
                                              [](const D2lpmOptions& o, const PolicyContext& ctx) {
                                                return std::make_unique<D2lpmPolicy>(o, ctx.workers);
                                              });
         out.requires_local = "dlpm";
         return out;
       },
       policy_params(d2lpm_option_table())},
      {"preble_e2", "Preble E2: exploit cached prefixes or explore by min L+M+P (with rebalancing, replication)",
       [](YamlMap& p) {
         return with_params<GlobalPolicy>(p, "preble_e2", preble_e2_option_table(),
                                          [](const PrebleE2Options& o, const PolicyContext& ctx) {
                                            return std::make_unique<PrebleE2Policy>(o, ctx.workers);
                                          });
       },
       policy_params(preble_e2_option_table())},
      {"kv_aware", "KV-aware (llm-d / Dynamo style): least queue + uncached prefill + KV load time, every tier seen",
       [](YamlMap& p) {
         return with_params<GlobalPolicy>(p, "kv_aware", kv_aware_option_table(),
                                          [](const KvAwareOptions& o, const PolicyContext&) {
                                            return std::make_unique<KvAwarePolicy>(o);
                                          });
       },
       policy_params(kv_aware_option_table())},
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
