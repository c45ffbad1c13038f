// `servesim trace stats FILE` and `servesim trace gen SCENARIO.yaml -o OUT`:
// thin wrappers over traces/readers/trace_stats.h and traces/native_writer.h.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "configs/scenario_config.h"
#include "sim/cli/commands.h"
#include "traces/native_writer.h"
#include "traces/readers/trace_reader.h"
#include "traces/readers/trace_stats.h"

namespace servesim::cli {
namespace {

struct StatsArgs {
  std::string file;
  std::string format = "auto";
  bool skip_bad_rows = false;
  bool sort = false;
};

struct GenArgs {
  std::string scenario;
  std::string out;
  std::vector<std::string> sets;
};

}  // namespace

void add_trace_commands(CLI::App& app) {
  CLI::App* trace = app.add_subcommand("trace", "Inspect trace files and write workloads as traces");
  trace->require_subcommand(1);

  auto sa = std::make_shared<StatsArgs>();
  CLI::App* stats = trace->add_subcommand(
      "stats", "Rows, span, rate, burstiness, length percentiles, clients and ideal prefix hit rate of a trace");
  stats->add_option("file", sa->file, "Trace file (" + trace_format_choices() + ": CSV or JSONL)")->required();
  stats->add_option("-f,--format", sa->format,
                    "auto (from extension and header), " + trace_format_choices());
  stats->add_flag("--skip-bad-rows", sa->skip_bad_rows, "Skip and count bad rows instead of stopping at the first");
  stats->add_flag("--sort", sa->sort, "Sort rows by arrival in memory instead of rejecting decreasing timestamps");
  stats->callback([sa] {
    TraceReadOptions opt;
    opt.format = parse_format(sa->format, sa->file);
    opt.skip_bad_rows = sa->skip_bad_rows;
    opt.sort = sa->sort;
    TraceStats st = compute_trace_stats(sa->file, opt);
    fmt::print("{}", format_trace_stats(st));
    for (const std::string& w : st.warnings) fmt::print(stderr, "servesim: warning: {}: {}\n", sa->file, w);
  });

  auto ga = std::make_shared<GenArgs>();
  CLI::App* gen = trace->add_subcommand(
      "gen", "Write a scenario's workload in the native trace format (.csv or .jsonl) for exact replay");
  gen->add_option("scenario", ga->scenario, "Scenario YAML file")->required()->check(CLI::ExistingFile);
  gen->add_option("-o,--out", ga->out, "Output file: .csv or .jsonl")->required();
  gen->add_option("-s,--set", ga->sets, "Override a config key, e.g. --set workload.requests=1000")
      ->take_all()
      ->allow_extra_args(false);
  gen->callback([ga] {
    ScenarioConfig c = load_scenario(ga->scenario, ga->sets);
    ClientTable clients;
    // The stream a run of this scenario replays, its `variance:` sources included (a
    // resampled or jittered trace is written as it would run).
    auto source = with_variance(c.workload->open(clients, c.seed), c.variance, c.seed);
    std::int64_t n = write_native_trace(*source, clients, ga->out);
    fmt::print("wrote {} requests from {} clients to {} (seed {}; replay with workload: {{type: trace, path: {}}})\n",
               n, clients.size(), ga->out, c.seed, ga->out);
  });
}

}  // namespace servesim::cli
