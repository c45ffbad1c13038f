// cluster: the workers (cluster.workers/tp/overrides, or cluster.pools), cluster.pd,
// cluster.kv_store, and the pools' policies (docs/configuration.md, "Pools and PD
// disaggregation"). See PoolConfig and PdConfig in scenario_config.h.
#include <algorithm>
#include <set>

#include <fmt/ranges.h>

#include "configs/kv_store_config.h"
#include "configs/kv_tiers_config.h"
#include "configs/option_tables.h"
#include "configs/scenario_sections.h"

namespace servesim {

// One item of cluster.pools: name, pool_options() (role, workers, tp), then the keys
// whose default is the scenario's (the caller sets them before reading).
const OptionTable<PoolConfig>& pool_item_options() {
  using P = PoolConfig;
  using R = OptionRange;
  static const OptionTable<P> t = [] {
    OptionTable<P> rows = {
        {"name", custom<P>([](YamlMap& pm, const char* key, P& p) { p.name = pm.require<std::string>(key); },
                           [](const P& p) { return YAML::Node(p.name); }),
         R::kAny, "required; unique; workers.csv's pool column"},
    };
    rows.insert(rows.end(), pool_options().begin(), pool_options().end());
    OptionCustom<P> policy = section<P>(
        [](YamlMap& pol, P& p) {
          if (pol.has("local")) p.local_policy = parse_local_policy(pol, "local", "fcfs");
        },
        [](const P& p) {
          YAML::Node n(YAML::NodeType::Map);
          n["local"] = p.local_policy->resolved;
          return n;
        });
    policy.written = [](const P& p) { return p.local_policy.has_value(); };
    std::vector<OptionField<P>> inherited = {
        {"hardware", hardware_override_row<P>(), R::kAny, "as the top-level key (name, path or inline map)"},
        {"attention", attention_row<P>(), R::kAny, "as the top-level map; keys not set keep the scenario's"},
        {"batching", section<P>(
                         [](YamlMap& b, P& p) {
                           read_options(b, batching_options(), p.batching);
                           read_options(b, batching_mode_options(), p.batching);
                         },
                         [](const P& p) {
                           YAML::Node b(YAML::NodeType::Map);
                           write_options(b, batching_options(), p.batching);
                           write_options(b, batching_mode_options(), p.batching);
                           return b;
                         }),
         R::kAny, "the batch budgets and mode; memory keys stay scenario-wide"},
        {"policy", std::move(policy), R::kAny, "{local: ...}: this pool's local policy"},
        {"kv_cache", kv_cache_row<P>(), R::kAny, "as the top-level map; keys not set keep the scenario's"},
    };
    rows.insert(rows.end(), inherited.begin(), inherited.end());
    return rows;
  }();
  return t;
}

// One item of cluster.overrides after its `worker` (the index, required: it selects the
// worker the other keys change): hardware, attention, kv_cache over that worker's.
const OptionTable<WorkerConfig>& override_options() {
  using W = WorkerConfig;
  using R = OptionRange;
  static const OptionTable<W> t = {
      {"hardware", hardware_override_row<W>(), R::kAny, "as the top-level key (name, path or inline map)"},
      {"attention", attention_row<W>(), R::kAny, "as the top-level map; keys not set keep the scenario's"},
      {"kv_cache", kv_cache_row<W>(), R::kAny, "as the top-level map; keys not set keep the scenario's"},
  };
  return t;
}

namespace {

// cluster.pools: a list of pool_item_options() maps; every key but name defaults to the
// scenario's (role: mixed, workers: 1). Workers are numbered pool by pool, in list order.
void parse_pools(YamlMap& cl, ScenarioConfig& c) {
  YAML::Node list = cl.raw("pools");
  if (!list.IsSequence() || list.size() == 0)
    cl.fail("pools", "expected a non-empty list of {name, role, workers, tp, hardware, attention, batching, policy}");
  std::set<std::string> names;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    YamlMap pm(list[i], c.file, cl.key_path(fmt::format("pools[{}]", i)));
    PoolConfig p;
    p.hardware = c.hardware;
    p.attention = c.attention;
    p.batching = c.batching;
    p.kv_tiers = c.kv_tiers;
    read_options(pm, pool_item_options(), p);
    if (p.name.empty() || !names.insert(p.name).second)
      pm.fail("name", fmt::format("pool name '{}' is empty or used twice", p.name));
    total += p.workers;
    if (total > 100000) pm.fail("workers", "at most 100000 workers in all pools");
    if (c.model.heads % p.tp != 0)
      pm.fail("tp", fmt::format("tp={} must divide the model's {} attention heads", p.tp, c.model.heads));
    KvCapacity kv;
    try {
      const MemoryOptions& mem = c.memory;
      kv = compute_kv_capacity(c.model, p.hardware, p.tp, mem.memory_utilization, mem.activation_reserve_gb,
                               mem.page_size, kv_metadata_share(c.model, p.attention, mem.page_size));
    } catch (const InputError& e) {
      pm.fail(pm.has("hardware") ? "hardware" : "name", e.what());
    }
    pm.finish();
    for (std::int64_t k = 0; k < p.workers; ++k) c.workers.push_back(WorkerConfig{p.hardware, p.attention, kv, "", p.kv_tiers, p.tp, i});
    c.pools.push_back(std::move(p));
  }
  c.tp = c.pools.front().tp;  // summary.csv's tp column: the first pool's
  bool prefill = false, decode = false;
  for (const PoolConfig& p : c.pools) {
    prefill = prefill || p.role != PoolRole::kDecode;
    decode = decode || p.role != PoolRole::kPrefill;
  }
  if (!prefill || !decode)
    cl.fail("pools", "a cluster needs a pool that can prefill (role prefill or mixed) and one that can decode "
                     "(role decode or mixed)");
}

// cluster.pd: {link, decider, threshold_tokens, streaming}; only with a prefill or decode pool.
void parse_pd(YamlMap& cl, const char* key, ScenarioConfig& c) {
  if (!cl.has(key)) return;
  if (!c.disaggregated())
    cl.fail(key, "cluster.pd needs cluster.pools with a pool of role prefill or decode");
  YamlMap pd = cl.map(key);
  read_options(pd, pd_options(), c.pd);
  if (pd.has("threshold_tokens") && c.pd.decider != PdDecider::kPrefixAware)
    pd.fail("threshold_tokens", "only the prefix_aware decider reads threshold_tokens");
  pd.finish();
}

// The KV capacity of a worker of `hw` and `att` at the scenario's tp and memory keys;
// an impossible one (the model does not fit) is an error at `where`'s `key`.
KvCapacity worker_capacity(const ScenarioConfig& c, const HardwareSpec& hw, const AttentionConfig& att,
                           YamlMap& where, const std::string& key) {
  try {
    const MemoryOptions& mem = c.memory;
    return compute_kv_capacity(c.model, hw, c.tp, mem.memory_utilization, mem.activation_reserve_gb, mem.page_size,
                               kv_metadata_share(c.model, att, mem.page_size));
  } catch (const InputError& e) {
    where.fail(key, e.what());
  }
}

// workers, tp and overrides describe the cluster only without pools.
bool without_pools(YamlMap& cl, const char* key) {
  if (!cl.has("pools")) return true;
  if (cl.has(key))
    cl.fail(key, fmt::format("cluster.{} cannot be set together with cluster.pools (each pool sets its own "
                             "workers, tp and hardware)", key));
  return false;
}

// cluster.overrides: [{worker, hardware, attention, kv_cache}]: every worker has the
// scenario's hardware, attention and kv_cache but where overridden. A changed worker's
// capacity is sized here (errors name the override's key); the others' in
// finish_workers.
void parse_overrides(YamlMap& cl, const char* key, ScenarioConfig& c) {
  if (!without_pools(cl, key)) return;
  YAML::Node overrides = cl.raw(key);
  if (overrides.IsDefined() && !overrides.IsNull() && !overrides.IsSequence())
    cl.fail(key, "expected a list of {worker: N, hardware: ..., attention: ...}");
  const auto n_workers = static_cast<std::int64_t>(c.workers.size());
  for (std::size_t i = 0; overrides.IsSequence() && i < overrides.size(); ++i) {
    YamlMap o(overrides[i], c.file, cl.key_path(fmt::format("{}[{}]", key, i)));
    std::int64_t w = o.require<std::int64_t>("worker");
    if (w < 0 || w >= n_workers) o.fail("worker", fmt::format("worker index {} outside 0..{}", w, n_workers - 1));
    WorkerConfig& wc = c.workers[static_cast<std::size_t>(w)];
    read_options(o, override_options(), wc);
    if (o.has("hardware") || o.has("attention"))  // Quest's metadata changes capacity too
      wc.kv = worker_capacity(c, wc.hardware, wc.attention, o, o.has("hardware") ? "hardware" : "attention");
    o.finish();
  }
}

// A worker that differs from the scenario's hardware, attention or kv_cache (an override).
bool overridden(const ScenarioConfig& c, const WorkerConfig& w) {
  return w.hardware != c.hardware || w.attention != c.attention || w.kv_tiers != c.kv_tiers;
}

YAML::Node overrides_node(const ScenarioConfig& c) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (std::size_t i = 0; i < c.workers.size(); ++i) {
    const WorkerConfig& w = c.workers[i];
    if (!overridden(c, w)) continue;
    YAML::Node o;
    o["worker"] = i;
    write_options(o, override_options(), w);
    if (w.kv_tiers == c.kv_tiers) o.remove("kv_cache");  // the scenario's: not repeated
    n.push_back(o);
  }
  return n;
}

