// The schema of every scenario options struct that configs/ owns, as
// OptionTables (option_table.h): scenario_options() is the file's top level (one
// row per section, scenario_options.cc), and each section's row reads and writes
// its keys through the tables below. parse_scenario() and resolved() follow them;
// option_tables_test.cc checks docs/configuration.md against them (every key
// listed, with its default) and walks the documented scenario's keys back to them.
//
// Custom rows (option_table.h) hold the keys the plain columns cannot state: a
// name, path or inline map (model, hardware), a registry name with parameters
// (policy_options(), attention_options()), a derived default (report.out:
// runs/<name>), a list (cluster.overrides, cluster.pools). `variance:` has its
// table in traces/variance_source.h, beside VarianceConfig; the workload types'
// keys theirs in traces/. The policies' parameters have their
// tables next to each options struct in policies/ (listed by
// policies/policy_registry.h's PolicyType::params); the attention methods'
// parameters next to each method's pricer in costmodel/ (listed by
// costmodel/attention_registry.h's AttentionMethodType::params).
#pragma once
#include "sim/core/option_table.h"
#include "configs/scenario_config.h"

namespace servesim {

const OptionTable<ScenarioConfig>& scenario_options();      // the top level: name, seed, horizon_s, then one row per section
const OptionTable<ScenarioConfig>& policy_options();        // policy: local, global, decode_global (custom rows)
const OptionTable<AttentionConfig>& attention_options();    // attention: method names (registry), parameter maps
const OptionTable<ModelSpec>& model_options();              // model: (after name)
const OptionTable<HardwareSpec>& hardware_options();        // hardware: (after name; interconnect nested last)
const OptionTable<InterconnectSpec>& interconnect_options(); // hardware.interconnect: (KV transfer links)
const OptionTable<BatchingOptions>& batching_options();     // batching: budgets
const OptionTable<BatchingOptions>& batching_mode_options(); // batching: mode (written after the memory keys)
const OptionTable<ScenarioConfig>& cluster_options();       // cluster: workers, tp, overrides, pools, pd, kv_store (custom rows)
const OptionTable<PoolConfig>& pool_options();              // cluster.pools[i]: role, workers, tp
const OptionTable<PoolConfig>& pool_item_options();         // cluster.pools[i]: name, pool_options(), the inherited keys
const OptionTable<WorkerConfig>& override_options();        // cluster.overrides[i]: (after worker) hardware, attention, kv_cache
const OptionTable<PdConfig>& pd_options();                  // cluster.pd:
const OptionTable<MemoryOptions>& memory_options();         // batching: memory keys
const OptionTable<RooflineOptions>& roofline_options();     // cost_model: (roofline, and auto)
const OptionTable<CalibratedOptions>& calibrated_options(); // cost_model: (calibrated, and auto)
const OptionTable<CostModelConfig>& profile_options();      // cost_model: profile (calibrated, and auto)
const OptionTable<FixedCostOptions>& fixed_options();       // cost_model: (fixed)
const OptionTable<CostModelConfig>& cost_model_options();   // cost_model: backend, stack, estimate_noise, time_scale (every backend)
const OptionTable<ScenarioConfig>& report_section_options(); // report: out, report_options(), window
const OptionTable<ReportConfig>& report_options();          // report: (after out)
const OptionTable<WindowOptions>& window_options();         // report.window:
const OptionTable<ScenarioConfig>& slo_section_options();   // slo: slo_options(), clients
const OptionTable<SloThresholds>& slo_options();            // slo: and slo.clients.<name>:
const OptionTable<KvTierSpec>& kv_tier_options();           // kv_cache.host: and kv_cache.ssd:
const OptionTable<KvTiersConfig>& kv_cache_options();       // kv_cache: (host and ssd nested, overlap)

}  // namespace servesim
