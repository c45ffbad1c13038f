// NoisyCostModel: another cost model's iteration time times a log-normal
// error exp(σ·z) (median one). Two uses:
//  - an ESTIMATE that differs from the simulated truth (docs/costmodel.md,
//    "Estimation noise"): policies that price work (least-load routing,
//    Preble's L/M/P terms) see it while the engine keeps the exact model;
//  - run-to-run noise of the TRUTH for repetitions (variance.cost_noise,
//    docs/sweeps.md "Sources of variance"): the engine prices with it, each
//    repetition's seed drawing other errors, σ from the profile's measured
//    p10/p90 spread (KernelFits::spread_sigma) or given.
//
// z is a deterministic function of (seed, batch shape): the same batch always
// gets the same error (CostModel's contract: a pure function, no hidden
// state), different batches get independent-looking errors. Monotonicity in
// token counts holds only in expectation; a policy must not rely on more.
#pragma once
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "costmodel/cost_model.h"

namespace servesim {

class NoisyCostModel final : public CostModel {
 public:
  // REQUIRES: sigma >= 0. `label` is what identity() appends to the inner
  // model's identity; empty = "estimate noise sigma=<σ> seed=<seed>".
  NoisyCostModel(std::shared_ptr<const CostModel> inner, double sigma, std::uint64_t seed, std::string label = {})
      : inner_(std::move(inner)),
        sigma_(sigma),
        seed_(seed),
        label_(label.empty() ? fmt::format("estimate noise sigma={} seed={}", sigma, seed) : std::move(label)) {}

  Time iteration_time(const BatchShape& b) const override {
    const Time t = inner_->iteration_time(b);
    if (t <= 0 || sigma_ <= 0) return t;
    return std::max<Time>(1, static_cast<Time>(std::llround(static_cast<double>(t) * factor(b))));
  }
  std::string identity() const override { return fmt::format("{} + {}", inner_->identity(), label_); }
  bool calibrated() const override { return inner_->calibrated(); }
  // The inner model's parts, each times the batch's factor (they still sum to
  // the iteration time before rounding).
  PartTimes parts(const BatchShape& b) const override {
    PartTimes p = inner_->parts(b);
    if (sigma_ > 0)
      for (double& x : p) x *= factor(b);
    return p;
  }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t hash(const BatchShape& b) const {
    std::uint64_t h = mix(seed_ + 0x9E3779B97F4A7C15ull);
    for (const auto& p : b.prefills)
      h = mix(h ^ mix(static_cast<std::uint64_t>(p.new_tokens) * 31 + static_cast<std::uint64_t>(p.context) * 7 +
                      (p.completes ? 1 : 0)));
    h = mix(h ^ 0xD1B54A32D192ED03ull);
    for (auto c : b.decode_contexts) h = mix(h ^ static_cast<std::uint64_t>(c));
    return h;
  }
  double factor(const BatchShape& b) const { return std::exp(sigma_ * standard_normal(hash(b))); }
  // Box-Muller on two uniforms drawn from the hash.
  static double standard_normal(std::uint64_t h) {
    const double u1 = (static_cast<double>(mix(h) >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = (static_cast<double>(mix(h + 1) >> 11) + 0.5) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  std::shared_ptr<const CostModel> inner_;
  double sigma_;
  std::uint64_t seed_;
  std::string label_;
};

}  // namespace servesim
