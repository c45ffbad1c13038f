// seconds_to_time's inline rounding against std::llround (sim/core/time.h).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "sim/core/time.h"

namespace servesim {
namespace {

Time reference(double s) { return static_cast<Time>(std::llround(s * 1e9)); }

TEST_CASE("seconds_to_time rounds as std::llround, halves and the 2^53 edge included") {
  std::vector<double> ns = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                            1e-300, -1e-300, 4503599627370495.5, -4503599627370495.5, 4503599627370496.5};
  for (double p = 1; p < 0x1p62; p *= 2)  // powers of two and their neighbours, either side of 2^53
    for (double x : {p, std::nextafter(p, 0.0), std::nextafter(p, 0x1p63), p + 0.5, p - 0.5})
      for (double sign : {1.0, -1.0}) ns.push_back(sign * x);
  for (std::int64_t k = -2000; k <= 2000; ++k) ns.push_back(static_cast<double>(k) * 0.25);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 2'000'000; ++i) {  // random doubles of every magnitude below 2^62 ns
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const double mant = static_cast<double>(x >> 11) * 0x1p-53;  // [0, 1)
    const double v = std::ldexp(mant, static_cast<int>(x % 62)) * ((x >> 7) % 2 ? 1.0 : -1.0);
    ns.push_back(v);
  }
  for (double v : ns) {
    const double s = v * 1e-9;  // seconds, so that seconds_to_time's product is near v
    INFO("seconds " << s);
    REQUIRE(seconds_to_time(s) == reference(s));
    REQUIRE(round_half_away(v) == std::llround(v));
  }
  // Halves exactly at x = s * 1e9: pick s whose product is an exact half.
  for (std::int64_t k = -100000; k <= 100000; ++k) {
    const double s = (static_cast<double>(k) + 0.5) / 1e9;
    REQUIRE(seconds_to_time(s) == reference(s));
  }
}

}  // namespace
}  // namespace servesim
