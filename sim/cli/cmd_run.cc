// `servesim run SCENARIO.yaml [--out DIR] [--set key.path=value ...] [--repeat N [--jobs J]]`:
// runs one scenario, writes its run folder, prints a one-screen summary and
// the run's warnings (reports/run_warnings.h; stderr under --quiet). With
// --repeat N (N >= 2) it runs the scenario N times with repetition seeds, as
// a sweep of one point (configs/sweep_spec.h repeat_sweep): a sweep folder
// with sweep.csv and sweep_summary.csv, the mean ± 95% interval printed, and
// a warning when the repetitions are identical (no interval then).
#include <filesystem>
#include <set>
#include <fmt/format.h>

#include "configs/cost_noise.h"
#include "configs/run_builder.h"
#include "configs/sensitivity.h"
#include "configs/sweep_runner.h"
#include "reports/compare.h"
#include "reports/csv_reader.h"
#include "reports/sweep_summary.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"
#include "sim/core/output_file.h"

namespace servesim::cli {
namespace {

struct RunArgs {
  std::string scenario;
  std::string out;
  std::vector<std::string> sets;
  bool quiet = false;
  bool explain = false;
  std::string record_batches;
  std::int64_t record_every = 1;
  std::size_t repeat = 1;
  int jobs = 1;
  double sensitivity_pct = 0;  // > 0: --sensitivity
};

std::string describe_variance(const ScenarioConfig& c) {
  const VarianceConfig& v = c.variance;
  std::string s;
  if (v.resample == VarianceConfig::Resample::kBlockBootstrap)
    s = fmt::format("trace resampled (block bootstrap, {} s blocks)", v.block_s);
  if (v.arrival_jitter > 0) s += fmt::format("{}arrival jitter {}", s.empty() ? "" : ", ", v.arrival_jitter);
  if (v.output_noise > 0) s += fmt::format("{}output noise {}", s.empty() ? "" : ", ", v.output_noise);
  if (v.cost_noise_on()) {
    std::set<double> sigmas;
    for (const WorkerConfig& w : c.workers) sigmas.insert(cost_noise_sigma(c, w));
    std::string list;
    for (double x : sigmas) list += fmt::format("{}{:.4g}", list.empty() ? "" : "/", x);
    s += fmt::format("{}cost noise sigma={} ({})", s.empty() ? "" : ", ", list,
                     v.cost_noise == VarianceConfig::CostNoise::kProfile ? "the profile's p10/p90 spread" : "given");
  }
  return (s.empty() ? std::string("the seed only") : s) + " (variance:, docs/sweeps.md \"Sources of variance\")";
}

// --repeat N: the runs as a sweep of one point, then its aggregate and warnings.
void run_repeated(const RunArgs& a) {
  const ScenarioConfig c = load_scenario(a.scenario, a.sets);
  const std::string out = a.out.empty() ? fmt::format("{}-x{}", c.report.out_dir, a.repeat) : a.out;
  if (std::filesystem::exists(std::filesystem::path(out) / "summary.csv"))
    throw InputError(fmt::format("{}: holds a single run (summary.csv); --repeat writes a folder of repetitions, "
                                 "choose another --out",
                                 out));
  const SweepSpec spec = repeat_sweep(a.scenario, c.name, a.repeat);
  const SweepOutcome r = run_sweep(spec, SweepOptions{out, a.jobs, "", a.sets, !a.quiet});
  if (!r.failures.empty()) {
    for (const auto& f : r.failures) fmt::print(stderr, "  failed: {}\n", f);
    throw InputError(fmt::format("{} of {} repetitions failed", r.failures.size(), r.selected));
  }
  std::FILE* to = a.quiet ? stderr : stdout;
  if (!a.quiet) {
    fmt::print("servesim run: {} x{} (seeds from {}; {} ran, {} already done)\n", c.name, a.repeat, c.seed, r.ran,
               r.skipped);
    std::vector<std::string> sets = a.sets;
    sets.insert(sets.begin(), "variance.repetitions=true");
    fmt::print("  variance   {}\n", describe_variance(load_scenario(a.scenario, sets)));
    print_sweep_comparison(out);
    fmt::print("  output     {}/sweep.csv (one row per run), sweep_summary.csv (mean, std, 95% CI)\n", out);
  }
  const CsvTable sum = read_csv(out + "/sweep_summary.csv");
  if (const int w = sum.column("warnings"); w >= 0)
    for (const auto& row : sum.rows)
      if (!row[w].empty()) fmt::print(to, "warning: {}\n", row[w]);
}

void print_summary(const ScenarioConfig& c, const RunOutput& r) {
  const SummaryValues& v = r.values;
  auto ms = [](const std::optional<double>& s) { return s ? fmt::format("{:.1f}", *s * 1e3) : std::string("-"); };
  fmt::print("servesim run: {}  (seed {})\n", c.name, c.seed);
  if (c.pools.empty()) {
    fmt::print("  model      {} on {} x{} (tp={}), KV {:.1f} GB = {} tokens per worker\n", c.model.name,
               c.hardware.name, c.workers.size(), c.tp, r.capacities.front().kv_gb, r.capacities.front().tokens());
  } else {
    // One line per pool: pools differ in hardware, tp and so KV capacity.
    fmt::print("  model      {} on {} workers in {} pools\n", c.model.name, c.workers.size(), c.pools.size());
    for (std::size_t i = 0; i < c.workers.size(); ++i) {
      if (i > 0 && c.workers[i].pool == c.workers[i - 1].pool) continue;  // a pool's first worker speaks for it
      const auto& pool = c.pools[c.workers[i].pool];
      fmt::print("  pool       {} ({}): {} x{} (tp={}), KV {:.1f} GB = {} tokens per worker\n", pool.name,
                 pool_role_name(pool.role), pool.hardware.name, pool.workers, pool.tp, r.capacities[i].kv_gb,
                 r.capacities[i].tokens());
    }
  }
  fmt::print("  policies   local={} global={}  batching={}\n", policy_label(c.local_policy.resolved),
             policy_label(c.global_policy.resolved),
             c.batching.mode == BatchMode::kMixed ? "mixed" : "prefill_first");
  fmt::print("  cost model {}\n", r.cost_identity);
  fmt::print("  requests   {} total: {} finished, {} rejected, {} unfinished, {} not arrived\n", v.requests, v.finished,
             v.rejected, v.unfinished, v.not_arrived);
  fmt::print("  span       {:.1f} s simulated, {} events\n", v.duration_s, v.events);
  fmt::print("  throughput {:.2f} req/s, {:.0f} input tok/s, {:.0f} output tok/s\n", v.throughput_rps,
             v.input_tokens_per_s, v.output_tokens_per_s);
  fmt::print("  latency (ms)      mean      p50      p90      p99\n");
  const std::pair<const char*, const LatencySummary*> metrics[] = {
      {"ttft", &v.ttft}, {"tpot", &v.tpot}, {"e2e", &v.e2e}, {"queue", &v.queue}};
  for (const auto& [name, l] : metrics)
    fmt::print("    {:<6} {:>12} {:>8} {:>8} {:>8}\n", name, ms(l->mean), ms(l->p50), ms(l->p90), ms(l->p99));
  fmt::print("  cache hit  {:.1f}%   preemptions {}\n", 100 * v.cache_hit_rate, v.preemptions);
  if (c.window.set())
    fmt::print("  window     arrivals {:.3f} .. {:.3f} s: {} requests, {} finished (metrics above cover these)\n",
               v.window_start_s, v.window_end_s, v.window_requests, v.window_finished);
  if (v.slo_attainment)
    fmt::print("  SLO        {} requests met every threshold ({:.1f}% attainment); goodput {:.2f} req/s, {:.0f} output "
               "tok/s\n",
               v.slo_met.value_or(0), 100 * *v.slo_attainment, *v.goodput_rps, *v.goodput_output_tokens_per_s);
  std::string files;
  for (const char* f : {"requests", "clients", "workers", "summary", "timeline", "client_service", "explain"})
    if (std::filesystem::exists(r.out_dir + "/" + f + ".csv")) files += (files.empty() ? "" : ",") + std::string(f);
  fmt::print("  output     {}/{{{}}}.csv, summary.json, config.resolved.yaml\n", r.out_dir, files);
  if (r.explain.empty()) return;
  fmt::print("  busy time by part (cost model{}):\n", r.calibrated ? "" : ", uncalibrated");
  for (const ExplainRow& e : r.explain) fmt::print("    {:<18} {:>10.3f} s {:>6.1f}%\n", e.part, e.busy_s, 100 * e.share);
}

// One line per headline metric: its change at every iteration PCT % faster / slower.
void print_sensitivity(const SensitivityResult& s) {
  fmt::print("  sensitivity: every iteration {}% faster / slower than priced (cost_model.time_scale {} / {}):\n", s.pct,
             s.faster_scale, s.slower_scale);
  for (const SensitivityRow& r : s.rows) {
    if (!(r.stat.empty() || r.stat == "mean" || r.stat == "p99") || !r.value || *r.value == 0) continue;
    auto pct = [&](const std::optional<double>& x) {
      return x ? fmt::format("{:+.1f}%", 100 * (*x - *r.value) / *r.value) : std::string("-");
    };
    fmt::print("    {:<22} {:>8} / {:>8}\n", r.stat.empty() ? r.metric : r.metric + " " + r.stat, pct(r.faster),
               pct(r.slower));
  }
  fmt::print("  output     sensitivity.csv\n");
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Run one scenario and write its run folder");
  run->add_option("scenario", args->scenario, "Scenario YAML file")->required()->check(CLI::ExistingFile);
  run->add_option("-o,--out", args->out, "Output folder (default: the scenario's report.out)");
  run->add_option("-s,--set", args->sets,
                  "Override a config key, following the YAML path: --set policy.local=fcfs --set cluster.workers=4")
      ->take_all()
      ->allow_extra_args(false);
  run->add_flag("-q,--quiet", args->quiet, "Print nothing on stdout");
  run->add_flag("--explain", args->explain,
                "Split the workers' busy time by cost-model part (norms, QKV, attention, ...): explain.csv");
  CLI::Option* record = run->add_option("--record-batches", args->record_batches,
                                        "Write every iteration's batch shape and predicted cost by part to FILE "
                                        "(docs/reports.md, \"Batch record\")");
  run->add_option("--record-every", args->record_every, "With --record-batches: record every K-th iteration only")
      ->needs(record);
  run->add_option("--sensitivity", args->sensitivity_pct,
                  "Also run the scenario with every iteration PCT % faster and slower than priced "
                  "(cost_model.time_scale): how much the results move with the cost model's error; sensitivity.csv")
      ->check(CLI::Range(0.0, 20.0));
  CLI::Option* repeat =
      run->add_option("-r,--repeat", args->repeat,
                      "Run N repetitions with their own seeds (and, for a trace, resampled: variance.resample auto); "
                      "writes a sweep folder, default <out>-x<N>, and prints mean ± 95% CI")
          ->check(CLI::Range(static_cast<std::size_t>(1), kMaxRepeat));
  run->add_option("-j,--jobs", args->jobs, "With --repeat: repetitions run in parallel (results do not depend on it)")
      ->check(CLI::Range(1, 1024))
      ->needs(repeat);
  run->callback([args] {
    if (args->repeat > 1) {
      if (!args->record_batches.empty() || args->explain || args->sensitivity_pct > 0)
        throw InputError("--repeat runs several runs: --record-batches, --explain and --sensitivity take one run");
      run_repeated(*args);
      return;
    }
    ScenarioConfig c = load_scenario(args->scenario, args->sets);
    // A sweep's point folder belongs to its sweep: a foreign run there would be trusted
    // by the sweep's next resume (point.yaml's key, the run's files).
    const std::string out = args->out.empty() ? c.report.out_dir : args->out;
    if (std::filesystem::exists(std::filesystem::path(out) / "point.yaml"))
      throw InputError(fmt::format("{}: is a point of a sweep (it holds point.yaml); `servesim sweep` writes it, choose "
                                   "another --out",
                                   out));
    RunOutput r = execute_run(c, RunOptions{args->out, true, args->explain, args->record_batches, args->record_every});
    if (!args->quiet) print_summary(c, r);
    if (args->sensitivity_pct > 0) {
      const SensitivityResult s = run_sensitivity(c, r, args->sensitivity_pct);
      write_file(r.out_dir + "/sensitivity.csv", sensitivity_csv(s));
      if (!args->quiet) print_sensitivity(s);
    }
    // Warnings go to stdout with the summary (stdout carries no data), to
    // stderr under --quiet: never lost.
    // An error-level warning (its text starts "error: ") is printed as such.
    for (const std::string& w : r.values.warnings)
      fmt::print(args->quiet ? stderr : stdout, "{}{}\n", w.starts_with("error: ") ? "" : "warning: ", w);
  });
}

}  // namespace servesim::cli
