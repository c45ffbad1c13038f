// QuantileSketch against exact quantiles: exact (numpy's linear
// interpolation) up to kExact values, within the sketch's relative accuracy
// after it spills into logarithmic buckets; mean, min and max always exact.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reports/quantile_sketch.h"

using namespace servesim;

namespace {

// Deterministic heavy-tailed values (xorshift64*, then exp of a uniform).
std::vector<double> values(std::size_t n, std::uint64_t seed) {
  std::vector<double> out;
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const double u = static_cast<double>((x * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
    out.push_back(std::exp(8 * u) * 1e-3);  // 1e-3 .. ~3: latencies in seconds
  }
  return out;
}

// numpy.quantile(v, q) with the default (linear) method.
double exact_quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

const double kQs[] = {0.0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0};

}  // namespace

TEST_CASE("up to kExact values the sketch's quantiles are exact") {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, QuantileSketch::kExact}) {
    const std::vector<double> v = values(n, 17 + n);
    QuantileSketch s;
    for (double x : v) s.add(x);
    INFO("n = " << n);
    CHECK(s.count() == n);
    for (double q : kQs) CHECK(s.quantile(q) == doctest::Approx(exact_quantile(v, q)).epsilon(1e-12));
  }
}

TEST_CASE("past kExact values every quantile is within the sketch's relative accuracy of the exact one") {
  const std::vector<double> v = values(200000, 99);
  QuantileSketch s;
  for (double x : v) s.add(x);
  double sum = 0;
  for (double x : v) sum += x;
  CHECK(s.count() == v.size());
  CHECK(s.mean() == doctest::Approx(sum / static_cast<double>(v.size())).epsilon(1e-12));
  CHECK(s.min() == *std::min_element(v.begin(), v.end()));
  CHECK(s.max() == *std::max_element(v.begin(), v.end()));
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (double q : kQs) {
    INFO("q = " << q);
    // The sketch answers the order statistic at rank floor(q (n-1)), to within
    // relative error kAlpha; interpolation between neighbours moves the exact
    // answer by less than the gap to the next order statistic.
    const auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    const double lo = sorted[rank] * (1 - QuantileSketch::kAlpha);
    const double hi = sorted[std::min(rank + 1, sorted.size() - 1)] * (1 + QuantileSketch::kAlpha);
    CHECK(s.quantile(q) >= lo);
    CHECK(s.quantile(q) <= hi);
    CHECK(std::abs(s.quantile(q) - exact_quantile(v, q)) <= 2 * QuantileSketch::kAlpha * exact_quantile(v, q));
  }
}

TEST_CASE("zeros past kExact count as zero-valued order statistics") {
  QuantileSketch s;
  for (std::size_t i = 0; i < 3 * QuantileSketch::kExact; ++i) s.add(i % 3 == 0 ? 0.0 : 1.0);
  CHECK(s.quantile(0.2) == 0.0);
  CHECK(s.quantile(0.5) == doctest::Approx(1.0).epsilon(QuantileSketch::kAlpha));
  CHECK(s.min() == 0.0);
  CHECK(s.max() == 1.0);
}
