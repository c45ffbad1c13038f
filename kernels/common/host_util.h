// CPU-side utilities shared by the references, the checks and the tests of every kernel
// family: bf16 round trips, seeded random data, error metrics.
//
// bf16 on the host is carried as its 16-bit pattern (uint16_t) so this header needs no
// CUDA; conversion rounds to nearest even and keeps NaN a NaN. References compute on the
// *rounded* inputs (what the GPU sees), so only the kernel's own arithmetic differs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace servesim::kernels {

uint16_t float_to_bf16_bits(float x);
float bf16_bits_to_float(uint16_t bits);
inline float round_to_bf16(float x) { return bf16_bits_to_float(float_to_bf16_bits(x)); }
inline constexpr uint16_t kBf16QuietNaN = 0x7FC0;

std::vector<uint16_t> to_bf16_bits(const std::vector<float>& values);
std::vector<float> from_bf16_bits(const std::vector<uint16_t>& bits);

// Deterministic generator (splitmix64): same seed, same sequence, on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [lo, hi).
  double uniform(double lo, double hi);
  // Uniform integer in [lo, hi]. REQUIRES: lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi);

 private:
  uint64_t state_;
};

// Derives an independent seed for a named sub-stream (e.g. "k", "v", case index).
uint64_t derive_seed(uint64_t seed, uint64_t stream);

// n values uniform in [lo, hi); rounded to bf16 when round_bf16 (the default, since
// every kernel input is bf16).
std::vector<float> random_uniform(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f,
                                  bool round_bf16 = true);

// ||out - ref||_2 / ||ref||_2 accumulated in double. NaN when out or ref holds a NaN or
// Inf; ||out||_2 when ||ref|| == 0. REQUIRES: same length.
double relative_error(const float* out, const float* ref, size_t n);
inline double relative_error(const std::vector<float>& out, const std::vector<float>& ref) {
  return out.size() == ref.size() ? relative_error(out.data(), ref.data(), out.size()) : std::numeric_limits<double>::infinity();
}
// Largest |out - ref| (NaN if any NaN).
double max_abs_error(const float* out, const float* ref, size_t n);

// Number of NaN or Inf entries.
size_t count_non_finite(const float* values, size_t n);
inline bool has_non_finite(const std::vector<float>& v) { return count_non_finite(v.data(), v.size()) > 0; }

}  // namespace servesim::kernels