YAML::Node pools_node(const ScenarioConfig& c) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (const PoolConfig& p : c.pools) {
    YAML::Node x;
    write_options(x, pool_item_options(), p);
    if (p.kv_tiers == c.kv_tiers) x.remove("kv_cache");  // the scenario's: not repeated
    n.push_back(x);
  }
  return n;
}

// Without pools: the workers not overridden get the scenario's capacity (an
// impossible one is an error at the top level's `model`), every worker the tp.
void finish_workers(YamlMap& root, ScenarioConfig& c) {
  if (!c.pools.empty()) return;
  const KvCapacity base = worker_capacity(c, c.hardware, c.attention, root, "model");
  for (WorkerConfig& w : c.workers) {
    if (w.hardware == c.hardware && w.attention == c.attention) w.kv = base;
    w.tp = c.tp;
  }
}

}  // namespace

// cluster: workers (with tp and overrides) or pools, pd, kv_store; in the order of the
// file. Needs the model, hardware, attention, memory keys and kv_cache of the scenario.
const OptionTable<ScenarioConfig>& cluster_options() {
  using C = ScenarioConfig;
  using R = OptionRange;
  static const OptionTable<C> t = [] {
    OptionCustom<C> workers = custom<C>(
        [](YamlMap& cl, const char* key, C& c) {
          if (!without_pools(cl, key)) return;
          const std::int64_t n = cl.positive_int(key, 1);
          if (n > 100000) cl.fail(key, "at most 100000 workers");
          c.workers.assign(static_cast<std::size_t>(n), WorkerConfig{c.hardware, c.attention, {}, "", c.kv_tiers});
        },
        [](const C& c) { return YAML::Node(c.workers.size()); });
    workers.written = [](const C& c) { return c.pools.empty(); };
    OptionCustom<C> tp = custom<C>(
        [](YamlMap& cl, const char* key, C& c) {
          if (!without_pools(cl, key)) return;
          c.tp = static_cast<int>(cl.positive_int(key, 1));
          if (c.model.heads % c.tp != 0)
            cl.fail(key, fmt::format("tp={} must divide the model's {} attention heads", c.tp, c.model.heads));
        },
        [](const C& c) { return YAML::Node(c.tp); });
    tp.written = workers.written;
    OptionCustom<C> overrides = custom<C>(parse_overrides, overrides_node);
    overrides.written = [](const C& c) {
      return c.pools.empty() &&
             std::any_of(c.workers.begin(), c.workers.end(), [&c](const WorkerConfig& w) { return overridden(c, w); });
    };
    OptionCustom<C> pools = custom<C>(
        [](YamlMap& cl, const char* key, C& c) {
          if (cl.has(key)) parse_pools(cl, c);
        },
        pools_node);
    pools.written = [](const C& c) { return !c.pools.empty(); };
    OptionCustom<C> pd = custom<C>(parse_pd, [](const C& c) {
      YAML::Node n;
      write_options(n, pd_options(), c.pd);
      return n;
    });
    pd.written = [](const C& c) { return c.disaggregated(); };
    OptionCustom<C> kv_store = custom<C>([](YamlMap& cl, const char*, C& c) { c.kv_store = parse_kv_store(cl); },
                                         [](const C& c) { return kv_store_node(c.kv_store); });
    kv_store.written = [](const C& c) { return c.kv_store.enabled(); };  // only when set: resolves as before
    return OptionTable<C>{
        {"workers", workers, R::kAny, "model replicas (at most 100000)"},
        {"tp", tp, R::kAny, "tensor-parallel GPUs per worker (must divide the head count)"},
        {"overrides", overrides, R::kAny, "per-worker hardware, attention and kv_cache: [{worker: N, ...}]"},
        {"pools", pools, R::kAny, "named groups of workers with a role, instead of workers/tp/overrides"},
        {"pd", pd, R::kAny, "prefill/decode disaggregation: link, decider, threshold_tokens, streaming"},
        {"kv_store", kv_store, R::kAny, "a cluster-wide KV store (docs/kv.md)"},
    };
  }();
  return t;
}

