// Scenario parsing; see scenario_config.h and docs/configuration.md.
#include "configs/scenario_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <tuple>

#include <fmt/ranges.h>

#include "configs/kv_store_config.h"
#include "configs/kv_tiers_config.h"
#include "configs/cost_noise.h"
#include "configs/option_tables.h"
#include "costmodel/roofline_knobs.h"
#include "costmodel/attention_registry.h"
#include "configs/profile_catalog.h"
#include "costmodel/profile_table.h"

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

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

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
    p = fs::path(config_dir()) / sub / (lower(name) + ".yaml");
  }
  std::error_code ec;  // e.g. a name longer than the file system allows: not found, not a throw
  if (!fs::is_regular_file(p, ec)) {
    std::string known;
    for (const auto& n : known_names(sub)) known += (known.empty() ? "" : ", ") + n;
    parent.fail(key, fmt::format("unknown {} '{}' (no file {}); known: {}", sub == "models" ? "model" : "hardware",
                                 name, p.string(), known));
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
  read_options(m, hardware_options(), h);
  m.get<std::string>("source", "");  // provenance note (datasheet), informational
  m.finish();
  return h;
}

HardwareSpec load_hardware(YamlMap& parent, const std::string& key, const std::string& def) {
  auto [m, name] = resolve_named(parent, key, "hardware", def);
  return parse_hardware(m, name);
}

// attention: {prefill, decode, kv, and one parameter map per method that has
// parameters (quest: {...}, minference: {...}, andpro: {...})}: the methods
// and their maps come from the registry (costmodel/attention_registry.h).
// Whether the profile measured what a method needs is checked by the cost model.
AttentionConfig parse_attention(YamlMap& parent, const AttentionConfig& def) {
  AttentionConfig a = def;
  YamlMap m = parent.map("attention");
  auto method = [&]<class Method, std::size_t N>(const char* key, Method& v, const std::array<std::string_view, N>& names) {
    const std::string name = m.get<std::string>(key, std::string(method_name(v)));
    if (auto found = method_by_name<Method>(names, name)) {
      v = *found;
      return;
    }
    m.fail(key, fmt::format("unknown attention method '{}'; known: {}", name, fmt::join(names, ", ")));
  };
  method("prefill", a.prefill, kPrefillMethodNames);
  method("decode", a.decode, kDecodeMethodNames);
  method("kv", a.kv, kKvMethodNames);
  for (const AttentionMethodType& t : attention_method_types()) {
    if (t.params_key.empty()) continue;
    YamlMap pm = m.map(t.params_key);
    t.parse(pm, a);
    pm.finish();
  }
  m.finish();
  return a;
}

YAML::Node attention_node(const AttentionConfig& a) {
  YAML::Node n;
  n["prefill"] = std::string(method_name(a.prefill));
  n["decode"] = std::string(method_name(a.decode));
  n["kv"] = std::string(method_name(a.kv));
  for (const AttentionMethodType& t : attention_method_types()) {
    if (t.params_key.empty()) continue;
    YAML::Node p;
    t.write(p, a);
    n[t.params_key] = p;
  }
  return n;
}

// The profile cost_model.stack selects for the hardware (profile_catalog.h), or, when
// none exists, the path it would have (for messages).
std::string auto_profile_path(const HardwareSpec& hw, const std::string& stack) {
  const std::string p = find_stack_profile(hw.name, stack);
  return p.empty() ? stack_profile_path(hw.name, stack == "auto" ? kOwnStack : stack) : p;
}

// cost_model: backend auto | calibrated | roofline | fixed and its options,
// in four steps (each below): resolve the backend, read its options, load and
// fit the profiles, check every worker can be priced. Needs c.workers
// (hardware and attention per worker). See CostModelConfig.
void parse_cost_model(YamlMap& m, ScenarioConfig& c);

