// execute_run: THE wiring function. It is the only place that turns a
// ScenarioConfig into concrete objects (workload source, cost models,
// policies, workers, report writers), runs the simulation and writes the run
// folder: requests.csv, clients.csv, workers.csv, summary.csv and
// config.resolved.yaml.
#pragma once
#include <string>
#include <vector>

#include "configs/scenario_config.h"
#include "reports/run_report.h"

namespace servesim {

struct RunOptions {
  std::string out_dir;    // empty: the scenario's report.out
  bool progress = true;   // progress bar on stderr when it is a terminal
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
};

RunOutput execute_run(const ScenarioConfig& config, const RunOptions& options);

// Builds the cost model of one worker (also used by policies needing estimates).
std::shared_ptr<const CostModel> make_cost_model(const ScenarioConfig& c, const WorkerConfig& w);

}  // namespace servesim
