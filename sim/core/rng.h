// Rng: a small, fast generator (splitmix64) with hand-written samplers, so
// that a seed gives the same numbers with every compiler and standard library
// (std::*_distribution are implementation-defined). Streams for independent
// purposes are derived with Rng::stream(seed, k).
#pragma once
#include <cmath>
#include <cstdint>

namespace servesim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  static Rng stream(std::uint64_t seed, std::uint64_t k) { return Rng(mix(seed ^ mix(k + 0x632BE59BD9B4E019ull))); }

  std::uint64_t next_u64() { return mix(state_ += 0x9E3779B97F4A7C15ull); }
  // Uniform in (0, 1): never 0, so log() is safe.
  double uniform() { return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  std::uint64_t below(std::uint64_t n) { return next_u64() % n; }  // bias < 2^-40 for our n
  double exponential(double mean) { return -mean * std::log(uniform()); }
  double normal() {  // Box-Muller, one value per call (simple and deterministic)
    return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
  }
  // Gamma(shape k, scale theta) by Marsaglia & Tsang (2000); k < 1 via the k+1 boost.
  double gamma(double k, double theta) {
    if (k < 1) return gamma(k + 1, theta) * std::pow(uniform(), 1.0 / k);
    const double d = k - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x = normal(), v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      double u = uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * theta;
    }
  }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

}  // namespace servesim
