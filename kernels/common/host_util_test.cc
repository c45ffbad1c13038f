#include "kernels/common/host_util.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace servesim::kernels;

TEST_CASE("bf16 round trip keeps representable values exactly and rounds to nearest even") {
  for (float x : {0.0f, 1.0f, -2.5f, 0.15625f, 65280.0f}) CHECK(round_to_bf16(x) == x);
  // 1 + 2^-8 lies exactly between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  CHECK(round_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 1.0f);
  // 1 + 3 * 2^-8 lies between 1 + 2^-7 (odd) and 1 + 2^-6 (even): rounds up to even.
  CHECK(round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 1.0f + std::ldexp(1.0f, -6));
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(bf16_bits_to_float(kBf16QuietNaN)));
  CHECK(std::isinf(round_to_bf16(std::numeric_limits<float>::infinity())));
}

TEST_CASE("seeded random fills are deterministic, bf16-exact and within range") {
  const auto a = random_uniform(1000, 42, -1.0f, 1.0f);
  const auto b = random_uniform(1000, 42, -1.0f, 1.0f);
  const auto c = random_uniform(1000, 43, -1.0f, 1.0f);
  CHECK(a == b);
  CHECK(a != c);
  for (float x : a) {
    CHECK(x >= -1.0f);
    CHECK(x <= 1.0f);
    CHECK(round_to_bf16(x) == x);
  }
  CHECK(derive_seed(1, 2) != derive_seed(1, 3));
}

TEST_CASE("relative error is the norm of the difference over the norm of the reference") {
  const std::vector<float> ref = {3.0f, 4.0f};
  CHECK(relative_error(ref, ref) == 0.0);
  CHECK(relative_error(std::vector<float>{3.0f, 4.5f}, ref) == doctest::Approx(0.1));
  CHECK(std::isnan(relative_error(std::vector<float>{3.0f, std::nanf("")}, ref)));
  CHECK(std::isinf(relative_error(std::vector<float>{1.0f}, ref)));
  CHECK(relative_error(std::vector<float>{0.0f, 0.0f}, std::vector<float>{0.0f, 0.0f}) == 0.0);
}

TEST_CASE("non-finite values are counted") {
  const std::vector<float> v = {1.0f, std::nanf(""), std::numeric_limits<float>::infinity(), 0.0f};
  CHECK(count_non_finite(v.data(), v.size()) == 2);
  CHECK(has_non_finite(v));
  CHECK_FALSE(has_non_finite(std::vector<float>{1.0f, 2.0f}));
}
