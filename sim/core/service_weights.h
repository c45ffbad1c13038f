// The default service weights of VTC's measure of service: w_in per input
// (prompt) token, w_out per output token. The one place these defaults are
// stated: the fairness policies' options (VTC, DLPM, D²LPM) and the report's
// fairness measures (ScenarioConfig::w_in / w_out) initialise from them, and
// every other reader takes the value from a parsed or resolved config.
//
// charge_repeated: a running total after n equal charges (VTC's counters, DLPM's
// deficits, charged once per decoded token), bit for bit what n additions give.
#pragma once
#include <cmath>
#include <cstdint>

namespace servesim {

inline constexpr double kDefaultWIn = 1.0;
inline constexpr double kDefaultWOut = 2.0;

// x + step, n times over, rounding after each addition as n separate additions do.
// When x and step are whole numbers and every partial sum stays within 2^53 (the
// default weights: integers), each addition is exact and the n of them are one
// addition of n * step; otherwise they are made one by one.
inline double charge_repeated(double x, double step, std::int64_t n) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  const double total = step * static_cast<double>(n);
  if (n >= 0 && std::trunc(step) == step && std::trunc(x) == x && std::abs(x) + std::abs(total) <= kExact)
    return x + total;
  for (std::int64_t i = 0; i < n; ++i) x += step;
  return x;
}

}  // namespace servesim
