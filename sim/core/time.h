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

// Rounds to the nearest nanosecond. REQUIRES: s is finite and |s| < ~292 years.
inline Time seconds_to_time(double s) { return static_cast<Time>(std::llround(s * 1e9)); }
inline double time_to_seconds(Time t) { return static_cast<double>(t) * 1e-9; }

}  // namespace servesim
