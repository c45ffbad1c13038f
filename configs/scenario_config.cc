// Scenario parsing; see scenario_config.h and docs/configuration.md.
#include "configs/scenario_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace servesim {
namespace fs = std::filesystem;

std::string config_dir() {
  if (const char* d = std::getenv("SERVESIM_CONFIG_DIR"); d && *d) return d;
  return SERVESIM_CONFIGS_DIR;  // compiled in: <source>/configs
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
  if (!fs::exists(p)) {
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
  s.layers = m.positive_int("layers", s.layers);
  s.hidden = m.positive_int("hidden", s.hidden);
  s.heads = m.positive_int("heads", s.heads);
  s.kv_heads = m.positive_int("kv_heads", s.kv_heads);
  s.head_dim = m.positive_int("head_dim", s.head_dim);
  s.intermediate = m.positive_int("intermediate", s.intermediate);
  s.vocab = m.positive_int("vocab", s.vocab);
  s.max_context = m.positive_int("max_context", s.max_context);
  s.tie_embeddings = m.get<bool>("tie_embeddings", s.tie_embeddings);
  s.weight_bytes = static_cast<int>(m.positive_int("weight_bytes", s.weight_bytes));
  s.kv_bytes = static_cast<int>(m.positive_int("kv_bytes", s.kv_bytes));
  if (s.heads % s.kv_heads != 0)
    m.fail("kv_heads", fmt::format("heads ({}) must be a multiple of kv_heads ({})", s.heads, s.kv_heads));
  m.finish();
  return s;
}

HardwareSpec parse_hardware(YamlMap& m, const std::string& fallback_name) {
  HardwareSpec h;
  h.name = m.get<std::string>("name", fallback_name.empty() ? "custom" : fallback_name);
  h.memory_gb = m.positive("memory_gb", h.memory_gb);
  h.mem_bandwidth_gbps = m.positive("mem_bandwidth_gbps", h.mem_bandwidth_gbps);
  h.bf16_tflops = m.positive("bf16_tflops", h.bf16_tflops);
  h.interconnect_gbps = m.positive("interconnect_gbps", h.interconnect_gbps);
  h.kernel_launch_us = m.get<double>("kernel_launch_us", h.kernel_launch_us);
  if (h.kernel_launch_us < 0) m.fail("kernel_launch_us", "must be >= 0");
  m.get<std::string>("source", "");  // provenance note (datasheet), informational
  m.finish();
  return h;
}

HardwareSpec load_hardware(YamlMap& parent, const std::string& key, const std::string& def) {
  auto [m, name] = resolve_named(parent, key, "hardware", def);
  return parse_hardware(m, name);
}

AttentionConfig parse_attention(YamlMap& parent, const AttentionConfig& def) {
  AttentionConfig a = def;
  YamlMap m = parent.map("attention");
  a.prefill = m.get<std::string>("prefill", a.prefill);
  a.decode = m.get<std::string>("decode", a.decode);
  // Sparse methods (quest, minference, andpro) arrive with the calibrated cost model.
  if (a.prefill != "dense") m.fail("prefill", fmt::format("attention method '{}' is not available; known: dense", a.prefill));
  if (a.decode != "dense") m.fail("decode", fmt::format("attention method '{}' is not available; known: dense", a.decode));
  m.finish();
  return a;
}

double fraction(YamlMap& m, const std::string& key, double def, bool allow_zero) {
  double x = m.get<double>(key, def);
  if (!(allow_zero ? x >= 0 : x > 0) || x > 1)
    m.fail(key, fmt::format("must be in {}0, 1], got {}", allow_zero ? "[" : "(", x));
  return x;
}

}  // namespace

