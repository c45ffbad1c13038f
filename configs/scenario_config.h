// ScenarioConfig: a scenario YAML file (plus `--set` overrides) parsed into
// typed structs with defaults. Loaded once, passed down by const reference.
// Every key is documented in docs/configuration.md; unknown keys, wrong types,
// unknown names (model, hardware, policy, backend) and impossible settings (a
// model that does not fit the GPU) are InputErrors naming file, line and key.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "costmodel/fixed_cost_model.h"
#include "costmodel/hardware_spec.h"
#include "costmodel/kv_capacity.h"
#include "costmodel/model_spec.h"
#include "costmodel/roofline_cost_model.h"
#include "policies/policy_registry.h"
#include "sim/batching_options.h"
#include "traces/workload.h"

namespace servesim {

struct CostModelConfig {
  std::string backend = "roofline";  // roofline | fixed
  RooflineOptions roofline;          // tp is filled from the cluster
  FixedCostOptions fixed;
};

struct AttentionConfig {
  std::string prefill = "dense";
  std::string decode = "dense";
};

// One worker's resolved hardware, attention and KV capacity.
struct WorkerConfig {
  HardwareSpec hardware;
  AttentionConfig attention;
  KvCapacity kv;
};

struct ScenarioConfig {
  std::string file;                 // the scenario file it came from
  std::string name;
  std::uint64_t seed = 1;
  std::optional<Time> horizon;
  ModelSpec model;
  HardwareSpec hardware;            // default for workers without an override
  int tp = 1;
  BatchingOptions batching;
  double memory_utilization = 0.9;  // share of GPU memory the engine may use
  double activation_reserve_gb = 2.0;
  std::int64_t page_size = 16;
  std::vector<WorkerConfig> workers;
  ParsedPolicy<LocalPolicy> local_policy;
  ParsedPolicy<GlobalPolicy> global_policy;
  CostModelConfig cost_model;
  std::shared_ptr<const Workload> workload;
  std::string out_dir = "runs/default";
  double w_in = 1.0, w_out = 2.0;   // service weights (VTC's measure)
  bool write_requests = true;

  // The exact configuration as YAML (defaults filled in, seeds included).
  YAML::Node resolved() const;
};

// Loads `path`, applies `--set key.path=value` overrides in order, parses.
ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& set_overrides);
// Parses an already-loaded tree (`file` is used in error messages and to
// resolve relative paths).
ScenarioConfig parse_scenario(const YAML::Node& root, const std::string& file);

// Where configs/models and configs/hardware are found: $SERVESIM_CONFIG_DIR,
// else the source tree's configs/ folder.
std::string config_dir();

}  // namespace servesim
