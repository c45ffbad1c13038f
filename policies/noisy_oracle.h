// NoisyOracle: a what-if ranker of known quality. score = −log(output) + σ·z,
// z ~ N(0,1) drawn per request (from the seed and the request id, so a
// request keeps its score across re-queues and runs are reproducible), with σ
// sized so that Kendall's τ between scores and true lengths ≈ a target. It
// READS THE TRUE OUTPUT LENGTH: a policy using it is an oracle (reports say so).
//
// Sizing σ. For bivariate normal scores τ = (2/π)·asin(ρ), so with
// X = −log(output) of variance v, ρ = sin(πτ/2) and σ² = v·(1/ρ² − 1)
// (noisy_oracle_sigma). Real lengths are neither normal nor tie-free (many
// requests share an output length), which biases that formula, so the oracle
// calibrates σ on the workload itself: it keeps a uniform sample (reservoir,
// 4096) of the outputs it has scored and, each time their count reaches 64,
// 128, 256, …, bisects σ until τ-b of that sample's scores, with fixed noise
// draws, matches the target (calibrate_noisy_oracle_sigma). Before 64 outputs
// it uses the formula with the variance seen so far (1 if none). A workload
// whose length distribution drifts gets a σ that lags behind it.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/request.h"
#include "sim/core/rng.h"

namespace servesim {

// σ for target τ in [0, 1] when −log(output) is normal with variance `var`
// (infinite for τ = 0, 0 for τ = 1).
double noisy_oracle_sigma(double tau, double var);

// σ such that τ-b(−log(outputs) + σ·z, −outputs) ≈ tau on this sample, with
// z drawn from `seed`. REQUIRES: 0 <= tau <= 1.
double calibrate_noisy_oracle_sigma(std::span<const double> outputs, double tau, std::uint64_t seed);

class NoisyOracle {
 public:
  // REQUIRES: 0 <= tau <= 1.
  NoisyOracle(double tau, std::uint64_t seed);

  // Higher = predicted shorter. Reads r.output_tokens (oracle). Call once
  // per request (the score is deterministic in r.id, but every call feeds
  // the calibration sample).
  double score(const RequestSpec& r);
  double sigma() const { return sigma_; }
  double target_tau() const { return tau_; }

 private:
  void observe(double output);

  double tau_;
  std::uint64_t seed_;
  double sigma_;
  Rng reservoir_rng_;
  std::vector<double> sample_;  // uniform sample of the outputs scored so far
  std::uint64_t seen_ = 0;      // outputs scored
  std::uint64_t next_calibration_ = 64;
};

}  // namespace servesim