ScenarioConfig parse_scenario(const YAML::Node& root, const std::string& file) {
  ScenarioConfig c;
  c.file = file;
  YamlMap m(root, file);
  c.name = m.get<std::string>("name", fs::path(file).stem().string());
  c.seed = m.get<std::uint64_t>("seed", c.seed);
  if (auto h = m.optional<double>("horizon_s")) {
    if (*h <= 0) m.fail("horizon_s", "must be > 0");
    c.horizon = seconds_to_time(*h);
  }
  {
    auto [mm, name] = resolve_named(m, "model", "models", "llama-3-8b");
    c.model = parse_model(mm, name);
  }
  c.hardware = load_hardware(m, "hardware", "h100-sxm");
  AttentionConfig attention = parse_attention(m, AttentionConfig{});

  YamlMap b = m.map("batching");
  c.batching.max_batch_tokens = b.positive_int("max_batch_tokens", c.batching.max_batch_tokens);
  c.batching.chunk_size = b.positive_int("chunk_size", c.batching.chunk_size);
  c.batching.max_running = b.positive_int("max_running", c.batching.max_running);
  c.batching.reservation_ratio = fraction(b, "reservation_ratio", c.batching.reservation_ratio, true);
  c.memory_utilization = fraction(b, "memory_utilization", c.memory_utilization, false);
  c.activation_reserve_gb = b.get<double>("activation_reserve_gb", c.activation_reserve_gb);
  if (c.activation_reserve_gb < 0) b.fail("activation_reserve_gb", "must be >= 0");
  c.page_size = b.positive_int("page_size", c.page_size);
  std::string mode = b.get<std::string>("mode", "mixed");
  if (mode == "mixed") c.batching.mode = BatchMode::kMixed;
  else if (mode == "prefill_first") c.batching.mode = BatchMode::kPrefillFirst;
  else b.fail("mode", fmt::format("unknown batching mode '{}'; expected mixed or prefill_first", mode));
  b.finish();

  YamlMap cl = m.map("cluster");
  const std::int64_t n_workers = cl.positive_int("workers", 1);
  if (n_workers > 100000) cl.fail("workers", "at most 100000 workers");
  c.tp = static_cast<int>(cl.positive_int("tp", 1));
  if (c.model.heads % c.tp != 0)
    cl.fail("tp", fmt::format("tp={} must divide the model's {} attention heads", c.tp, c.model.heads));
  auto capacity = [&](const HardwareSpec& hw, YamlMap& where, const std::string& key) {
    try {
      return compute_kv_capacity(c.model, hw, c.tp, c.memory_utilization, c.activation_reserve_gb, c.page_size);
    } catch (const InputError& e) {
      where.fail(key, e.what());
    }
  };
  WorkerConfig base{c.hardware, attention, capacity(c.hardware, m, "model")};
  c.workers.assign(static_cast<std::size_t>(n_workers), base);
  YAML::Node overrides = cl.raw("overrides");
  if (overrides.IsDefined() && !overrides.IsNull() && !overrides.IsSequence()) cl.fail("overrides", "expected a list of {worker: N, hardware: ..., attention: ...}");
  for (std::size_t i = 0; overrides.IsSequence() && i < overrides.size(); ++i) {
    YamlMap o(overrides[i], file, cl.key_path(fmt::format("overrides[{}]", i)));
    std::int64_t w = o.require<std::int64_t>("worker");
    if (w < 0 || w >= n_workers) o.fail("worker", fmt::format("worker index {} outside 0..{}", w, n_workers - 1));
    WorkerConfig& wc = c.workers[static_cast<std::size_t>(w)];
    if (o.has("hardware")) {
      wc.hardware = load_hardware(o, "hardware", "");
      wc.kv = capacity(wc.hardware, o, "hardware");
    }
    wc.attention = parse_attention(o, wc.attention);
    o.finish();
  }
  cl.finish();

  YamlMap pm = m.map("policy");
  c.local_policy = parse_local_policy(pm, "local", "fcfs");
  c.global_policy = parse_global_policy(pm, "global", "round_robin");
  pm.finish();

  YamlMap cm = m.map("cost_model");
  c.cost_model.backend = cm.get<std::string>("backend", "roofline");
  if (c.cost_model.backend == "roofline") {
    RooflineOptions& r = c.cost_model.roofline;
    r.compute_efficiency = fraction(cm, "compute_efficiency", r.compute_efficiency, false);
    r.memory_efficiency = fraction(cm, "memory_efficiency", r.memory_efficiency, false);
    r.iteration_overhead_us = cm.get<double>("iteration_overhead_us", r.iteration_overhead_us);
    if (r.iteration_overhead_us < 0) cm.fail("iteration_overhead_us", "must be >= 0");
    r.kernels_per_layer = static_cast<int>(cm.get<std::int64_t>("kernels_per_layer", r.kernels_per_layer));
    if (r.kernels_per_layer < 0) cm.fail("kernels_per_layer", "must be >= 0");
    r.tp = c.tp;
  } else if (c.cost_model.backend == "fixed") {
    FixedCostOptions& f = c.cost_model.fixed;
    f.base = seconds_to_time(cm.positive("base_ms", 10.0) * 1e-3);
    f.per_prefill_token = seconds_to_time(cm.get<double>("per_prefill_token_us", 0.0) * 1e-6);
    f.per_decode_token = seconds_to_time(cm.get<double>("per_decode_token_us", 0.0) * 1e-6);
    if (f.per_prefill_token < 0 || f.per_decode_token < 0) cm.fail_here("per-token costs must be >= 0");
  } else {
    cm.fail("backend", fmt::format("unknown cost model backend '{}'; known: roofline, fixed", c.cost_model.backend));
  }
  cm.finish();

  YamlMap wm = m.map("workload");
  if (!m.has("workload")) m.fail_here("missing required section 'workload'");
  c.workload = parse_workload(wm);

  YamlMap rm = m.map("report");
  c.out_dir = rm.get<std::string>("out", "runs/" + c.name);
  c.w_in = rm.get<double>("w_in", c.w_in);
  c.w_out = rm.get<double>("w_out", c.w_out);
  if (c.w_in < 0 || c.w_out < 0) rm.fail_here("service weights w_in and w_out must be >= 0");
  c.write_requests = rm.get<bool>("requests_csv", c.write_requests);
  rm.finish();
  m.finish();
  return c;
}

ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& set_overrides) {
  YAML::Node root = load_yaml_file(path);
  for (const auto& s : set_overrides) apply_override(root, s);
  return parse_scenario(root, path);
}

