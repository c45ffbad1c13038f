// Sensitivity of a run's results to the cost model's per-iteration error
// (`servesim run --sensitivity PCT`): the scenario run again with every iteration
// PCT % faster and PCT % slower than priced (cost_model.time_scale times 1 -/+ PCT/100;
// policies estimate unscaled), same seed, and each headline metric compared with the
// base run. A scenario near saturation amplifies a 1 % error many times
// (docs/costmodel.md, "How a per-iteration error reaches end-to-end latencies"); this
// says by how much for the user's own scenario, next to the validated error.
//
// The two extra runs write their folders to a scratch directory that is removed
// afterwards; only sensitivity.csv joins the base run's folder:
//   metric,stat,value,faster,slower,change_faster,change_slower
// (values in the summary's units; change = (x - value) / value; empty where a metric is
// undefined).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "configs/run_builder.h"
#include "configs/scenario_config.h"

namespace servesim {

struct SensitivityRow {
  std::string metric, stat;
  std::optional<double> value, faster, slower;
};

struct SensitivityResult {
  double pct = 0;
  double faster_scale = 1, slower_scale = 1;  // the two runs' cost_model.time_scale
  std::vector<SensitivityRow> rows;
};

// Runs the two extra runs of `c` and compares them with `base` (c's own run).
// InputError when pct is outside (0, 20] or a scaled time_scale leaves [0.1, 10].
SensitivityResult run_sensitivity(const ScenarioConfig& c, const RunOutput& base, double pct);

std::string sensitivity_csv(const SensitivityResult& s);

}  // namespace servesim
