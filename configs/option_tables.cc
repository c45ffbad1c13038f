// The option tables; see option_tables.h. Row order is the order keys are
// written to config.resolved.yaml.
#include "configs/option_tables.h"

#include <fmt/format.h>

#include "costmodel/roofline_knobs.h"
#include "costmodel/attention_registry.h"
#include "policies/policy_registry.h"

namespace servesim {

using R = OptionRange;

// kMinHardware and kMinFraction (costmodel/roofline_knobs.h): floors of the positive
// hardware and roofline numbers that a cost is divided by (docs/configuration.md,
// "Ranges"): a peak of 1e-300 would make an iteration time overflow.

const OptionTable<ModelSpec>& model_options() {
  static const OptionTable<ModelSpec> t = {
      {"layers", &ModelSpec::layers, R::kPositive, "decoder layers", 1e4},
      {"hidden", &ModelSpec::hidden, R::kPositive, "model dimension", 1e6},
      {"heads", &ModelSpec::heads, R::kPositive, "query heads", 1e5},
      {"kv_heads", &ModelSpec::kv_heads, R::kPositive, "key/value heads (GQA); divides heads", 1e5},
      {"head_dim", &ModelSpec::head_dim, R::kPositive, "dimension of one head", 1e5},
      {"intermediate", &ModelSpec::intermediate, R::kPositive, "MLP hidden size", 1e7},
      {"vocab", &ModelSpec::vocab, R::kPositive, "vocabulary size", 1e8},
      {"max_context", &ModelSpec::max_context, R::kPositive, "longest prompt + output the model accepts"},
      {"tie_embeddings", &ModelSpec::tie_embeddings, R::kAny, "LM head shares the embedding matrix"},
      {"weight_bytes", &ModelSpec::weight_bytes, R::kPositive, "bytes per weight (2 = bf16)", 16},
      {"kv_bytes", &ModelSpec::kv_bytes, R::kPositive, "bytes per KV element (2 = bf16)", 16},
  };
  return t;
}

// The datasheet rows, the roofline knobs (roofline_knobs.h: one list) and the host and
// PD links; the order is the write order of config.resolved.yaml.
const OptionTable<HardwareSpec>& hardware_options() {
  static const OptionTable<HardwareSpec> t = [] {
    OptionTable<HardwareSpec> rows = {
      {"memory_gb", &HardwareSpec::memory_gb, R::kPositive, "HBM capacity, GB", 1e6, kMinHardware},
      {"mem_bandwidth_gbps", &HardwareSpec::mem_bandwidth_gbps, R::kPositive, "HBM bandwidth, GB/s (datasheet)",
       kOptionMax, kMinHardware},
      {"bf16_tflops", &HardwareSpec::bf16_tflops, R::kPositive, "dense bf16 tensor peak, TFLOP/s (datasheet)",
       kOptionMax, kMinHardware},
      {"tp_allreduce_gbps", &HardwareSpec::tp_allreduce_gbps, R::kPositive,
       "per-direction NVLink bandwidth of the TP all-reduce, GB/s", kOptionMax, kMinHardware},
    };
    const OptionTable<HardwareSpec>& knobs = roofline_knob_options();
    rows.insert(rows.end(), knobs.begin(), knobs.end());
    rows.push_back({"pcie_gbps", &HardwareSpec::pcie_gbps, R::kPositive,
                    "per-direction host link bandwidth per GPU, GB/s (default of the kv_cache host tier)", kOptionMax,
                    kMinHardware});
    rows.push_back({"interconnect", nested(&HardwareSpec::interconnect, &interconnect_options), R::kAny,
                    "the links a KV transfer can use (map; not the TP all-reduce)"});
    return rows;
  }();
  return t;
}

const OptionTable<InterconnectSpec>& interconnect_options() {
  static const OptionTable<InterconnectSpec> t = {
      {"nvlink_gbps", &InterconnectSpec::nvlink_gbps, R::kPositive, "NVLink bandwidth per GPU and direction, GB/s (PD KV transfer)",
       kOptionMax, kMinHardware},
      {"nvlink_latency_us", &InterconnectSpec::nvlink_latency_us, R::kNonNegative, "fixed latency of one NVLink KV transfer, us",
       1e6},
      {"rdma_nic_gbps", &InterconnectSpec::rdma_nic_gbps, R::kPositive, "RDMA NIC bandwidth per GPU and direction, GB/s (PD KV transfer)",
       kOptionMax, kMinHardware},
      {"rdma_latency_us", &InterconnectSpec::rdma_latency_us, R::kNonNegative, "fixed latency of one RDMA KV transfer, us", 1e6},
  };
  return t;
}

const OptionTable<BatchingOptions>& batching_options() {
  static const OptionTable<BatchingOptions> t = {
      {"max_batch_tokens", &BatchingOptions::max_batch_tokens, R::kPositive,
       "tokens per iteration (decode tokens + prefill chunks)"},
      {"chunk_size", &BatchingOptions::chunk_size, R::kPositive, "most prefill tokens of one request per iteration"},
      {"max_running", &BatchingOptions::max_running, R::kPositive, "most admitted requests at once"},
      {"reservation_ratio", &BatchingOptions::reservation_ratio, R::kFractionOrZero,
       "share of KV kept free when admitting while others run"},
  };
  return t;
}

const OptionTable<BatchingOptions>& batching_mode_options() {
  static const OptionTable<BatchingOptions> t = {
      {"mode", one_of(&BatchingOptions::mode, "batching mode", {"mixed", "prefill_first"}), R::kAny,
       "mixed: decode tokens and prefill chunks in one iteration; prefill_first: prefills alone when any fits"},
  };
  return t;
}

const OptionTable<PoolConfig>& pool_options() {
  static const OptionTable<PoolConfig> t = {
      {"role", one_of(&PoolConfig::role, "pool role", {"mixed", "prefill", "decode"}), R::kAny,
       "prefill: hands every request off at its first token; decode: receives KV; mixed: both"},
      {"workers", &PoolConfig::workers, R::kPositive, "workers of this pool (numbered pool by pool)"},
      {"tp", &PoolConfig::tp, R::kPositive, "GPUs per worker of this pool"},
  };
  return t;
}

const OptionTable<PdConfig>& pd_options() {
  static const OptionTable<PdConfig> t = {
      {"link", one_of(&PdConfig::link, "link", {"rdma", "nvlink"}), R::kAny, "the links a KV transfer uses"},
      {"decider", one_of(&PdConfig::decider, "decider", {"always", "prefix_aware"}), R::kAny,
       "where a request is prefilled"},
      {"threshold_tokens", &PdConfig::threshold_tokens, R::kNonNegative,
       "prefix_aware: prefill on the decode worker when its uncached prompt is at most this", kOptionMax, 0,
       [](const PdConfig& p) { return p.decider == PdDecider::kPrefixAware; }},
      {"streaming", one_of(&PdConfig::streaming, "streaming", {"none", "layerwise"}), R::kAny,
       "layerwise: the KV transfer overlaps the final prefill iteration", kOptionMax, 0,
       // none is not written: config.resolved.yaml resolves as before the key existed
       [](const PdConfig& p) { return p.streaming != PdStreaming::kNone; }},
  };
  return t;
}

const OptionTable<MemoryOptions>& memory_options() {
  static const OptionTable<MemoryOptions> t = {
      {"memory_utilization", &MemoryOptions::memory_utilization, R::kFraction,
       "share of GPU memory the engine may use"},
      {"activation_reserve_gb", &MemoryOptions::activation_reserve_gb, R::kNonNegative,
       "per GPU, kept for activations (not KV)", 1e6},
      {"page_size", &MemoryOptions::page_size, R::kPositive, "tokens per KV page", 1e6},
  };
  return t;
}

const OptionTable<RooflineOptions>& roofline_options() {
  static const OptionTable<RooflineOptions> t = {
      {"model", one_of(&RooflineOptions::model, "roofline model", {"hardware", "flat"}), R::kAny,
       "hardware (per-part efficiencies of the hardware file) | flat (one efficiency pair, before c8eba2e)"},
      {"cuda_graph_decode", &RooflineOptions::cuda_graph_decode, R::kAny,
       "decode-only iterations replay a CUDA graph (one launch, no per-kernel launch cost)"},
      {"knobs", &RooflineOptions::knobs, R::kAny,
       "YAML of hardware knob keys (servesim calibrate fit-roofline) applied over every worker's hardware"},
      {"compute_efficiency", &RooflineOptions::compute_efficiency, R::kFraction,
       "flat model: achieved / peak tensor FLOP/s", kOptionMax, kMinFraction},
      {"memory_efficiency", &RooflineOptions::memory_efficiency, R::kFraction,
       "flat model: achieved / peak HBM bandwidth", kOptionMax, kMinFraction},
      {"iteration_overhead_us", &RooflineOptions::iteration_overhead_us, R::kNonNegative,
       "host/scheduler time per iteration", 1e6},
      {"kernels_per_layer", &RooflineOptions::kernels_per_layer, R::kNonNegative,
       "flat model: launches per layer, x hardware.kernel_launch_us", 1e4},
  };
  return t;
}

const OptionTable<CalibratedOptions>& calibrated_options() {
  static const OptionTable<CalibratedOptions> t = {
      {"iteration_overhead_us", &CalibratedOptions::iteration_overhead_us, R::kNonNegative,
       "host/scheduler time per iteration", 1e6},
      {"layer_overhead_us", &CalibratedOptions::layer_overhead_us, R::kNonNegative,
       "per layer, launches the bench does not measure", 1e6},
      {"allreduce_latency_us", &CalibratedOptions::allreduce_latency_us, R::kNonNegative,
       "per TP all-reduce (plus bytes / hardware tp_allreduce_gbps)", 1e6},
      {"allow_scaling", &CalibratedOptions::allow_scaling, R::kAny,
       "price unmeasured head/GEMM shapes by the scaling rules (false: error)"},
      {"launch_excess", one_of(&CalibratedOptions::launch_excess, "launch excess", {"auto", "none", "measured"}),
       R::kAny, "measured: take the profile's launch excess (ceilings launch_* rows) off every row-priced kernel; "
                "auto: where the profile has those rows"},
      {"decode_attention", one_of(&CalibratedOptions::decode_attention, "decode pricing", {"auto", "fit", "rows"}),
       R::kAny, "rows: dense decode from the profile's uniform decode rows (the fit outside them; x its measured ragged "
                "factor where it has decode_ragged pairs); auto: rows where they exist and the launch excess is taken "
                "off, else the fit"},
  };
  return t;
}

// The calibrated backend's profile (read with calibrated's keys; written before stack).
const OptionTable<CostModelConfig>& profile_options() {
  static const OptionTable<CostModelConfig> t = {
      {"profile", &CostModelConfig::profile, R::kAny,
       "a profile CSV (relative to the scenario file), or auto: the stack's profile of each worker's hardware"},
  };
  return t;
}

// Each cost at most 10^6 of its unit (1000 s, 1 s per token): no overflow of simulated time.
const char* backend_name(CostBackend b) { return kCostBackendNames[static_cast<std::size_t>(b)].data(); }

const OptionTable<CostModelConfig>& cost_model_options() {
  using C = CostModelConfig;
  static const OptionTable<C> t = {
      {"backend", one_of(&C::backend, "cost model backend", kCostBackendNames), R::kAny,
       "auto: calibrated where a measured profile of every worker's GPU exists, else roofline"},
      {"stack", &C::stack, R::kAny, "engine stack of the measured profile (servesim calibrate list)", kOptionMax, 0,
       [](const C& c) { return c.backend == CostBackend::kCalibrated && c.stack != "auto"; }},
      {"estimate_noise", &C::estimate_noise, R::kNonNegative,
       "σ of the log-normal error of the global policies' cost estimates", 10},
      {"time_scale", &C::time_scale, R::kPositive,
       "every iteration the engine runs takes this times the cost model's price (policies estimate unscaled): "
       "how sensitive the results are to the model's per-iteration error",
       10, 0.1, [](const C& c) { return c.time_scale != 1; }},
  };
  return t;
}

const OptionTable<FixedCostOptions>& fixed_options() {
  static const OptionTable<FixedCostOptions> t = {
      {"base_ms", millis(&FixedCostOptions::base), R::kPositive, "fixed cost of every iteration, ms", 1e6},
      {"per_prefill_token_us", micros(&FixedCostOptions::per_prefill_token), R::kNonNegative,
       "cost of each prefill token, us", 1e6},
      {"per_decode_token_us", micros(&FixedCostOptions::per_decode_token), R::kNonNegative,
       "cost of each decode token, us", 1e6},
  };
  return t;
}

const OptionTable<ReportConfig>& report_options() {
  static const OptionTable<ReportConfig> t = {
      {"w_in", &ReportConfig::w_in, R::kNonNegative, "service weight per input token (VTC's measure)", 1e6},
      {"w_out", &ReportConfig::w_out, R::kNonNegative, "service weight per output token", 1e6},
      {"requests_csv", &ReportConfig::write_requests, R::kAny, "false: skip requests.csv for very large runs"},
      {"timeline_interval_s", seconds(&ReportConfig::timeline_interval), R::kNonNegative,
       "timeline.csv and client_service.csv sampling, s; 0 turns them off", kMaxTimelineIntervalS,
       kMinTimelineIntervalS},
  };
  return t;
}

const OptionTable<WindowOptions>& window_options() {
  static const OptionTable<WindowOptions> t = {
      {"warmup_s", seconds(&WindowOptions::warmup), R::kNonNegative,
       "exclude requests arriving in the first warmup_s after the first arrival"},
      {"cooldown_s", seconds(&WindowOptions::cooldown), R::kNonNegative,
       "exclude requests arriving in the last cooldown_s before the run's end"},
      {"warmup_requests", &WindowOptions::warmup_requests, R::kNonNegative,
       "or: exclude the first warmup_requests arrivals"},
      {"cooldown_requests", &WindowOptions::cooldown_requests, R::kNonNegative,
       "or: exclude the last cooldown_requests arrivals"},
  };
  return t;
}

const OptionTable<SloThresholds>& slo_options() {
  static const OptionTable<SloThresholds> t = {
      {"ttft_s", &SloThresholds::ttft_s, R::kNonNegative, "time to first token threshold, s (0 = none)", 1e6},
      {"tpot_s", &SloThresholds::tpot_s, R::kNonNegative, "time per output token threshold, s (0 = none)", 1e6},
      {"e2e_s", &SloThresholds::e2e_s, R::kNonNegative, "end-to-end latency threshold, s (0 = none)", 1e6},
  };
  return t;
}

const OptionTable<KvTierSpec>& kv_tier_options() {
  static const OptionTable<KvTierSpec> t = {
      {"capacity_gb", &KvTierSpec::capacity_gb, R::kNonNegative, "per worker, GB; 0 = no tier", 1e9},
      {"bandwidth_gbps", &KvTierSpec::bandwidth_gbps, R::kNonNegative,
       "load bandwidth to HBM, GB/s; host: 0 = tp x hardware pcie_gbps", 1e6, 1e-3},
      {"latency_us", &KvTierSpec::latency_us, R::kNonNegative, "fixed cost of one request's load from the tier, us",
       1e9},
  };
  return t;
}

// policy: each key a name of the policy registry with its parameters (the policy's own
// table), read by the registry and written back as the resolved map.
const OptionTable<ScenarioConfig>& policy_options() {
  using C = ScenarioConfig;
  static const OptionTable<C> t = [] {
    OptionTable<C> rows = {
        {"local",
         custom<C>([](YamlMap& m, const char* key, C& c) { c.local_policy = parse_local_policy(m, key, "fcfs"); },
                   [](const C& c) { return c.local_policy.resolved; }),
         R::kAny, "the local policy of every worker (a pool's policy.local replaces it)"},
        {"global",
         custom<C>(
             [](YamlMap& m, const char* key, C& c) {
               c.global_policy = parse_global_policy(m, key, "round_robin");
               if (const std::string& need = c.global_policy.requires_local;
                   !need.empty() && c.local_policy.resolved["name"].as<std::string>() != need)
                 m.fail("local", fmt::format("global policy '{}' runs with local policy '{}' on every worker; "
                                             "set local: {}",
                                             c.global_policy.resolved["name"].as<std::string>(), need, need));
             },
             [](const C& c) { return c.global_policy.resolved; }),
         R::kAny, "routes each arriving request to a worker"},
    };
    OptionCustom<C> decode = custom<C>(
        [](YamlMap& m, const char* key, C& c) {
          if (m.has(key) && !c.disaggregated())
            m.fail(key, "policy.decode_global needs cluster.pools with a pool of role prefill or decode");
          c.decode_global_policy = parse_global_policy(m, key, "least_outstanding");
          if (!c.decode_global_policy.requires_local.empty())
            m.fail(key, fmt::format("global policy '{}' needs local policy '{}' and cannot pick decode workers",
                                    c.decode_global_policy.resolved["name"].as<std::string>(),
                                    c.decode_global_policy.requires_local));
        },
        [](const C& c) { return c.decode_global_policy.resolved; });
    decode.written = [](const C& c) { return c.disaggregated(); };
    rows.push_back({"decode_global", decode, R::kAny, "PD: picks the decode worker of a handed-off request"});
    return rows;
  }();
  return t;
}

// attention: the three method keys, then one parameter map per method that has
// parameters (quest, minference, andpro), read and written by the method's registry
// entry (costmodel/attention_registry.h). Whether the profile measured what a method
// needs is checked by the cost model.
const OptionTable<AttentionConfig>& attention_options() {
  using A = AttentionConfig;
  static const OptionTable<A> t = [] {
    OptionTable<A> rows = {
        {"prefill", one_of(&A::prefill, "attention method", kPrefillMethodNames), R::kAny, "prefill attention method"},
        {"decode", one_of(&A::decode, "attention method", kDecodeMethodNames), R::kAny, "decode attention method"},
        {"kv", one_of(&A::kv, "attention method", kKvMethodNames), R::kAny, "KV method (eviction after prefill)"},
    };
    for (const AttentionMethodType& type : attention_method_types()) {
      if (type.params_key.empty()) continue;
      const AttentionMethodType* tp = &type;  // the registry is static: the pointer and its key outlive the table
      rows.push_back({tp->params_key.c_str(), section<A>([tp](YamlMap& pm, A& a) { tp->parse(pm, a); },
                                                        [tp](const A& a) {
                                                          YAML::Node p;
                                                          tp->write(p, a);
                                                          return p;
                                                        }),
                      R::kAny, "the method's parameters"});
    }
    return rows;
  }();
  return t;
}

const OptionTable<KvTiersConfig>& kv_cache_options() {
  static const OptionTable<KvTiersConfig> t = {
      {"host", nested(&KvTiersConfig::host, kv_tier_options), R::kAny, "host-memory tier below HBM"},
      {"ssd", nested(&KvTiersConfig::ssd, kv_tier_options), R::kAny, "SSD tier below the host tier"},
      {"overlap", &KvTiersConfig::overlap, R::kAny, "true: the admitting iteration takes max(compute, loads); false: compute + loads"},
  };
  return t;
}

}  // namespace servesim
