// ScenarioConfig: a scenario YAML file (plus `--set` overrides) parsed into
// typed structs with defaults. Loaded once, passed down by const reference.
// Every key is documented in docs/configuration.md; unknown keys, wrong types,
// unknown names (model, hardware, policy, backend) and impossible settings (a
// model that does not fit the GPU) are InputErrors naming file, line and key.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "costmodel/attention_method.h"
#include "costmodel/calibrated_cost_model.h"
#include "costmodel/fixed_cost_model.h"
#include "costmodel/hardware_spec.h"
#include "costmodel/kv_capacity.h"
#include "costmodel/model_spec.h"
#include "costmodel/roofline_cost_model.h"
#include "policies/policy_registry.h"
#include "reports/slo.h"
#include "reports/window.h"
#include "sim/core/service_weights.h"
#include "sim/batching_options.h"
#include "sim/pd_modes.h"
#include "sim/kv_store.h"
#include "sim/kv_tier.h"
#include "traces/variance_source.h"
#include "traces/workload.h"

namespace servesim {

// A member left out of a config's identity (the defaulted operator==): always equal.
// Used for where a config came from and for how a value was chosen, never for
// anything a run reads differently; each use says why.
template <class T>
struct Uncompared {
  T value{};
  Uncompared& operator=(T v) {
    value = std::move(v);
    return *this;
  }
  operator const T&() const { return value; }  // NOLINT: reads as the value
  bool operator==(const Uncompared&) const { return true; }
};

// The fitted profiles by resolved path, loaded once at parse time and shared: a cache
// of the files the workers name (WorkerConfig::profile, compared there), so it is
// always equal.
struct ProfileFitsCache : std::map<std::string, std::shared_ptr<const KernelFits>> {
  bool operator==(const ProfileFitsCache&) const { return true; }
};

// A shared immutable object (the workload) compared by what it resolves to, its
// resolved() YAML, not by address: two parses of one file are equal.
template <class T>
class SharedResolved {
 public:
  SharedResolved() = default;
  // From anything a shared_ptr<const T> is made from (a shared_ptr, a unique_ptr).
  template <class P, class = std::enable_if_t<!std::is_same_v<std::decay_t<P>, SharedResolved> &&
                                              std::is_convertible_v<P, std::shared_ptr<const T>>>>
  SharedResolved(P&& p) : p_(std::forward<P>(p)) {}  // NOLINT: implicit, as a shared_ptr
  const T* operator->() const { return p_.get(); }
  const T& operator*() const { return *p_; }
  const T* get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }
  operator const std::shared_ptr<const T>&() const { return p_; }  // NOLINT
  bool operator==(const SharedResolved& o) const {
    if (!p_ || !o.p_) return p_ == o.p_;
    return YAML::Dump(p_->resolved()) == YAML::Dump(o.p_->resolved());
  }

 private:
  std::shared_ptr<const T> p_;
};

// Cost model backend. `auto` (the default) resolves at load time to
// `calibrated` when every worker's hardware has a measured (not synthetic)
// profile of the stack (`stack`, configs/profile_catalog.h), else to `roofline`
// (labelled uncalibrated); `backend` then holds the resolved name.
// Option defaults live in RooflineOptions / CalibratedOptions / FixedCostOptions;
// the keys are in configs/option_tables.h.
//
// After parsing, only the backend in use holds options: the other backends'
// options, and profile and stack outside calibrated, are back at their defaults
// (config.resolved.yaml writes the backend in use only), and an explicit profile is
// its resolved absolute path. So equal configs price the same.
// The cost model backend: as written, auto; after parsing, one of the other three.
enum class CostBackend { kAuto, kCalibrated, kRoofline, kFixed };
inline constexpr std::array<std::string_view, 4> kCostBackendNames = {"auto", "calibrated", "roofline", "fixed"};
const char* backend_name(CostBackend b);  // "auto", "calibrated", "roofline", "fixed"

struct CostModelConfig {
  CostBackend backend = CostBackend::kAuto;  // as written; after parsing: calibrated | roofline | fixed
  // The backend came from `auto`: how it was chosen, not what prices the run
  // (config.resolved.yaml names the resolved backend). Not compared.
  Uncompared<bool> auto_selected;
  RooflineOptions roofline;          // tp is filled from the cluster
  FixedCostOptions fixed;
  CalibratedOptions calibrated;      // tp is filled from the cluster
  std::string profile = "auto";      // calibrated: the resolved path, or auto (per worker hardware and stack)
  std::string stack = "auto";        // engine stack of the measured profile (configs/profile_catalog.h)
  double estimate_noise = 0;         // σ of the log-normal error of the policies' estimates (0 to 10)
  double time_scale = 1;             // the engine's iteration times x this (0.1 to 10); policies estimate unscaled
  ProfileFitsCache fits;             // fitted profiles by resolved path (not compared: a cache)

  bool operator==(const CostModelConfig&) const = default;
};

// Attention methods (costmodel/attention_method.h): prefill dense|minference,
// decode dense|quest, kv none|andpro, with their parameters.
using AttentionConfig = AttentionMethods;

// One worker's resolved hardware, attention and KV capacity.
struct WorkerConfig {
  HardwareSpec hardware;
  AttentionConfig attention;
  KvCapacity kv;
  std::string profile;  // calibrated backend: the resolved profile path of this worker
  KvTiersConfig kv_tiers;  // kv_cache: lower KV tiers (configs/kv_tiers_config.h)
  int tp = 1;           // GPUs of this worker (its pool's tp)
  std::size_t pool = 0; // index into ScenarioConfig::pools (0 without pools)

  // By value: workers that compare equal are priced and sized identically.
  bool operator==(const WorkerConfig&) const = default;
};