YAML::Node ScenarioConfig::resolved() const {
  YAML::Node n;
  n["name"] = name;
  n["seed"] = seed;
  if (horizon) n["horizon_s"] = time_to_seconds(*horizon);
  YAML::Node mo;
  mo["name"] = model.name;
  mo["layers"] = model.layers;
  mo["hidden"] = model.hidden;
  mo["heads"] = model.heads;
  mo["kv_heads"] = model.kv_heads;
  mo["head_dim"] = model.head_dim;
  mo["intermediate"] = model.intermediate;
  mo["vocab"] = model.vocab;
  mo["max_context"] = model.max_context;
  mo["tie_embeddings"] = model.tie_embeddings;
  mo["weight_bytes"] = model.weight_bytes;
  mo["kv_bytes"] = model.kv_bytes;
  n["model"] = mo;
  auto hw_node = [](const HardwareSpec& h) {
    YAML::Node x;
    x["name"] = h.name;
    x["memory_gb"] = h.memory_gb;
    x["mem_bandwidth_gbps"] = h.mem_bandwidth_gbps;
    x["bf16_tflops"] = h.bf16_tflops;
    x["interconnect_gbps"] = h.interconnect_gbps;
    x["kernel_launch_us"] = h.kernel_launch_us;
    return x;
  };
  n["hardware"] = hw_node(hardware);
  n["attention"]["prefill"] = workers.front().attention.prefill;
  n["attention"]["decode"] = workers.front().attention.decode;
  YAML::Node b;
  b["max_batch_tokens"] = batching.max_batch_tokens;
  b["chunk_size"] = batching.chunk_size;
  b["max_running"] = batching.max_running;
  b["reservation_ratio"] = batching.reservation_ratio;
  b["memory_utilization"] = memory_utilization;
  b["activation_reserve_gb"] = activation_reserve_gb;
  b["page_size"] = page_size;
  b["mode"] = batching.mode == BatchMode::kMixed ? "mixed" : "prefill_first";
  n["batching"] = b;
  n["cluster"]["workers"] = workers.size();
  n["cluster"]["tp"] = tp;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const WorkerConfig& w = workers[i];
    bool same = w.hardware.name == hardware.name && w.attention.prefill == workers.front().attention.prefill &&
                w.attention.decode == workers.front().attention.decode;
    if (same) continue;
    YAML::Node o;
    o["worker"] = i;
    o["hardware"] = hw_node(w.hardware);
    o["attention"]["prefill"] = w.attention.prefill;
    o["attention"]["decode"] = w.attention.decode;
    n["cluster"]["overrides"].push_back(o);
  }
  n["policy"]["local"] = local_policy.resolved;
  n["policy"]["global"] = global_policy.resolved;
  YAML::Node cm;
  cm["backend"] = cost_model.backend;
  if (cost_model.backend == "roofline") {
    cm["compute_efficiency"] = cost_model.roofline.compute_efficiency;
    cm["memory_efficiency"] = cost_model.roofline.memory_efficiency;
    cm["iteration_overhead_us"] = cost_model.roofline.iteration_overhead_us;
    cm["kernels_per_layer"] = cost_model.roofline.kernels_per_layer;
  } else {
    cm["base_ms"] = time_to_seconds(cost_model.fixed.base) * 1e3;
    cm["per_prefill_token_us"] = time_to_seconds(cost_model.fixed.per_prefill_token) * 1e6;
    cm["per_decode_token_us"] = time_to_seconds(cost_model.fixed.per_decode_token) * 1e6;
  }
  n["cost_model"] = cm;
  n["workload"] = workload->resolved();
  n["report"]["out"] = out_dir;
  n["report"]["w_in"] = w_in;
  n["report"]["w_out"] = w_out;
  n["report"]["requests_csv"] = write_requests;
  return n;
}

}  // namespace servesim
