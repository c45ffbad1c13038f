// The scenario's top level as one option table, scenario_options(): every key of a
// scenario file is a row here, or a row of a table a row reads (docs/configuration.md;
// option_tables_test.cc walks them). parse_scenario() reads it, resolved() writes it,
// both in row order, except kv_cache, which is read first (pools and overrides inherit
// it) and written after the cluster. Also the tables of the report and slo sections.
#include <filesystem>

#include <fmt/format.h>

#include "configs/cost_noise.h"
#include "configs/kv_tiers_config.h"
#include "configs/option_tables.h"
#include "configs/scenario_sections.h"

namespace servesim {

namespace {

using C = ScenarioConfig;
using R = OptionRange;

// Absent: no horizon (written back only when set). 1e9 s (31.7 years) keeps the horizon in
// int64 nanoseconds with room for what follows it (1e10 wrapped to -9.2e9 s).
OptionCustom<C> horizon_row() {
  OptionCustom<C> row = custom<C>(
      [](YamlMap& m, const char* key, C& c) {
        if (auto h = m.optional<double>(key)) {
          if (!(*h > 0 && *h <= kOptionMax)) m.fail(key, fmt::format("must be in (0, {:.0e}] s, got {}", kOptionMax, *h));
          c.horizon = seconds_to_time(*h);
        }
      },
      [](const C& c) { return YAML::Node(time_to_seconds(*c.horizon)); });
  row.written = [](const C& c) { return c.horizon.has_value(); };
  return row;
}

OptionCustom<C> batching_row() {
  return section<C>(
      [](YamlMap& b, C& c) {
        read_options(b, batching_options(), c.batching);
        read_options(b, memory_options(), c.memory);
        read_options(b, batching_mode_options(), c.batching);
      },
      [](const C& c) {
        YAML::Node b(YAML::NodeType::Map);
        write_options(b, batching_options(), c.batching);
        write_options(b, memory_options(), c.memory);
        write_options(b, batching_mode_options(), c.batching);
        return b;
      });
}

// Absent or unchanged: not written, so a scenario without tiers resolves as before.
OptionCustom<C> scenario_kv_cache_row() {
  OptionCustom<C> row = kv_cache_row<C>();
  row.written = [](const C& c) { return c.kv_tiers != KvTiersConfig{}; };
  row.read_first = true;
  return row;
}

// The pools' local policies are checked against policy.global's required one.
OptionCustom<C> policy_row() {
  return section<C>(
      [](YamlMap& pm, C& c) {
        read_options(pm, policy_options(), c);
        check_pool_policies(pm, c);
      },
      [](const C& c) {
        YAML::Node n(YAML::NodeType::Map);
        write_options(n, policy_options(), c);
        return n;
      });
}

// Required; its type's keys are the workload registry's (traces/).
OptionCustom<C> workload_row() {
  return custom<C>(
      [](YamlMap& m, const char* key, C& c) {
        YamlMap wm = m.map(key);
        if (!m.has(key)) m.fail_here(fmt::format("missing required section '{}'", key));
        c.workload = parse_workload(wm);
      },
      [](const C& c) { return c.workload->resolved(); });
}

// After the workload (a trace resamples by default when repeated) and the cost model
// (cost_noise: profile reads the workers' profiles). Written only when set.
OptionCustom<C> variance_row() {
  OptionCustom<C> row = custom<C>(
      [](YamlMap& m, const char* key, C& c) {
        YamlMap vm = m.map(key);
        c.variance = parse_variance(vm);
        c.variance.resolve(c.workload->resolved()["type"].as<std::string>("") == "trace");
        resolve_cost_noise(vm, c);
      },
      [](const C& c) { return variance_yaml(c.variance); });
  row.written = [](const C& c) { return c.variance.active(); };
  return row;
}

OptionCustom<C> slo_row() {
  OptionCustom<C> row = section_of<C>(slo_section_options);
  row.written = [](const C& c) { return c.slo.any() || !c.slo.clients.empty(); };
  return row;
}

}  // namespace

const OptionTable<ScenarioConfig>& scenario_options() {
  static const OptionTable<C> t = {
      // Default: the scenario file's name.
      {"name", custom<C>([](YamlMap& m, const char* key,
                            C& c) { c.name = m.get<std::string>(key, std::filesystem::path(c.file.value).stem().string()); },
                         [](const C& c) { return YAML::Node(c.name); }),
       R::kAny, "run name; default the file's name (and the output folder runs/<name>)"},
      // An unsigned 64-bit integer (the plain integer columns are signed).
      {"seed", custom<C>([](YamlMap& m, const char* key, C& c) { c.seed = m.get<std::uint64_t>(key, c.seed); },
                         [](const C& c) { return YAML::Node(c.seed); }),
       R::kAny, "seeds every random choice"},
      // Absent: no horizon (see horizon_row).
      {"horizon_s", horizon_row(), R::kAny, "stop here; in-flight requests are reported unfinished"},
      // A name, a path or an inline map: not one table's shape (the map's keys: model_options()).
      {"model", custom<C>([](YamlMap& m, const char* key, C& c) { c.model = load_model(m, key, "llama-3-8b"); },
                          [](const C& c) { return model_node(c.model); }),
       R::kAny, "configs/models/<name>.yaml, a path ending in .yaml, or an inline map"},
      // The same for hardware (the map's keys: hardware_options()).
      {"hardware", custom<C>([](YamlMap& m, const char* key, C& c) { c.hardware = load_hardware(m, key, "h100-sxm"); },
                             [](const C& c) { return hardware_node(c.hardware); }),
       R::kAny, "configs/hardware/<name>.yaml, a path, or an inline map"},
      // attention_options() over the default methods; pools and overrides read it over the scenario's.
      {"attention", attention_row<C>(), R::kAny, "attention methods per phase and their parameters (per worker overridable)"},
      // Three tables over two structs (the memory keys size the KV cache, the rest the batch).
      {"batching", batching_row(), R::kAny, "iteration budgets, memory and batching mode"},
      // cluster_options(); sizing each worker needs the model, hardware, attention and memory keys.
      {"cluster", custom<C>([](YamlMap& m, const char*, C& c) { parse_cluster(m, c); }, cluster_node), R::kAny, "workers (or pools), PD and the cluster KV store"},
      {"kv_cache", scenario_kv_cache_row(), R::kAny, "tiered KV cache below each worker's HBM prefix cache"},
      {"policy", policy_row(), R::kAny, "local and global scheduling policies"},
      // Per worker: needs the cluster (each worker's profile and speeds).
      {"cost_model", custom<C>([](YamlMap& m, const char*, C& c) { parse_cost_model(m, c); }, cost_model_node), R::kAny, "how iterations are priced"},
      {"workload", workload_row(), R::kAny, "the requests (required)"},
      {"report", section_of<C>(report_section_options), R::kAny, "output folder, service weights, window"},
      {"slo", slo_row(), R::kAny, "latency SLOs, scenario-wide and per client"},
      {"variance", variance_row(), R::kAny, "what repetitions vary"},
  };
  return t;
}

// report: out (default runs/<name>), then report_options(), then window (both sides by
// time or by count, not both; written only when set).
const OptionTable<ScenarioConfig>& report_section_options() {
  static const OptionTable<C> t = [] {
    OptionTable<C> rows = {
        {"out", custom<C>([](YamlMap& m, const char* key,
                             C& c) { c.report.out_dir = m.get<std::string>(key, "runs/" + c.name); },
                          [](const C& c) { return YAML::Node(c.report.out_dir); }),
         R::kAny, "output folder (the CLI's --out wins); default runs/<name>"},
    };
    for (OptionField<C>& f : lift(&C::report, report_options())) rows.push_back(std::move(f));
    OptionCustom<C> window = section<C>(
        [](YamlMap& wm, C& c) {
          read_options(wm, window_options(), c.window);
          if (c.window.warmup > 0 && c.window.warmup_requests > 0)
            wm.fail("warmup_requests", "set warmup_s or warmup_requests, not both");
          if (c.window.cooldown > 0 && c.window.cooldown_requests > 0)
            wm.fail("cooldown_requests", "set cooldown_s or cooldown_requests, not both");
        },
        [](const C& c) {
          YAML::Node w(YAML::NodeType::Map);
          write_options(w, window_options(), c.window);
          return w;
        });
    window.written = [](const C& c) { return c.window.set(); };
    rows.push_back({"window", std::move(window), R::kAny, "the measurement window of summary.csv"});
    return rows;
  }();
  return t;
}

// slo: slo_options() scenario-wide, then clients: {NAME: {...}}: a client's map replaces
// the keys it sets, the others stay the scenario-wide ones.
const OptionTable<ScenarioConfig>& slo_section_options() {
  static const OptionTable<C> t = [] {
    OptionTable<C> rows = lift_with<C, SloThresholds>([](C& c) -> SloThresholds& { return c.slo.all; },
                                                      [](const C& c) -> const SloThresholds& { return c.slo.all; },
                                                      slo_options());
    OptionCustom<C> clients = section<C>(
        [](YamlMap& cm, C& c) {
          for (const auto& kv : cm.node()) {
            const std::string name = kv.first.as<std::string>();
            YamlMap one = cm.map(name);
            SloThresholds own = c.slo.all;
            read_options(one, slo_options(), own);
            one.finish();
            c.slo.clients[name] = own;
          }
        },
        [](const C& c) {
          YAML::Node n(YAML::NodeType::Map);
          for (const auto& [client, own] : c.slo.clients) {
            YAML::Node one;
            write_options(one, slo_options(), own);
            n[client] = one;
          }
          return n;
        });
    clients.written = [](const C& c) { return !c.slo.clients.empty(); };
    rows.push_back({"clients", std::move(clients), R::kAny, "per-client overrides by client name"});
    return rows;
  }();
  return t;
}

}  // namespace servesim