void parse_cluster(YamlMap& m, ScenarioConfig& c) {
  YamlMap cl = m.map("cluster");
  read_options(cl, cluster_options(), c);
  finish_workers(m, c);
  cl.finish();
}

// policy.decode_global (PD only) and the pools' local policies against the
// global policy's required local policy.
void check_pool_policies(YamlMap& pm, const ScenarioConfig& c) {
  const std::string& need = c.global_policy.requires_local;
  if (need.empty()) return;
  for (const PoolConfig& p : c.pools)
    if (p.local_policy && (*p.local_policy).resolved["name"].as<std::string>() != need)
      pm.fail("global", fmt::format("global policy '{}' runs with local policy '{}' on every worker; pool '{}' sets "
                                    "another", c.global_policy.resolved["name"].as<std::string>(), need, p.name));
}

YAML::Node cluster_node(const ScenarioConfig& c) {
  YAML::Node n(YAML::NodeType::Map);
  write_options(n, cluster_options(), c);
  return n;
}

std::string pool_role_name(PoolRole r) {
  PoolConfig p;
  p.role = r;
  return option_value(pool_options().front(), p).as<std::string>();  // the role's name in its table
}

bool ScenarioConfig::disaggregated() const {
  return std::any_of(pools.begin(), pools.end(), [](const PoolConfig& p) { return p.role != PoolRole::kMixed; });
}

std::vector<std::size_t> first_equal_worker(const std::vector<WorkerConfig>& workers) {
  std::vector<std::size_t> first(workers.size());
  std::map<std::string, std::vector<std::size_t>> by_name;  // hardware name → distinct workers seen
  for (std::size_t i = 0; i < workers.size(); ++i) {
    std::vector<std::size_t>& seen = by_name[workers[i].hardware.name];
    auto it = std::find_if(seen.begin(), seen.end(), [&](std::size_t j) { return workers[j] == workers[i]; });
    if (it == seen.end()) it = seen.insert(seen.end(), i);
    first[i] = *it;
  }
  return first;
}

}  // namespace servesim
