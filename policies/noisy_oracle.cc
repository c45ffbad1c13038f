#include "policies/noisy_oracle.h"

#include <cmath>
#include <limits>

#include "policies/kendall_tau.h"
#include "sim/core/error.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

constexpr std::size_t kMaxSample = 4096;
constexpr double kPi = 3.141592653589793;

double noise(std::uint64_t seed, std::uint64_t id) { return Rng::stream(seed, id).normal(); }

double variance(std::span<const double> v) {
  if (v.size() < 2) return 1.0;
  double mean = 0, m2 = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) m2 += (x - mean) * (x - mean);
  return m2 / static_cast<double>(v.size() - 1);
}

}  // namespace

double noisy_oracle_sigma(double tau, double var) {
  SIM_CHECK(tau >= 0 && tau <= 1, "noisy oracle tau {} outside [0, 1]", tau);
  const double rho = std::sin(kPi * tau / 2);
  if (rho <= 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(std::max(var, 0.0) * (1 / (rho * rho) - 1));
}

double calibrate_noisy_oracle_sigma(std::span<const double> outputs, double tau, std::uint64_t seed) {
  SIM_CHECK(tau >= 0 && tau <= 1, "noisy oracle tau {} outside [0, 1]", tau);
  // A small sample is replicated with independent noise draws (up to
  // kMaxSample pairs), so the bisection is not steered by a few unlucky z.
  const std::size_t reps = outputs.empty() ? 1 : std::max<std::size_t>(1, kMaxSample / outputs.size());
  const std::size_t n = outputs.size() * reps;
  std::vector<double> x(n), z(n), truth(n), s(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double out = outputs[i % outputs.size()];
    x[i] = -std::log(out);
    z[i] = noise(seed ^ 0xCA11B7A7Eull, i);
    truth[i] = -out;
  }
  auto tau_at = [&](double sigma) {
    for (std::size_t i = 0; i < n; ++i) s[i] = x[i] + sigma * z[i];
    return kendall_tau_b(s, truth);
  };
  const double sd = std::sqrt(variance(x));
  if (outputs.size() < 2 || sd == 0) return noisy_oracle_sigma(tau, 1.0);
  // τ falls as σ grows; bisect log σ over a range far wider than any target needs.
  double lo = std::log(sd * 1e-4), hi = std::log(sd * 1e4);
  if (tau_at(std::exp(lo)) <= tau) return 0;  // even (almost) no noise does not exceed the target (ties)
  for (int it = 0; it < 40; ++it) {
    const double mid = (lo + hi) / 2;
    (tau_at(std::exp(mid)) > tau ? lo : hi) = mid;
  }
  return std::exp((lo + hi) / 2);
}

NoisyOracle::NoisyOracle(double tau, std::uint64_t seed)
    : tau_(tau), seed_(seed), sigma_(noisy_oracle_sigma(tau, 1.0)), reservoir_rng_(Rng::stream(seed, 0x5A3F)) {
  SIM_CHECK(tau >= 0 && tau <= 1, "noisy oracle tau {} outside [0, 1]", tau);
}

void NoisyOracle::observe(double output) {
  ++seen_;
  if (sample_.size() < kMaxSample) {
    sample_.push_back(output);
  } else {
    const std::uint64_t j = reservoir_rng_.below(seen_);  // Algorithm R
    if (j < kMaxSample) sample_[j] = output;
  }
  if (seen_ >= next_calibration_) {
    sigma_ = calibrate_noisy_oracle_sigma(sample_, tau_, seed_);
    next_calibration_ *= 2;
  } else if (seen_ < 64) {
    std::vector<double> x(sample_.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = -std::log(sample_[i]);
    sigma_ = noisy_oracle_sigma(tau_, variance(x));
  }
}

double NoisyOracle::score(const RequestSpec& r) {
  const double out = static_cast<double>(std::max<std::int64_t>(r.output_tokens, 1));
  observe(out);
  const double z = noise(seed_, r.id);
  if (std::isinf(sigma_)) return z;  // τ = 0: pure noise
  return -std::log(out) + sigma_ * z;
}

}  // namespace servesim