// A measured profile prices the GPU it was measured on. A worker whose hardware keeps a
// shipped file's name but changes a speed that the profile measured instead (HBM
// bandwidth, bf16 peak, SMs, L2) is not that GPU: returns the first such field, described,
// or "" when none differs or no hardware file has the name. Memory size and interconnect
// are not compared: the calibrated model reads them from the hardware spec.
std::string speed_override(const HardwareSpec& hw) {
  HardwareSpec file;
  try {
    file = load_hardware_named(hw.name);
  } catch (const InputError&) {
    return "";
  }
  const std::pair<const char*, std::pair<double, double>> fields[] = {
      {"mem_bandwidth_gbps", {hw.mem_bandwidth_gbps, file.mem_bandwidth_gbps}},
      {"bf16_tflops", {hw.bf16_tflops, file.bf16_tflops}},
      {"sms", {static_cast<double>(hw.sms), static_cast<double>(file.sms)}},
      {"l2_mb", {hw.l2_mb, file.l2_mb}}};
  for (const auto& [name, v] : fields)
    if (v.first != v.second)
      return fmt::format("hardware '{}' has {} {} where its hardware file (the GPU the profile measured) has {}",
                         hw.name, name, v.first, v.second);
  return "";
}

// What speed_override() compares, with the name: one entry per distinct hardware (a
// cluster may have 100000 workers, and speed_override reads a file).
using SpeedKey = std::tuple<std::string, double, double, int, double>;
SpeedKey speed_key(const HardwareSpec& h) { return {h.name, h.mem_bandwidth_gbps, h.bf16_tflops, h.sms, h.l2_mb}; }

// Step 1: `backend`, with auto resolved: calibrated only when every worker's
// GPU has a measured profile and keeps that GPU's speeds (speed_override), else roofline.
void resolve_backend(YamlMap& cm, ScenarioConfig& c) {
  CostModelConfig& cc = c.cost_model;
  std::string backend = cm.get<std::string>("backend", cc.backend);
  if (backend != "auto" && backend != "calibrated" && backend != "roofline" && backend != "fixed")
    cm.fail("backend", fmt::format("unknown cost model backend '{}'; known: auto, calibrated, roofline, fixed", backend));
  cc.stack = cm.get<std::string>("stack", cc.stack);
  if (cc.stack != "auto") {
    bool any = false;
    for (const auto& p : shipped_profiles()) any = any || p.stack == cc.stack;
    if (!any) {
      std::string known;
      for (const auto& p : shipped_profiles())
        if (known.find(p.stack) == std::string::npos) known += (known.empty() ? "" : ", ") + p.stack;
      cm.fail("stack", fmt::format("no measured profile of engine stack '{}' (known: auto, {}; "
                                   "`servesim calibrate list`)", cc.stack, known));
    }
  }
  if (backend == "auto") {
    cc.auto_selected = true;
    bool all = true;
    std::set<SpeedKey> seen;
    for (const WorkerConfig& w : c.workers)
      if (seen.insert(speed_key(w.hardware)).second)
        all = all && !find_stack_profile(w.hardware.name, cc.stack).empty() && speed_override(w.hardware).empty();
    backend = all ? "calibrated" : "roofline";
  }
  cc.backend = backend;
}

// cost_model.knobs: a YAML of roofline knob keys of the hardware schema
// (written by `servesim calibrate fit-roofline`), applied over the scenario's
// and every worker's hardware. Only the roofline's own keys are accepted: a
// knob file never changes memory or datasheet ceilings. The path is made
// absolute so that config.resolved.yaml re-applies the same file.
void apply_roofline_knobs(YamlMap& cm, ScenarioConfig& c) {
  std::vector<std::string> allowed;  // roofline_knob_options(), the one list, and `source`
  for (const auto& f : roofline_knob_options()) allowed.emplace_back(f.key);
  allowed.emplace_back("source");
  fs::path p(c.cost_model.roofline.knobs);
  if (p.is_relative()) p = fs::path(cm.file()).parent_path() / p;
  if (!fs::exists(p)) cm.fail("knobs", fmt::format("no knob file {}", p.string()));
  c.cost_model.roofline.knobs = fs::absolute(p).lexically_normal().string();
  YAML::Node node;
  try {
    node = load_yaml_file(p.string());
  } catch (const InputError& e) {
    cm.fail("knobs", e.what());
  }
  if (!node.IsMap()) cm.fail("knobs", fmt::format("{}: expected a map of hardware knob keys", p.string()));
  for (const auto& kv : node)
    if (std::find(allowed.begin(), allowed.end(), kv.first.as<std::string>()) == allowed.end())
      cm.fail("knobs", fmt::format("{}: key '{}' is not a roofline knob; allowed: {}", p.string(),
                                   kv.first.as<std::string>(), fmt::join(allowed, ", ")));
  auto apply = [&](HardwareSpec& h) {
    YamlMap k(node, p.string());
    read_options(k, roofline_knob_options(), h);
    k.get<std::string>("source", "");
    k.finish();
  };
  apply(c.hardware);
  for (WorkerConfig& w : c.workers) apply(w.hardware);
}

