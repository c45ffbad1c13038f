#include "configs/run_builder.h"

#include <filesystem>
#include <fstream>

#include "reports/progress.h"
#include "traces/synthetic_workload.h"
#include "sim/simulation.h"

namespace servesim {
namespace {

// Forwards engine callbacks to the report and the progress bar.
class RunObservers final : public RunObserver {
 public:
  RunObservers(RunReport& report, ProgressBar* progress) : report_(report), progress_(progress) {}
  void on_request(const RequestOutcome& r) override { report_.on_request(r); }
  void on_progress(Time now, std::uint64_t reported, std::uint64_t) override {
    if (progress_) progress_->update(now, reported);
  }

 private:
  RunReport& report_;
  ProgressBar* progress_;
};

void write_resolved(const ScenarioConfig& c, const std::string& dir) {
  YAML::Emitter e;
  e << c.resolved();
  std::ofstream out(dir + "/config.resolved.yaml");
  out << "# The exact configuration of this run (defaults filled in, seed included).\n"
      << "# Re-run it with: servesim run <this file>\n"
      << e.c_str() << "\n";
  if (!out) throw InputError(fmt::format("{}/config.resolved.yaml: write failed", dir));
}

}  // namespace

std::shared_ptr<const CostModel> make_cost_model(const ScenarioConfig& c, const WorkerConfig& w) {
  if (c.cost_model.backend == "fixed") return std::make_shared<FixedCostModel>(c.cost_model.fixed);
  return std::make_shared<RooflineCostModel>(c.model, w.hardware, c.cost_model.roofline);
}

RunOutput execute_run(const ScenarioConfig& c, const RunOptions& o) {
  RunOutput out;
  out.out_dir = o.out_dir.empty() ? c.out_dir : o.out_dir;
  std::error_code ec;
  std::filesystem::create_directories(out.out_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create output folder: {}", out.out_dir, ec.message()));
  write_resolved(c, out.out_dir);

  ClientTable clients;
  std::unique_ptr<RequestSource> source = c.workload->open(clients, c.seed);

  SimulationSetup setup;
  setup.max_context = c.model.max_context;
  setup.horizon = c.horizon;
  PolicyContext pctx{c.workers.size(), c.seed};
  setup.global = c.global_policy.make(pctx);
  std::shared_ptr<const CostModel> shared_cost;  // one instance for all workers on the default hardware
  for (const WorkerConfig& w : c.workers) {
    WorkerSetup ws;
    ws.policy = c.local_policy.make(pctx);
    bool default_hw = w.hardware.name == c.hardware.name;
    if (default_hw && !shared_cost) shared_cost = make_cost_model(c, w);
    ws.cost = default_hw ? shared_cost : make_cost_model(c, w);
    ws.batching = c.batching;
    ws.kv_capacity_pages = w.kv.pages;
    ws.page_size = c.page_size;
    out.capacities.push_back(w.kv);
    setup.workers.push_back(std::move(ws));
  }
  out.cost_identity = setup.workers.front().cost->identity();
  out.calibrated = setup.workers.front().cost->calibrated();

  RunReport report(ReportOptions{out.out_dir, c.w_in, c.w_out, c.write_requests});
  std::optional<std::uint64_t> total;
  if (auto* s = dynamic_cast<const SyntheticWorkload*>(c.workload.get()); s && !s->spec().duration_s)
    total = s->spec().requests;
  ProgressBar progress(total);
  RunObservers observers(report, o.progress ? &progress : nullptr);
  Simulation sim(std::move(setup), *source, observers);
  out.totals = sim.run();
  if (o.progress) progress.update(out.totals.end_time, out.totals.requests, true);
  for (const auto& w : sim.worker_list()) out.workers.push_back(w->stats());

  SummaryFields identity = {
      {"scenario", c.name},
      {"seed", std::to_string(c.seed)},
      {"model", c.model.name},
      {"hardware", c.hardware.name},
      {"workers", std::to_string(c.workers.size())},
      {"tp", std::to_string(c.tp)},
      {"policy_local", c.local_policy.resolved["name"].as<std::string>()},
      {"policy_global", c.global_policy.resolved["name"].as<std::string>()},
      {"oracle", c.local_policy.oracle || c.global_policy.oracle ? "true" : "false"},
      {"batching_mode", c.batching.mode == BatchMode::kMixed ? "mixed" : "prefill_first"},
      {"cost_model", out.cost_identity},
      {"calibrated", out.calibrated ? "true" : "false"},
  };
  out.summary = report.finish(clients, out.totals, out.workers, identity);
  return out;
}

}  // namespace servesim
