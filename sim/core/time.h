// Simulated time: integer nanoseconds (int64). There is no floating-point clock
// and no sentinel value; "no time yet" is std::optional<Time>.
#pragma once
#include <cmath>
#include <cstdint>

namespace servesim {

using Time = std::int64_t;  // nanoseconds since the start of the simulation

inline constexpr Time kNsPerUs = 1'000;
inline constexpr Time kNsPerMs = 1'000'000;
inline constexpr Time kNsPerSec = 1'000'000'000;

// std::llround(x), bit for bit (time_test.cc), inline below 2^53 in magnitude,
// where the integer cast truncates exactly and x - trunc(x) is exact; libm beyond.
inline std::int64_t round_half_away(double x) {
  if (x > -0x1p53 && x < 0x1p53) {
    const auto i = static_cast<std::int64_t>(x);
    const double f = x - static_cast<double>(i);
    return f >= 0.5 ? i + 1 : (f <= -0.5 ? i - 1 : i);
  }
  return static_cast<std::int64_t>(std::llround(x));
}

// Rounds to the nearest nanosecond, halves away from zero (std::llround(s * 1e9)).
// REQUIRES: s is finite and |s| < ~292 years.
inline Time seconds_to_time(double s) { return round_half_away(s * 1e9); }
inline double time_to_seconds(Time t) { return static_cast<double>(t) * 1e-9; }

}  // namespace servesim
