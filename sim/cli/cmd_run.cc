// `servesim run SCENARIO.yaml [--out DIR] [--set key.path=value ...]`:
// runs one scenario, writes its run folder, prints a one-screen summary.
#include <filesystem>
#include <fmt/format.h>

#include "configs/run_builder.h"
#include "sim/cli/commands.h"

namespace servesim::cli {
namespace {

struct RunArgs {
  std::string scenario;
  std::string out;
  std::vector<std::string> sets;
  bool quiet = false;
};

std::string value_of(const SummaryFields& f, const std::string& key) {
  for (const auto& [k, v] : f)
    if (k == key) return v;
  return "";
}

void print_summary(const ScenarioConfig& c, const RunOutput& r) {
  const auto& s = r.summary;
  auto ms = [&](const std::string& k) {
    std::string v = value_of(s, k);
    return v.empty() ? std::string("-") : fmt::format("{:.1f}", std::stod(v) * 1e3);
  };
  fmt::print("servesim run: {}  (seed {})\n", c.name, c.seed);
  fmt::print("  model      {} on {} x{} (tp={}), KV {:.1f} GB = {} tokens per worker\n", c.model.name,
             c.hardware.name, c.workers.size(), c.tp, r.capacities.front().kv_gb, r.capacities.front().tokens());
  fmt::print("  policies   local={} global={}  batching={}\n", value_of(s, "policy_local"),
             value_of(s, "policy_global"), value_of(s, "batching_mode"));
  fmt::print("  cost model {}\n", r.cost_identity);
  fmt::print("  requests   {} total: {} finished, {} rejected, {} unfinished, {} not arrived\n",
             value_of(s, "requests"), value_of(s, "finished"), value_of(s, "rejected"), value_of(s, "unfinished"),
             value_of(s, "not_arrived"));
  fmt::print("  span       {:.1f} s simulated, {} events\n", std::stod(value_of(s, "duration_s")),
             value_of(s, "events"));
  fmt::print("  throughput {:.2f} req/s, {:.0f} input tok/s, {:.0f} output tok/s\n",
             std::stod(value_of(s, "throughput_rps")), std::stod(value_of(s, "input_tokens_per_s")),
             std::stod(value_of(s, "output_tokens_per_s")));
  fmt::print("  latency (ms)      mean      p50      p90      p99\n");
  for (const char* m : {"ttft", "tpot", "e2e", "queue"})
    fmt::print("    {:<6} {:>12} {:>8} {:>8} {:>8}\n", m, ms(fmt::format("{}_mean_s", m)), ms(fmt::format("{}_p50_s", m)),
               ms(fmt::format("{}_p90_s", m)), ms(fmt::format("{}_p99_s", m)));
  fmt::print("  cache hit  {:.1f}%   preemptions {}\n", 100 * std::stod(value_of(s, "cache_hit_rate")),
             value_of(s, "preemptions"));
  std::string files;
  for (const char* f : {"requests", "clients", "workers", "summary", "timeline", "client_service"})
    if (std::filesystem::exists(r.out_dir + "/" + f + ".csv")) files += (files.empty() ? "" : ",") + std::string(f);
  fmt::print("  output     {}/{{{}}}.csv, config.resolved.yaml\n", r.out_dir, files);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Run one scenario and write its run folder");
  run->add_option("scenario", args->scenario, "Scenario YAML file")->required();
  run->add_option("-o,--out", args->out, "Output folder (default: the scenario's report.out)");
  run->add_option("-s,--set", args->sets,
                  "Override a config key, following the YAML path: --set policy.local=fcfs --set cluster.workers=4")
      ->take_all()
      ->allow_extra_args(false);
  run->add_flag("-q,--quiet", args->quiet, "Print nothing on stdout");
  run->callback([args] {
    ScenarioConfig c = load_scenario(args->scenario, args->sets);
    RunOutput r = execute_run(c, RunOptions{args->out, true});
    if (!args->quiet) print_summary(c, r);
  });
}

}  // namespace servesim::cli
