// QuantileSketch against exact quantiles: exact (numpy's linear
// interpolation) up to kExact values, within the sketch's relative accuracy
// after it spills into logarithmic buckets; mean, min and max always exact.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

namespace {

double from_bits(std::uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}
std::uint64_t to_bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// The bit pattern of the smallest positive double whose bucket_by_log is >= i
// (positive doubles order like their bit patterns).
std::uint64_t first_of_bucket(int i) {
  std::uint64_t lo = 1, hi = to_bits(std::numeric_limits<double>::max());
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (QuantileSketch::bucket_by_log(from_bits(mid)) >= i)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace

TEST_CASE("bucket() gives bucket_by_log()'s bucket at every bucket boundary and on random doubles") {
  std::size_t checked = 0, differ = 0;
  auto check = [&](double v) {
    ++checked;
    const int fast = QuantileSketch::bucket(v), slow = QuantileSketch::bucket_by_log(v);
    if (fast != slow && differ++ < 5) CHECK_MESSAGE(fast == slow, v << " (bits " << to_bits(v) << ")");
  };
  // Every boundary from 1e-12 (smaller values are counted as zeros) to 1e12 s, then every
  // 7th up to the largest double and down to the smallest normal: 16 doubles either side.
  const int lo = QuantileSketch::bucket_by_log(1e-12), hi = QuantileSketch::bucket_by_log(1e12);
  const int bottom = QuantileSketch::bucket_by_log(std::numeric_limits<double>::min()) + 1;
  const int top = QuantileSketch::bucket_by_log(std::numeric_limits<double>::max());
  std::vector<int> boundaries;
  for (int i = lo; i <= hi; ++i) boundaries.push_back(i);
  for (int i = hi + 7; i <= top; i += 7) boundaries.push_back(i);
  for (int i = lo - 7; i >= bottom; i -= 7) boundaries.push_back(i);
  for (int i : boundaries) {
    const std::uint64_t b = first_of_bucket(i);
    REQUIRE(QuantileSketch::bucket_by_log(from_bits(b)) >= i);
    for (std::uint64_t d = b - 16; d <= b + 16; ++d) check(from_bits(d));
  }
  // Random positive normal doubles: any exponent, and latency-like ones (1 µs .. 1e5 s).
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int k = 0; k < 2'000'000; ++k) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double any = from_bits((x >> 1) % to_bits(std::numeric_limits<double>::max()));
    if (any >= std::numeric_limits<double>::min()) check(any);
    check(std::ldexp(1.0 + static_cast<double>(x >> 12) / 4503599627370496.0, -20 + static_cast<int>(x % 37)));
  }
  // Non-finite values and the edges of the range take bucket_by_log's path.
  check(std::numeric_limits<double>::max());
  check(std::numeric_limits<double>::min());
  check(std::numeric_limits<double>::infinity());
  check(1e-12);
  check(std::nextafter(1e-12, 1.0));
  CHECK(checked > 3'000'000);
  CHECK(differ == 0);
}

TEST_CASE("a spilled sketch's quantiles come from bucket_by_log's buckets") {
  // Values placed on bucket boundaries and between them: every answer is the value of
  // the bucket that ceil(log(v) / log(gamma)) names, clamped to [min, max].
  QuantileSketch s;
  std::vector<double> v;
  for (int i = -2000; i < 6000; ++i) {
    const double b = from_bits(first_of_bucket(i));
    v.push_back(b);
    v.push_back(std::nextafter(b, 0.0));
  }
  for (double d : v) s.add(d);
  std::sort(v.begin(), v.end());
  for (double q : kQs) {
    INFO("q = " << q);
    const auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    const int bucket = QuantileSketch::bucket_by_log(v[rank]);
    const double gamma = (1 + QuantileSketch::kAlpha) / (1 - QuantileSketch::kAlpha);
    const double want = std::clamp(2 * std::pow(gamma, bucket) / (gamma + 1), v.front(), v.back());
    CHECK(s.quantile(q) == want);
  }
}

namespace {

// Every answer of two sketches, compared exactly.
void check_same(const QuantileSketch& got, const QuantileSketch& want) {
  REQUIRE(got.count() == want.count());
  CHECK(got.min() == want.min());
  CHECK(got.max() == want.max());
  CHECK(got.mean() == want.mean());
  if (want.count() == 0) return;
  std::size_t differ = 0;
  for (int k = 0; k <= 1000; ++k)
    if (got.quantile(k / 1000.0) != want.quantile(k / 1000.0)) ++differ;
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("add_both(x, y, v) counts as x.add(v) then y.add(v), whatever either sketch holds") {
  // y starts with a history (spilled, or not yet), x empty: then one stream into both,
  // values from the zeros bucket to 1e6 and on bucket boundaries, crossing both spills.
  for (const std::size_t head : {std::size_t{0}, std::size_t{100}, 3 * QuantileSketch::kExact}) {
    INFO("y's history: " << head);
    QuantileSketch x, y, x_ref, y_ref;
    for (double v : values(head, 5)) {
      y.add(v);
      y_ref.add(v);
    }
    std::vector<double> stream = values(3 * QuantileSketch::kExact, 23);
    for (int i = -3000; i < 3000; i += 3) {
      stream.push_back(from_bits(first_of_bucket(i)));
      stream.push_back(std::nextafter(from_bits(first_of_bucket(i)), 0.0));
    }
    for (double v : {0.0, 1e-13, 1e-12, 2e-12, 1e6}) stream.push_back(v);
    for (double v : stream) {
      QuantileSketch::add_both(x, y, v);
      x_ref.add(v);
      y_ref.add(v);
    }
    check_same(x, x_ref);
    check_same(y, y_ref);
  }
}