// cluster.pools (docs/configuration.md, "Pools and PD disaggregation"): a
// named group of workers with a role; its keys default to the scenario's.
enum class PoolRole : std::uint8_t { kMixed, kPrefill, kDecode };
std::string pool_role_name(PoolRole r);

struct PoolConfig {
  std::string name;
  PoolRole role = PoolRole::kMixed;
  std::int64_t workers = 1;
  int tp = 1;
  HardwareSpec hardware;
  AttentionConfig attention;
  BatchingOptions batching;
  std::optional<ParsedPolicy<LocalPolicy>> local_policy;  // none: the scenario's policy.local
  KvTiersConfig kv_tiers;  // kv_cache: the pool's lower KV tiers (default: the scenario's)
  bool operator==(const PoolConfig&) const = default;
};

// cluster.pd: how requests move between prefill and decode pools.
enum class PdLink : std::uint8_t { kRdma, kNvlink };  // the links a KV transfer uses

// cluster.pd (schema: pd_options() in option_tables.h).
struct PdConfig {
  PdLink link = PdLink::kRdma;
  PdDecider decider = PdDecider::kAlways;
  std::int64_t threshold_tokens = 0;  // prefix_aware: prefill on the decode worker when uncached <= this
  PdStreaming streaming = PdStreaming::kNone;  // layerwise: the transfer overlaps the final prefill iteration
  bool operator==(const PdConfig&) const = default;
};

// For each worker, the index of the first worker equal to it by value (its
// own index when it is the first of its kind): workers with the same
// representative can share one cost model. Buckets by hardware name and
// compares within a bucket with ==, so a 100000-worker cluster stays cheap.
std::vector<std::size_t> first_equal_worker(const std::vector<WorkerConfig>& workers);

// report.timeline_interval_s: 0 (off) or 1 ms .. 1 day (docs/configuration.md).
inline constexpr double kMinTimelineIntervalS = 1e-3;
inline constexpr double kMaxTimelineIntervalS = 86400;

// batching: memory keys: how much of each GPU the KV cache gets, and its page.
struct MemoryOptions {
  double memory_utilization = 0.9;  // share of GPU memory the engine may use
  double activation_reserve_gb = 2.0;
  std::int64_t page_size = 16;
  bool operator==(const MemoryOptions&) const = default;
};

// report: where the outputs go and what they weigh and sample.
struct ReportConfig {
  std::string out_dir = "runs/default";
  double w_in = kDefaultWIn, w_out = kDefaultWOut;  // service weights (VTC's measure)
  bool write_requests = true;
  Time timeline_interval = kNsPerSec;  // timeline.csv sampling; 0 = off
  bool operator==(const ReportConfig&) const = default;
};

struct ScenarioConfig {
  // The scenario file it came from: provenance (error messages, relative paths,
  // already resolved into the compared members). Not compared.
  Uncompared<std::string> file;
  std::string name;
  std::uint64_t seed = 1;
  std::optional<Time> horizon;
  ModelSpec model;
  HardwareSpec hardware;            // default for workers without an override
  AttentionConfig attention;        // default for workers without an override
  int tp = 1;
  BatchingOptions batching;
  MemoryOptions memory;             // batching: memory keys
  std::vector<WorkerConfig> workers;
  KvTiersConfig kv_tiers;           // kv_cache: default for workers without an override
  // cluster.pools; empty: cluster.workers/tp/overrides, one mixed pool (and no PD).
  std::vector<PoolConfig> pools;
  PdConfig pd;
  KvStoreConfig kv_store;           // cluster.kv_store: the cluster-wide KV store (configs/kv_store_config.h)
  ParsedPolicy<LocalPolicy> local_policy;
  ParsedPolicy<GlobalPolicy> global_policy;
  ParsedPolicy<GlobalPolicy> decode_global_policy;  // PD: picks the decode worker
  // True when some pool has the prefill or decode role (requests are handed off).
  bool disaggregated() const;
  CostModelConfig cost_model;
  SharedResolved<Workload> workload;  // compared by its resolved YAML
  ReportConfig report;              // report: (but window)
  WindowOptions window;             // report.window: the measurement window (none set: the whole run)
  SloConfig slo;                    // slo: latency thresholds, per-client overrides (none set: no SLO)
  VarianceConfig variance;          // variance: sources of variance for repetitions (resolved; none by default)

  // The exact configuration as YAML (defaults filled in, seeds included):
  // parse_scenario(resolved()) == *this, and a run of it reproduces this
  // run's output files byte for byte. A worker is written as an override
  // whenever its hardware or attention differs by value from the defaults.
  YAML::Node resolved() const;

  // The same run by value, member by member: `file` is provenance (not compared);
  // the policies and the workload are compared by their resolved YAML.
  bool operator==(const ScenarioConfig&) const = default;
};

// Loads `path`, applies `--set key.path=value` overrides in order, parses.
ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& set_overrides);
// Parses an already-loaded tree (`file` is used in error messages and to
// resolve relative paths).
ScenarioConfig parse_scenario(const YAML::Node& root, const std::string& file);

// Where configs/models and configs/hardware are found: $SERVESIM_CONFIG_DIR,
// else the source tree's configs/ folder.
std::string config_dir();

// A hardware file by name (configs/hardware/<name>.yaml, case-insensitive) or
// path, as a scenario's `hardware:` key reads it (`servesim calibrate fit-roofline`).
HardwareSpec load_hardware_named(const std::string& name_or_path);

// Where measured kernel profiles are found: $SERVESIM_PROFILE_DIR, else the
// source tree's costmodel/profiles/ folder; a GPU's profile is
// <profile_dir>/<lowercased hardware name>/profile.csv.
std::string profile_dir();

}  // namespace servesim