// Step 2: the options of the resolved backend (auto accepts both roofline's
// and calibrated's keys), and estimate_noise.
void read_backend_options(YamlMap& cm, ScenarioConfig& c) {
  CostModelConfig& cc = c.cost_model;
  const std::string& backend = cc.backend;
  cc.estimate_noise = cm.get<double>("estimate_noise", cc.estimate_noise);
  if (!(cc.estimate_noise >= 0 && cc.estimate_noise <= 10))
    cm.fail("estimate_noise", fmt::format("must be in [0, 10], got {}", cc.estimate_noise));
  if (backend == "fixed") {  // accepted (and unused) by every backend, as documented
    const double overhead = cm.get<double>("iteration_overhead_us", 0.0);
    if (overhead < 0) cm.fail("iteration_overhead_us", "must be >= 0");
    if (!(std::fabs(overhead) <= 1e6)) cm.fail("iteration_overhead_us", fmt::format("must be at most 1000000, got {}", overhead));
  }
  if (backend == "roofline" || cc.auto_selected) {
    read_options(cm, roofline_options(), cc.roofline);
    cc.roofline.tp = c.tp;
    if (cc.roofline.model != "hardware" && cc.roofline.model != "flat")
      cm.fail("model", fmt::format("unknown roofline model '{}'; known: hardware, flat", cc.roofline.model));
    if (!cc.roofline.knobs.empty()) apply_roofline_knobs(cm, c);
  }
  if (backend == "calibrated" || cc.auto_selected) {
    read_options(cm, calibrated_options(), cc.calibrated);
    cc.calibrated.tp = c.tp;
    cc.profile = cm.get<std::string>("profile", cc.profile);
  }
  if (backend == "fixed") read_options(cm, fixed_options(), cc.fixed);
}

// The key a calibrated-backend error is reported at.
std::string profile_key(const YamlMap& cm) { return cm.has("profile") ? "profile" : "backend"; }

// Step 3 (calibrated): each worker's profile path (per hardware name with
// profile auto), each distinct file loaded and fitted once into cc.fits.
void load_profiles(YamlMap& cm, ScenarioConfig& c) {
  CostModelConfig& cc = c.cost_model;
  const std::string key = profile_key(cm);
  std::map<std::string, std::string> resolved_path;  // hardware name → profile path
  // An explicit `calibrated` with profile auto (backend auto checked the speeds already).
  const bool check_speeds = cc.profile == "auto" && !cc.auto_selected;
  std::set<SpeedKey> speeds_checked;
  for (std::size_t i = 0; i < c.workers.size(); ++i) {
    WorkerConfig& w = c.workers[i];
    if (check_speeds && speeds_checked.insert(speed_key(w.hardware)).second)
      if (const std::string why = speed_override(w.hardware); !why.empty())
        cm.fail(key, fmt::format("{}: its measured profile {} cannot price it; use backend roofline, or give the "
                                 "hardware another name and a profile measured on it", why,
                                 auto_profile_path(w.hardware, cc.stack)));
    if (auto it = resolved_path.find(w.hardware.name); it != resolved_path.end()) {
      w.profile = it->second;
      continue;
    }
    const bool automatic = cc.profile == "auto";
    fs::path p = automatic ? fs::path(auto_profile_path(w.hardware, cc.stack)) : fs::path(cc.profile);
    if (!automatic && p.is_relative()) p = fs::path(cm.file()).parent_path() / p;
    w.profile = fs::absolute(p).lexically_normal().string();
    if (automatic && !fs::exists(p))
      cm.fail(key, fmt::format("no measured kernel profile for hardware '{}' (stack {}) at {}; measure one "
                               "(docs/costmodel.md, \"Calibrating a new GPU\"), import one (`servesim calibrate "
                               "import`) or set cost_model.profile", w.hardware.name, cc.stack, w.profile));
    resolved_path[w.hardware.name] = w.profile;
    if (cc.fits.count(w.profile)) continue;
    std::shared_ptr<const KernelFits> fits;
    try {
      fits = load_kernel_fits(w.profile);
    } catch (const InputError& e) {
      cm.fail(key, e.what());
    }
    if (automatic && fits->synthetic())
      cm.fail(key, fmt::format("{} is a SYNTHETIC profile; the profile folder holds measured profiles only",
                               w.profile));
    cc.fits[w.profile] = fits;
  }
}

