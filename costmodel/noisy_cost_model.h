// NoisyCostModel: another cost model's iteration time times a log-normal
// error exp(σ·z), to give policies an ESTIMATE that differs from the
// simulated truth (docs/costmodel.md, "Estimation noise"). Policies that price
// work (least-load routing, Preble's L/M/P terms) can then be studied under
// estimation error while the engine keeps the exact model.
//
// z is a deterministic function of (seed, batch shape): the same batch always
// gets the same error (CostModel's contract: a pure function, no hidden
// state), different batches get independent-looking errors. Monotonicity in
// token counts holds only in expectation; a policy must not rely on more.
#pragma once
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "costmodel/cost_model.h"

namespace servesim {

class NoisyCostModel final : public CostModel {
 public:
  // REQUIRES: sigma >= 0.
  NoisyCostModel(std::shared_ptr<const CostModel> inner, double sigma, std::uint64_t seed)
      : inner_(std::move(inner)), sigma_(sigma), seed_(seed) {}

  Time iteration_time(const BatchShape& b) const override {
    const Time t = inner_->iteration_time(b);
    if (t <= 0 || sigma_ <= 0) return t;
    const double f = std::exp(sigma_ * standard_normal(hash(b)));
    return std::max<Time>(1, static_cast<Time>(std::llround(static_cast<double>(t) * f)));
  }
  std::string identity() const override {
    return fmt::format("{} + estimate noise sigma={} seed={}", inner_->identity(), sigma_, seed_);
  }
  bool calibrated() const override { return inner_->calibrated(); }

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
  // Box-Muller on two uniforms drawn from the hash.
  static double standard_normal(std::uint64_t h) {
    const double u1 = (static_cast<double>(mix(h) >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = (static_cast<double>(mix(h + 1) >> 11) + 0.5) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  std::shared_ptr<const CostModel> inner_;
  double sigma_;
  std::uint64_t seed_;
};

}  // namespace servesim
