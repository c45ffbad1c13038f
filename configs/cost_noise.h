// variance.cost_noise against the cost model (traces/variance_source.h has the
// key's meaning). Lives in configs/ because it needs the resolved backend and
// each worker's fitted profile.
//
// resolve_cost_noise: `auto` becomes `profile` for repetitions when the
// backend is calibrated and every worker's profile has a measured spread
// (KernelFits::spread_sigma() > 0), else `none`; `profile` without such a
// profile is an InputError at variance.cost_noise naming the profile.
// cost_noise_sigma: the σ the engine's NoisyCostModel uses for worker `w`
// (0 = no noise). Call after the cost model and the workers are resolved.
#pragma once
#include "configs/scenario_config.h"
#include "sim/core/yaml_map.h"

namespace servesim {

void resolve_cost_noise(const YamlMap& variance, ScenarioConfig& c);
double cost_noise_sigma(const ScenarioConfig& c, const WorkerConfig& w);

}  // namespace servesim