// Step 4: every worker can be priced. Calibrated: each distinct worker's
// model is built now, so a missing family or shape is reported here, at the
// config key, not in the middle of a run. Other backends: dense attention only.
void check_workers_priced(YamlMap& cm, const ScenarioConfig& c) {
  const CostModelConfig& cc = c.cost_model;
  if (cc.backend == "calibrated") {
    const std::vector<std::size_t> first = first_equal_worker(c.workers);
    for (std::size_t i = 0; i < c.workers.size(); ++i) {
      if (first[i] != i) continue;
      const WorkerConfig& w = c.workers[i];
      try {
        CalibratedOptions o = cc.calibrated;
        o.tp = w.tp;
        CalibratedCostModel(cc.fits.at(w.profile), c.model, w.hardware, w.attention, o);
      } catch (const InputError& e) {
        cm.fail(profile_key(cm), e.what());
      }
    }
    return;
  }
  for (std::size_t i = 0; i < c.workers.size(); ++i)
    if (needs_profile(c.workers[i].attention))
      cm.fail("backend", fmt::format(
          "worker {} uses attention {}, which only the calibrated backend prices (the {} backend has no model of "
          "sparse kernels){}; set cost_model: {{backend: calibrated, profile: PROFILE.csv}}", i,
          c.workers[i].attention.describe(), cc.backend,
          cc.auto_selected ? fmt::format(" and backend auto found no measured profile at {}",
                                         auto_profile_path(c.workers[i].hardware, cc.stack))
                           : ""));
}

void parse_cost_model(YamlMap& m, ScenarioConfig& c) {
  YamlMap cm = m.map("cost_model");
  resolve_backend(cm, c);
  read_backend_options(cm, c);
  if (c.cost_model.backend == "calibrated") load_profiles(cm, c);
  check_workers_priced(cm, c);
  cm.finish();
}

// report.window: each side by time or by count, not both.
void parse_window(YamlMap& rm, ScenarioConfig& c) {
  YamlMap wm = rm.map("window");
  read_options(wm, window_options(), c.window);
  if (c.window.warmup > 0 && c.window.warmup_requests > 0)
    wm.fail("warmup_requests", "set warmup_s or warmup_requests, not both");
  if (c.window.cooldown > 0 && c.window.cooldown_requests > 0)
    wm.fail("cooldown_requests", "set cooldown_s or cooldown_requests, not both");
  wm.finish();
}

// slo: {ttft_s, tpot_s, e2e_s, clients: {NAME: {...}}}: a client's map
// replaces the keys it sets, the others stay the scenario-wide ones.
void parse_slo(YamlMap& m, ScenarioConfig& c) {
  YamlMap sm = m.map("slo");
  read_options(sm, slo_options(), c.slo.all);
  YamlMap cm = sm.map("clients");
  for (const auto& kv : cm.node()) {
    const std::string name = kv.first.as<std::string>();
    YamlMap one = cm.map(name);
    SloThresholds t = c.slo.all;
    read_options(one, slo_options(), t);
    one.finish();
    c.slo.clients[name] = t;
  }
  cm.finish();
  sm.finish();
}

PoolRole parse_role(YamlMap& pm) {
  const std::string role = pm.get<std::string>("role", "mixed");
  if (role == "mixed") return PoolRole::kMixed;
  if (role == "prefill") return PoolRole::kPrefill;
  if (role == "decode") return PoolRole::kDecode;
  pm.fail("role", fmt::format("unknown pool role '{}'; known: prefill, decode, mixed", role));
}

