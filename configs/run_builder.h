// execute_run: THE wiring function. It is the only place that turns a
// ScenarioConfig into concrete objects (workload source, cost models,
// policies, workers, report writers), runs the simulation and writes the run
// folder: requests.csv, clients.csv, workers.csv, summary.csv and
// config.resolved.yaml.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "configs/scenario_config.h"
#include "reports/run_report.h"

namespace servesim {

struct RunOptions {
  std::string out_dir;    // empty: the scenario's report.out
  bool progress = true;   // progress bar on stderr when it is a terminal
  bool explain = false;   // split busy time by cost-model part: explain.csv (docs/costmodel.md)
  std::string record_batches = {};  // non-empty: the batch record file (reports/batch_recorder.h, docs/reports.md)
  std::int64_t record_every = 1;    // record every k-th iteration
  // When set, each worker's engine cost model is replaced by substitute_cost(model)
  // (`calibrate fidelity`: measured iteration times); policies keep the plain model.
  std::function<std::shared_ptr<const CostModel>(std::shared_ptr<const CostModel>)> substitute_cost = {};
  // Requests read ahead and reported requests' own work (requests.csv rows,
  // latency samples) on two helper threads, beside the engine
  // (traces/read_ahead_source.h, reports/ordered_handoff.h); false: all on the
  // calling thread. The outputs are the same either way.
  bool background = true;
};

// One row of explain.csv: a part of the operation list and the busy time the
// engine's cost model charged to it over the run, all workers together.
struct ExplainRow {
  std::string part;
  double busy_s = 0;
  double share = 0;  // of the run's priced busy time
};

struct RunOutput {
  std::string out_dir;
  SummaryFields summary;  // summary.csv's columns as written
  SummaryValues values;   // the run-wide values of summary.csv, typed
  SimulationTotals totals;
  std::vector<WorkerStats> workers;
  std::vector<KvCapacity> capacities;
  std::string cost_identity;
  bool calibrated = false;
  std::vector<ExplainRow> explain;  // RunOptions::explain only; parts with busy time, in operation order
};

RunOutput execute_run(const ScenarioConfig& config, const RunOptions& options);

// A policy as summary.csv's policy_local / policy_global show it: its name,
// and its parameters from the resolved YAML in order, `dlpm(quantum=2097152)`
// (a policy without parameters: its bare name).
std::string policy_label(const YAML::Node& resolved);

// Builds the cost model of one worker (also used by policies needing estimates).
std::shared_ptr<const CostModel> make_cost_model(const ScenarioConfig& c, const WorkerConfig& w);

}  // namespace servesim
