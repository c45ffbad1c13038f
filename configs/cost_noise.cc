#include "configs/cost_noise.h"

#include <fmt/format.h>

namespace servesim {
namespace {

// The profile spread of worker w, or 0 when it is not priced by a profile.
double profile_sigma(const ScenarioConfig& c, const WorkerConfig& w) {
  if (c.cost_model.backend != CostBackend::kCalibrated) return 0;
  const auto it = c.cost_model.fits.find(w.profile);
  return it == c.cost_model.fits.end() ? 0 : it->second->spread_sigma();
}

}  // namespace

void resolve_cost_noise(const YamlMap& variance, ScenarioConfig& c) {
  VarianceConfig& v = c.variance;
  using N = VarianceConfig::CostNoise;
  if (v.cost_noise != N::kAuto && v.cost_noise != N::kProfile) return;
  const WorkerConfig* without = nullptr;  // a worker whose pricing has no measured spread
  for (const WorkerConfig& w : c.workers)
    if (profile_sigma(c, w) <= 0) {
      without = &w;
      break;
    }
  if (v.cost_noise == N::kAuto) {
    v.cost_noise = v.repetitions && !without && !c.workers.empty() ? N::kProfile : N::kNone;
    return;
  }
  if (!without) return;
  if (c.cost_model.backend != CostBackend::kCalibrated)
    variance.fail("cost_noise", fmt::format("'profile' takes σ from a measured profile's p10/p90 spread, but this "
                                            "scenario prices with the {} backend; give σ as a number (e.g. 0.01) "
                                            "or use a calibrated backend",
                                            backend_name(c.cost_model.backend)));
  variance.fail("cost_noise", fmt::format("'profile' takes σ from a measured profile's p10/p90 spread, but {} has "
                                          "no row with both (imported tables keep medians only); give σ as a "
                                          "number (e.g. 0.01)",
                                          without->profile));
}

double cost_noise_sigma(const ScenarioConfig& c, const WorkerConfig& w) {
  switch (c.variance.cost_noise) {
    case VarianceConfig::CostNoise::kSigma: return c.variance.cost_sigma;
    case VarianceConfig::CostNoise::kProfile: return profile_sigma(c, w);
    case VarianceConfig::CostNoise::kAuto:
    case VarianceConfig::CostNoise::kNone: break;
  }
  return 0;
}

}  // namespace servesim