// cluster.pools: [{name, role, workers, tp, hardware, attention, batching, policy: {local}}];
// every key but name defaults to the scenario's (role: mixed, workers: 1).
// Workers are numbered pool by pool, in list order.
void parse_pools(YamlMap& cl, ScenarioConfig& c) {
  YAML::Node list = cl.raw("pools");
  if (!list.IsSequence() || list.size() == 0)
    cl.fail("pools", "expected a non-empty list of {name, role, workers, tp, hardware, attention, batching, policy}");
  std::set<std::string> names;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    YamlMap pm(list[i], c.file, cl.key_path(fmt::format("pools[{}]", i)));
    PoolConfig p;
    p.name = pm.require<std::string>("name");
    if (p.name.empty() || !names.insert(p.name).second)
      pm.fail("name", fmt::format("pool name '{}' is empty or used twice", p.name));
    p.role = parse_role(pm);
    p.workers = pm.positive_int("workers", 1);
    total += p.workers;
    if (total > 100000) pm.fail("workers", "at most 100000 workers in all pools");
    p.tp = static_cast<int>(pm.positive_int("tp", 1));
    if (c.model.heads % p.tp != 0)
      pm.fail("tp", fmt::format("tp={} must divide the model's {} attention heads", p.tp, c.model.heads));
    p.hardware = pm.has("hardware") ? load_hardware(pm, "hardware", "") : c.hardware;
    p.attention = parse_attention(pm, c.attention);
    p.batching = c.batching;
    YamlMap b = pm.map("batching");
    read_options(b, batching_options(), p.batching);
    read_options(b, batching_mode_options(), p.batching);
    b.finish();
    YamlMap pol = pm.map("policy");
    if (pol.has("local")) p.local_policy = parse_local_policy(pol, "local", "fcfs");
    pol.finish();
    p.kv_tiers = parse_kv_tiers(pm, c.kv_tiers);
    KvCapacity kv;
    try {
      kv = compute_kv_capacity(c.model, p.hardware, p.tp, c.memory_utilization, c.activation_reserve_gb, c.page_size,
                               kv_metadata_share(c.model, p.attention, c.page_size));
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
void parse_pd(YamlMap& cl, ScenarioConfig& c) {
  if (!cl.has("pd")) return;
  if (!c.disaggregated())
    cl.fail("pd", "cluster.pd needs cluster.pools with a pool of role prefill or decode");
  YamlMap pd = cl.map("pd");
  read_options(pd, pd_options(), c.pd);
  if (pd.has("threshold_tokens") && c.pd.decider != PdDecider::kPrefixAware)
    pd.fail("threshold_tokens", "only the prefix_aware decider reads threshold_tokens");
  pd.finish();
}

// policy.decode_global (PD only) and the pools' local policies against the
// global policy's required local policy.
void parse_pool_policies(YamlMap& pm, ScenarioConfig& c) {
  if (pm.has("decode_global") && !c.disaggregated())
    pm.fail("decode_global", "policy.decode_global needs cluster.pools with a pool of role prefill or decode");
  c.decode_global_policy = parse_global_policy(pm, "decode_global", "least_outstanding");
  if (!c.decode_global_policy.requires_local.empty())
    pm.fail("decode_global", fmt::format("global policy '{}' needs local policy '{}' and cannot pick decode workers",
                                         c.decode_global_policy.resolved["name"].as<std::string>(),
                                         c.decode_global_policy.requires_local));
  const std::string& need = c.global_policy.requires_local;
  if (need.empty()) return;
  for (const PoolConfig& p : c.pools)
    if (p.local_policy && (*p.local_policy).resolved["name"].as<std::string>() != need)
      pm.fail("global", fmt::format("global policy '{}' runs with local policy '{}' on every worker; pool '{}' sets "
                                    "another", c.global_policy.resolved["name"].as<std::string>(), need, p.name));
}

}  // namespace

std::string pool_role_name(PoolRole r) {
  switch (r) {
    case PoolRole::kPrefill: return "prefill";
    case PoolRole::kDecode: return "decode";
    case PoolRole::kMixed: break;
  }
  return "mixed";
}

bool ScenarioConfig::disaggregated() const {
  return std::any_of(pools.begin(), pools.end(), [](const PoolConfig& p) { return p.role != PoolRole::kMixed; });
}

bool PoolConfig::operator==(const PoolConfig& o) const {
  auto same = [](const std::optional<ParsedPolicy<LocalPolicy>>& a, const std::optional<ParsedPolicy<LocalPolicy>>& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a || YAML::Dump(a->resolved) == YAML::Dump(b->resolved);
  };
  return name == o.name && role == o.role && workers == o.workers && tp == o.tp && hardware == o.hardware &&
         attention == o.attention && batching == o.batching && same(local_policy, o.local_policy) && kv_tiers == o.kv_tiers;
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
  c.name = m.get<std::string>("name", fs::path(file).stem().string());
  c.seed = m.get<std::uint64_t>("seed", c.seed);
  if (auto h = m.optional<double>("horizon_s")) {
    // 1e9 s (31.7 years): a horizon in int64 nanoseconds with room for what follows it
    // (1e10 wrapped to -9.2e9 s).
    if (!(*h > 0 && *h <= kOptionMax)) m.fail("horizon_s", fmt::format("must be in (0, {:.0e}] s, got {}", kOptionMax, *h));
    c.horizon = seconds_to_time(*h);
  }
  {
    auto [mm, name] = resolve_named(m, "model", "models", "llama-3-8b");
    c.model = parse_model(mm, name);
  }
  c.hardware = load_hardware(m, "hardware", "h100-sxm");
  c.attention = parse_attention(m, AttentionConfig{});

  YamlMap b = m.map("batching");
  read_options(b, batching_options(), c.batching);
  read_options(b, memory_options(), c);
  read_options(b, batching_mode_options(), c.batching);
  b.finish();

  c.kv_tiers = parse_kv_tiers(m, c.kv_tiers);  // kv_cache: before the cluster (pools and overrides default to it)
  YamlMap cl = m.map("cluster");
  if (cl.has("pools")) {
    for (const char* k : {"workers", "tp", "overrides"})
      if (cl.has(k))
        cl.fail(k, fmt::format("cluster.{} cannot be set together with cluster.pools (each pool sets its own "
                               "workers, tp and hardware)", k));
    parse_pools(cl, c);
  } else {
    const std::int64_t n_workers = cl.positive_int("workers", 1);
    if (n_workers > 100000) cl.fail("workers", "at most 100000 workers");
    c.tp = static_cast<int>(cl.positive_int("tp", 1));
    if (c.model.heads % c.tp != 0)
      cl.fail("tp", fmt::format("tp={} must divide the model's {} attention heads", c.tp, c.model.heads));
    auto capacity = [&](const HardwareSpec& hw, const AttentionConfig& att, YamlMap& where, const std::string& key) {
      try {
        return compute_kv_capacity(c.model, hw, c.tp, c.memory_utilization, c.activation_reserve_gb, c.page_size,
                                   kv_metadata_share(c.model, att, c.page_size));
      } catch (const InputError& e) {
        where.fail(key, e.what());
      }
    };
    WorkerConfig base{c.hardware, c.attention, capacity(c.hardware, c.attention, m, "model"), "", c.kv_tiers};
    c.workers.assign(static_cast<std::size_t>(n_workers), base);
    YAML::Node overrides = cl.raw("overrides");
    if (overrides.IsDefined() && !overrides.IsNull() && !overrides.IsSequence()) cl.fail("overrides", "expected a list of {worker: N, hardware: ..., attention: ...}");
    for (std::size_t i = 0; overrides.IsSequence() && i < overrides.size(); ++i) {
      YamlMap o(overrides[i], file, cl.key_path(fmt::format("overrides[{}]", i)));
      std::int64_t w = o.require<std::int64_t>("worker");
      if (w < 0 || w >= n_workers) o.fail("worker", fmt::format("worker index {} outside 0..{}", w, n_workers - 1));
      WorkerConfig& wc = c.workers[static_cast<std::size_t>(w)];
      if (o.has("hardware")) wc.hardware = load_hardware(o, "hardware", "");
      wc.attention = parse_attention(o, wc.attention);
      wc.kv_tiers = parse_kv_tiers(o, wc.kv_tiers);
      if (o.has("hardware") || o.has("attention"))  // Quest's metadata changes capacity too
        wc.kv = capacity(wc.hardware, wc.attention, o, o.has("hardware") ? "hardware" : "attention");
      o.finish();
    }
    for (WorkerConfig& w : c.workers) w.tp = c.tp;
  }
  parse_pd(cl, c);
  c.kv_store = parse_kv_store(cl);
  cl.finish();

  YamlMap pm = m.map("policy");
  c.local_policy = parse_local_policy(pm, "local", "fcfs");
  c.global_policy = parse_global_policy(pm, "global", "round_robin");
  if (const std::string& need = c.global_policy.requires_local;
      !need.empty() && c.local_policy.resolved["name"].as<std::string>() != need)
    pm.fail("local", fmt::format("global policy '{}' runs with local policy '{}' on every worker; set local: {}",
                                 c.global_policy.resolved["name"].as<std::string>(), need, need));
  parse_pool_policies(pm, c);
  pm.finish();

  parse_cost_model(m, c);

  YamlMap wm = m.map("workload");
  if (!m.has("workload")) m.fail_here("missing required section 'workload'");
  c.workload = parse_workload(wm);
  YamlMap vm = m.map("variance");
  c.variance = parse_variance(vm);
  c.variance.resolve(c.workload->resolved()["type"].as<std::string>("") == "trace");
  resolve_cost_noise(vm, c);

  YamlMap rm = m.map("report");
  c.out_dir = rm.get<std::string>("out", "runs/" + c.name);
  read_options(rm, report_options(), c);
  double tl = rm.get<double>("timeline_interval_s", c.timeline_interval ? time_to_seconds(*c.timeline_interval) : 0.0);
  if (!(tl == 0 || (tl >= kMinTimelineIntervalS && tl <= kMaxTimelineIntervalS)))
    rm.fail("timeline_interval_s", fmt::format("must be 0 (off) or in [{}, {}] s, got {}", kMinTimelineIntervalS,
                                               kMaxTimelineIntervalS, tl));
  c.timeline_interval = tl > 0 ? std::optional<Time>(seconds_to_time(tl)) : std::nullopt;
  parse_window(rm, c);
  rm.finish();
  parse_slo(m, c);
  m.finish();
  return c;
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

bool CostModelConfig::operator==(const CostModelConfig& o) const {
  if (backend != o.backend || estimate_noise != o.estimate_noise) return false;
  if (backend == "roofline") return roofline == o.roofline;
  if (backend == "fixed") return fixed == o.fixed;
  return calibrated == o.calibrated && (profile == "auto") == (o.profile == "auto") && stack == o.stack;
}

bool ScenarioConfig::operator==(const ScenarioConfig& o) const {
  auto same_yaml = [](const YAML::Node& a, const YAML::Node& b) { return YAML::Dump(a) == YAML::Dump(b); };
  return name == o.name && seed == o.seed && horizon == o.horizon && model == o.model && hardware == o.hardware &&
         attention == o.attention && tp == o.tp && batching == o.batching &&
         memory_utilization == o.memory_utilization && activation_reserve_gb == o.activation_reserve_gb &&
         page_size == o.page_size && workers == o.workers &&
         same_yaml(local_policy.resolved, o.local_policy.resolved) && local_policy.oracle == o.local_policy.oracle &&
         same_yaml(global_policy.resolved, o.global_policy.resolved) &&
         global_policy.oracle == o.global_policy.oracle && cost_model == o.cost_model &&
         same_yaml(workload->resolved(), o.workload->resolved()) && out_dir == o.out_dir && w_in == o.w_in &&
         w_out == o.w_out && write_requests == o.write_requests && timeline_interval == o.timeline_interval &&
         window == o.window && slo == o.slo && variance == o.variance && kv_tiers == o.kv_tiers && pools == o.pools && pd == o.pd &&
         kv_store == o.kv_store &&
         same_yaml(decode_global_policy.resolved, o.decode_global_policy.resolved);
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
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return;
  const std::string t = fmt::format("{}", v);
  double back = 0;
  const auto [tend, tec] = std::from_chars(t.data(), t.data() + t.size(), back);
  if (tec != std::errc() || tend != t.data() + t.size() || back != v || t.size() >= s.size()) return;
  n = t;
}

}  // namespace

YAML::Node ScenarioConfig::resolved() const {
  YAML::Node n;
  n["name"] = name;
  n["seed"] = seed;
  if (horizon) n["horizon_s"] = time_to_seconds(*horizon);
  YAML::Node mo;
  mo["name"] = model.name;
  write_options(mo, model_options(), model);
  n["model"] = mo;
  auto hw_node = [](const HardwareSpec& h) {
    YAML::Node x;
    x["name"] = h.name;
    write_options(x, hardware_options(), h);  // its interconnect: map last
    return x;
  };
  n["hardware"] = hw_node(hardware);
  n["attention"] = attention_node(attention);
  YAML::Node b;
  write_options(b, batching_options(), batching);
  write_options(b, memory_options(), *this);
  write_options(b, batching_mode_options(), batching);
  n["batching"] = b;
  if (pools.empty()) {
    n["cluster"]["workers"] = workers.size();
    n["cluster"]["tp"] = tp;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const WorkerConfig& w = workers[i];
      if (w.hardware == hardware && w.attention == attention && w.kv_tiers == kv_tiers) continue;
      YAML::Node o;
      o["worker"] = i;
      o["hardware"] = hw_node(w.hardware);
      o["attention"] = attention_node(w.attention);
      if (w.kv_tiers != kv_tiers) o["kv_cache"] = kv_tiers_node(w.kv_tiers);
      n["cluster"]["overrides"].push_back(o);
    }
  }
  for (const PoolConfig& p : pools) {
    YAML::Node x;
    x["name"] = p.name;
    x["role"] = pool_role_name(p.role);
    x["workers"] = p.workers;
    x["tp"] = p.tp;
    x["hardware"] = hw_node(p.hardware);
    x["attention"] = attention_node(p.attention);
    YAML::Node pb;
    write_options(pb, batching_options(), p.batching);
    write_options(pb, batching_mode_options(), p.batching);
    x["batching"] = pb;
    if (p.local_policy) x["policy"]["local"] = p.local_policy->resolved;
    if (p.kv_tiers != kv_tiers) x["kv_cache"] = kv_tiers_node(p.kv_tiers);
    n["cluster"]["pools"].push_back(x);
  }
  if (disaggregated()) {
    YAML::Node pdn;
    write_options(pdn, pd_options(), pd);
    n["cluster"]["pd"] = pdn;
  }
  if (kv_tiers != KvTiersConfig{}) n["kv_cache"] = kv_tiers_node(kv_tiers);  // only when set: resolves as before
  if (kv_store.enabled()) n["cluster"]["kv_store"] = kv_store_node(kv_store);  // only when set: resolves as before
  n["policy"]["local"] = local_policy.resolved;
  n["policy"]["global"] = global_policy.resolved;
  if (disaggregated()) n["policy"]["decode_global"] = decode_global_policy.resolved;
  YAML::Node cm;
  cm["backend"] = cost_model.backend;
  if (cost_model.backend == "roofline") {
    write_options(cm, roofline_options(), cost_model.roofline);
  } else if (cost_model.backend == "calibrated") {
    cm["profile"] = cost_model.profile == "auto" ? std::string("auto") : workers.front().profile;
    if (cost_model.stack != "auto") cm["stack"] = cost_model.stack;  // auto: not written (outputs as before stacks)
    write_options(cm, calibrated_options(), cost_model.calibrated);
  } else {
    write_options(cm, fixed_options(), cost_model.fixed);
  }
  cm["estimate_noise"] = cost_model.estimate_noise;
  n["cost_model"] = cm;
  n["workload"] = workload->resolved();
  n["report"]["out"] = out_dir;
  YAML::Node report = n["report"];
  write_options(report, report_options(), *this);
  n["report"]["timeline_interval_s"] = timeline_interval ? time_to_seconds(*timeline_interval) : 0.0;
  // Written only when set, so a scenario without them resolves as before.
  if (window.set()) {
    YAML::Node w;
    write_options(w, window_options(), window);
    n["report"]["window"] = w;
  }
  if (slo.any() || !slo.clients.empty()) {
    YAML::Node sn;
    write_options(sn, slo_options(), slo.all);
    for (const auto& [client, t] : slo.clients) {
      YAML::Node one;
      write_options(one, slo_options(), t);
      sn["clients"][client] = one;
    }
    n["slo"] = sn;
  }
  if (variance.active()) n["variance"] = variance_yaml(variance);  // only when set: other scenarios resolve as before
  // A deep copy first: n shares nodes with members (the policies' resolved options).
  YAML::Node out = YAML::Clone(n);
  shorten_doubles(out);
  return out;
}

}  // namespace servesim
