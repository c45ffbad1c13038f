// cost_model: backend auto | calibrated | roofline | fixed and its options, in
// four steps (each below): resolve the backend, read its options, load and fit
// the profiles, check every worker can be priced. See CostModelConfig in
// scenario_config.h; the keys are in configs/option_tables.h.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include <fmt/ranges.h>

#include "configs/option_tables.h"
#include "configs/profile_catalog.h"
#include "configs/scenario_sections.h"
#include "costmodel/attention_registry.h"
#include "costmodel/roofline_knobs.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {

// The profile cost_model.stack selects for the hardware (profile_catalog.h), or, when
// none exists, the path it would have (for messages).
std::string auto_profile_path(const HardwareSpec& hw, const std::string& stack) {
  const std::string p = find_stack_profile(hw.name, stack);
  return p.empty() ? stack_profile_path(hw.name, stack == "auto" ? kOwnStack : stack) : p;
}

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
  read_options(cm, cost_model_options(), cc);
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
  if (cc.backend == CostBackend::kAuto) {
    cc.auto_selected = true;
    bool all = true;
    std::set<SpeedKey> seen;
    for (const WorkerConfig& w : c.workers)
      if (seen.insert(speed_key(w.hardware)).second)
        all = all && !find_stack_profile(w.hardware.name, cc.stack).empty() && speed_override(w.hardware).empty();
    cc.backend = all ? CostBackend::kCalibrated : CostBackend::kRoofline;
  }
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
  std::error_code ec;
  if (!fs::exists(p, ec)) cm.fail("knobs", fmt::format("no knob file {}{}", p.string(), ec ? ": " + ec.message() : ""));
  c.cost_model.roofline.knobs = fs::absolute(p, ec).lexically_normal().string();
  if (ec) cm.fail("knobs", fmt::format("{}: {}", p.string(), ec.message()));
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
// and calibrated's keys).
void read_backend_options(YamlMap& cm, ScenarioConfig& c) {
  CostModelConfig& cc = c.cost_model;
  const CostBackend backend = cc.backend;
  if (backend == CostBackend::kFixed) {  // accepted (and unused) by every backend, as documented
    const double overhead = cm.get<double>("iteration_overhead_us", 0.0);
    if (overhead < 0) cm.fail("iteration_overhead_us", "must be >= 0");
    if (!(std::fabs(overhead) <= 1e6)) cm.fail("iteration_overhead_us", fmt::format("must be at most 1000000, got {}", overhead));
  }
  if (backend == CostBackend::kRoofline || cc.auto_selected) {
    read_options(cm, roofline_options(), cc.roofline);
    cc.roofline.tp = c.tp;
    if (!cc.roofline.knobs.empty()) apply_roofline_knobs(cm, c);
  }
  if (backend == CostBackend::kCalibrated || cc.auto_selected) {
    read_options(cm, calibrated_options(), cc.calibrated);
    cc.calibrated.tp = c.tp;
    read_options(cm, profile_options(), cc);
  }
  if (backend == CostBackend::kFixed) read_options(cm, fixed_options(), cc.fixed);
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
    std::error_code ec;
    w.profile = fs::absolute(p, ec).lexically_normal().string();
    if (ec) cm.fail(key, fmt::format("{}: {}", p.string(), ec.message()));
    if (automatic && !fs::exists(p, ec))
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
  if (cc.backend == CostBackend::kCalibrated) {
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
          c.workers[i].attention.describe(), backend_name(cc.backend),
          cc.auto_selected ? fmt::format(" and backend auto found no measured profile at {}",
                                         auto_profile_path(c.workers[i].hardware, cc.stack))
                           : ""));
}

// Only the backend in use keeps its options (see CostModelConfig): what
// config.resolved.yaml writes, so that equal configs price the same. An explicit
// profile becomes its resolved path (every worker's).
void keep_backend_in_use(ScenarioConfig& c) {
  CostModelConfig& cc = c.cost_model;
  const CostModelConfig def;
  if (cc.backend != CostBackend::kRoofline) cc.roofline = def.roofline;
  if (cc.backend != CostBackend::kFixed) cc.fixed = def.fixed;
  if (cc.backend != CostBackend::kCalibrated) {
    cc.calibrated = def.calibrated;
    cc.profile = def.profile;
    cc.stack = def.stack;
  } else if (cc.profile != "auto") {
    cc.profile = c.workers.front().profile;
  }
}

}  // namespace

void parse_cost_model(YamlMap& m, ScenarioConfig& c) {
  YamlMap cm = m.map("cost_model");
  resolve_backend(cm, c);
  read_backend_options(cm, c);
  if (c.cost_model.backend == CostBackend::kCalibrated) load_profiles(cm, c);
  check_workers_priced(cm, c);
  keep_backend_in_use(c);
  cm.finish();
}

YAML::Node cost_model_node(const ScenarioConfig& c) {
  const CostModelConfig& cc = c.cost_model;
  YAML::Node cm;
  const OptionTable<CostModelConfig>& t = cost_model_options();  // backend, stack, estimate_noise, time_scale
  write_options(cm, t, cc, "backend");
  if (cc.backend == CostBackend::kRoofline) {
    write_options(cm, roofline_options(), cc.roofline);
  } else if (cc.backend == CostBackend::kCalibrated) {
    write_options(cm, profile_options(), cc);  // auto, or the resolved path
    write_options(cm, t, cc, "stack");  // auto: not written (outputs as before stacks)
    write_options(cm, calibrated_options(), cc.calibrated);
  } else {
    write_options(cm, fixed_options(), cc.fixed);
  }
  write_options(cm, t, cc, "estimate_noise");
  write_options(cm, t, cc, "time_scale");  // only when not 1
  return cm;
}

}  // namespace servesim
