// `servesim calibrate fidelity REPLAY.csv [--scenario S.yaml [--set k=v ...]] [--out DIR]`
// prints the per-iteration error of every backend that predicted the
// replayed iterations (median / p90 / max absolute relative error, overall, by iteration
// kind, by batch size; costmodel/replay_fidelity.h), and with --scenario the end-to-end
// effect: the scenario run on its own backend and again with the measured iteration
// times substituted (MeasuredCostModel), mean and p99 TTFT, TPOT and E2E compared.
// Writes DIR/fidelity.csv, DIR/iterations.csv (each iteration's measured time, predictions
// and signed errors) (and DIR/e2e.csv, DIR/predicted/, DIR/measured/ with
// --scenario). Method: docs/costmodel.md, "Fidelity against real execution".
#include <filesystem>
#include <map>
#include <tuple>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "configs/run_builder.h"
#include "costmodel/replay_fidelity.h"
#include "reports/output_dir.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"

namespace servesim::cli {
namespace {

struct FidelityArgs {
  std::string replay;
  std::string scenario;
  std::vector<std::string> sets;
  std::string out;
};

// Adds predicted_<backend>_us columns: the scenario's roofline and calibrated backends
// re-price every replayed shape (worker 0's hardware and attention); the calibrated one's
// split by part goes to iterations.csv. A backend the
// scenario cannot build (calibrated without a profile) is skipped with a note.
void add_scenario_backends(ReplayTable& t, const FidelityArgs& a) {
  for (const char* backend : {"roofline", "calibrated"}) {
    std::vector<std::string> sets = a.sets;
    sets.push_back(fmt::format("cost_model.backend={}", backend));
    std::shared_ptr<const CostModel> model;
    try {
      const ScenarioConfig c = load_scenario(a.scenario, sets);
      model = make_cost_model(c, c.workers.front());
    } catch (const InputError& e) {
      fmt::print("  {}: not available for this scenario ({})\n", backend, e.what());
      continue;
    }
    t.backends.push_back(backend);
    const bool split = std::string_view(backend) == "calibrated";  // iterations.csv splits its predictions by part
    if (split) t.parts_backend = backend;
    for (ReplayRow& r : t.rows) {
      const PartTimes p = model->parts(r.shape);
      // The GPU's share: the replay measures the forward pass, not the host's time.
      r.predicted_us.push_back(time_to_seconds(model->iteration_time(r.shape)) * 1e6 -
                               p[static_cast<std::size_t>(Part::kOverhead)]);
      if (split) r.parts_us.assign(p.begin(), p.end());
    }
  }
}

void print_errors(const std::vector<ErrorSummary>& s) {
  fmt::print("per-iteration |predicted - measured| / measured (signed: median of (predicted - measured) / measured; "
             "meas/pred: sum of measured / sum of predicted):\n");
  fmt::print("  {:<12} {:<13} {:<14} {:>10} {:>8} {:>8} {:>8} {:>8} {:>9}\n", "backend", "group_by", "group",
             "iterations", "median", "p90", "max", "signed", "meas/pred");
  for (const ErrorSummary& e : s)
    fmt::print("  {:<12} {:<13} {:<14} {:>10} {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>+7.2f}% {:>9.4f}\n", e.backend, e.group_by,
               e.group, e.iterations, 100 * e.median, 100 * e.p90, 100 * e.max, 100 * e.signed_median,
               e.measured_over_predicted);
}

void run_end_to_end(const ReplayTable& t, const FidelityArgs& a) {
  const ScenarioConfig c = load_scenario(a.scenario, a.sets);
  const RunOutput predicted = execute_run(c, RunOptions{a.out + "/predicted", false});
  std::map<const CostModel*, std::shared_ptr<const MeasuredCostModel>> subs;
  RunOptions mo{a.out + "/measured", false};
  mo.substitute_cost = [&](std::shared_ptr<const CostModel> inner) -> std::shared_ptr<const CostModel> {
    auto& s = subs[inner.get()];
    if (!s) s = std::make_shared<MeasuredCostModel>(inner, t);
    return s;
  };
  const RunOutput measured = execute_run(c, mo);
  std::int64_t hits = 0, misses = 0;
  for (const auto& [k, s] : subs) {
    hits += s->measured_hits();
    misses += s->scaled_misses();
  }
  const MeasuredCostModel& any = *subs.begin()->second;
  fmt::print("end to end ({}): the scenario on its backend ({}) vs with measured iteration times\n", c.name,
             predicted.cost_identity);
  fmt::print("  substituted run: {} iterations at their measured time, {} at the prediction x the ratio of their kind "
             "(prefill_heavy {:.4f}, decode_only {:.4f}, mixed {:.4f})\n",
             hits, misses, any.ratio(IterationKind::kPrefillHeavy), any.ratio(IterationKind::kDecodeOnly),
             any.ratio(IterationKind::kMixed));
  std::string csv = "metric,stat,predicted_s,measured_s,rel_diff\n";
  fmt::print("  {:<6} {:<5} {:>14} {:>14} {:>9}\n", "metric", "stat", "predicted (ms)", "measured (ms)", "diff");
  const std::tuple<const char*, const LatencySummary*, const LatencySummary*> metrics[] = {
      {"ttft", &predicted.values.ttft, &measured.values.ttft},
      {"tpot", &predicted.values.tpot, &measured.values.tpot},
      {"e2e", &predicted.values.e2e, &measured.values.e2e}};
  for (const auto& [name, p, m] : metrics)
    for (const auto& [stat, pv, mv] : {std::tuple{"mean", p->mean, m->mean}, std::tuple{"p99", p->p99, m->p99}}) {
      const bool both = pv && mv && *mv > 0;
      const std::string diff = both ? fmt::format("{:.6f}", (*pv - *mv) / *mv) : "";
      csv += fmt::format("{},{},{},{},{}\n", name, stat, pv ? fmt::format("{:.6f}", *pv) : "",
                         mv ? fmt::format("{:.6f}", *mv) : "", diff);
      fmt::print("  {:<6} {:<5} {:>14} {:>14} {:>9}\n", name, stat, pv ? fmt::format("{:.2f}", *pv * 1e3) : "-",
                 mv ? fmt::format("{:.2f}", *mv * 1e3) : "-",
                 both ? fmt::format("{:+.2f}%", 100 * (*pv - *mv) / *mv) : "-");
    }
  write_file(a.out + "/e2e.csv", csv);
}

}  // namespace

void add_fidelity_command(CLI::App& calibrate) {
  auto a = std::make_shared<FidelityArgs>();
  CLI::App* f = calibrate.add_subcommand(
      "fidelity", "Per-iteration error of the cost model against a GPU replay (servesim-kernels replay), and its "
                  "end-to-end effect with --scenario");
  f->add_option("replay", a->replay, "Replay CSV written by servesim-kernels replay")->required();
  f->add_option("--scenario", a->scenario, "The scenario that was recorded: adds its roofline and calibrated "
                                           "predictions, and compares it end to end with the measured times substituted")
      ->check(CLI::ExistingFile);
  f->add_option("-s,--set", a->sets, "Override a scenario key (as in `servesim run`)")->take_all();
  f->add_option("-o,--out", a->out, "Output folder (default: fidelity/ beside the replay CSV)");
  f->callback([a] {
    ReplayTable t = read_replay_csv(a->replay);
    if (a->out.empty()) {
      const auto parent = std::filesystem::path(a->replay).parent_path();
      a->out = (parent.empty() ? std::filesystem::path("fidelity") : parent / "fidelity").string();
    }
    fmt::print("servesim calibrate fidelity: {} ({} replayed iterations)\n", a->replay, t.rows.size());
    if (!a->scenario.empty()) add_scenario_backends(t, *a);
    const std::vector<ErrorSummary> s = summarise_errors(t);
    print_errors(s);
    OutputLock lock(a->out);
    remove_outputs(a->out, {kDoneMarker, "fidelity.csv", "iterations.csv", "e2e.csv"});
    write_file(a->out + "/fidelity.csv", error_summary_csv(s));
    write_file(a->out + "/iterations.csv", iteration_table_csv(t));
    if (!a->scenario.empty()) run_end_to_end(t, *a);
    write_file(a->out + "/" + kDoneMarker, "");
    fmt::print("  output     {}/fidelity.csv, iterations.csv{}\n", a->out, a->scenario.empty() ? "" : ", e2e.csv, predicted/, measured/");
  });
}

}  // namespace servesim::cli
