#include "kernels/common/host_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace servesim::kernels {

uint16_t float_to_bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0) {
    return static_cast<uint16_t>((u >> 16) | 0x0040u);  // keep NaN quiet and a NaN
  }
  // Round to nearest, ties to even: add 0x7FFF plus the lowest kept bit.
  const uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb;
  return static_cast<uint16_t>(u >> 16);
}

float bf16_bits_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
}

std::vector<uint16_t> to_bf16_bits(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = float_to_bf16_bits(values[i]);
  return bits;
}

std::vector<float> from_bf16_bits(const std::vector<uint16_t>& bits) {
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) values[i] = bf16_bits_to_float(bits[i]);
  return values;
}

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform(double lo, double hi) {
  const double unit = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
  return lo + (hi - lo) * unit;
}

int64_t SplitMix64::uniform_int(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(next() % span);
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  SplitMix64 g(seed ^ (stream * 0xD1B54A32D192ED03ull));
  return g.next();
}

std::vector<float> random_uniform(size_t n, uint64_t seed, float lo, float hi, bool round_bf16) {
  SplitMix64 g(seed);
  std::vector<float> v(n);
  for (auto& x : v) {
    const float f = static_cast<float>(g.uniform(lo, hi));
    x = round_bf16 ? round_to_bf16(f) : f;
  }
  return v;
}

double relative_error(const float* out, const float* ref, size_t n) {
  double diff2 = 0, ref2 = 0, out2 = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(out[i]) || !std::isfinite(ref[i])) return std::numeric_limits<double>::quiet_NaN();
    const double d = static_cast<double>(out[i]) - ref[i];
    diff2 += d * d;
    ref2 += static_cast<double>(ref[i]) * ref[i];
    out2 += static_cast<double>(out[i]) * out[i];
  }
  if (ref2 == 0) return std::sqrt(out2);
  return std::sqrt(diff2 / ref2);
}

double max_abs_error(const float* out, const float* ref, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(out[i]) - ref[i]);
    if (std::isnan(d)) return std::numeric_limits<double>::quiet_NaN();
    worst = std::max(worst, d);
  }
  return worst;
}

size_t count_non_finite(const float* values, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += std::isfinite(values[i]) ? 0 : 1;
  return bad;
}

}  // namespace servesim::kernels
