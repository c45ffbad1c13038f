#include "kernels/sparse/sparse_ref_util.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/common/host_util.h"
#include "kernels/sparse/topk_key.h"

namespace servesim::kernels::sparse {
namespace {

// Checks the topk_indices contract against the scores it was given.
void check_topk(const std::vector<float>& scores, int k, const std::vector<int32_t>& kept) {
  const int n = static_cast<int>(scores.size());
  auto key = [&](int i) { return std::isnan(scores[i]) ? -std::numeric_limits<float>::infinity() : scores[i]; };
  REQUIRE(static_cast<int>(kept.size()) == std::clamp(k, 0, n));
  REQUIRE(std::is_sorted(kept.begin(), kept.end()));
  REQUIRE(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
  std::vector<bool> in(n, false);
  for (int32_t i : kept) in[i] = true;
  for (int i = 0; i < n; ++i) {
    if (in[i]) continue;
    for (int32_t j : kept) {
      // Every kept score is at least every dropped one; on ties the smaller index wins.
      REQUIRE(key(j) >= key(i));
      if (key(j) == key(i)) REQUIRE(j < i);
    }
  }
}

TEST_CASE("top-k keeps exactly k indices and they hold the largest scores") {
  SplitMix64 g(42);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = static_cast<int>(g.uniform_int(0, 300));
    std::vector<float> s(n);
    // Few distinct values so that ties are frequent.
    for (float& x : s) x = static_cast<float>(g.uniform_int(-6, 6)) * (trial % 2 ? 0.25f : 1e3f);
    const int k = static_cast<int>(g.uniform_int(0, n + 3));
    check_topk(s, k, topk_indices(s, k));
  }
}

TEST_CASE("top-k treats NaN as the lowest score and infinities as ordinary values") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> s = {nan, -inf, 1.0f, inf, nan, 0.0f};
  CHECK(topk_indices(s, 2) == std::vector<int32_t>{2, 3});
  CHECK(topk_indices(s, 4) == std::vector<int32_t>{0, 2, 3, 5});  // NaN ties with -inf
  CHECK(topk_indices(s, 5) == std::vector<int32_t>{0, 1, 2, 3, 5});
  check_topk(s, 5, topk_indices(s, 5));
}

// Sequential model of block_topk (sparse_device.cuh): four 8-bit radix passes find the
// k-th largest key, then an ordered pass takes every larger key and the first equal ones.
std::vector<int32_t> radix_select_model(const std::vector<float>& s, int k, int forced) {
  const int n = static_cast<int>(s.size());
  std::vector<int32_t> out;
  if (k <= 0 || n == 0) return out;
  if (k >= n) {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  auto key = [&](int i) { return i < forced ? topk_order_key(std::numeric_limits<float>::infinity()) : topk_order_key(s[i]); };
  uint32_t prefix = 0, mask = 0;
  int remaining = k;
  for (int shift = 24; shift >= 0; shift -= 8) {
    int hist[256] = {};
    for (int i = 0; i < n; ++i) {
      if ((key(i) & mask) == prefix) ++hist[(key(i) >> shift) & 255u];
    }
    int above = 0, digit = 255;
    while (above + hist[digit] < remaining) above += hist[digit--];
    prefix |= static_cast<uint32_t>(digit) << shift;
    mask |= 255u << shift;
    remaining -= above;
  }
  int eq_seen = 0;
  for (int i = 0; i < n; ++i) {
    const bool eq = key(i) == prefix;
    if (key(i) > prefix || (eq && eq_seen < remaining)) out.push_back(i);
    eq_seen += eq;
  }
  return out;
}

TEST_CASE("the radix select on order-preserving keys behind the GPU top-k agrees with top-k") {
  SplitMix64 g(7);
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 1e-40f, -1e-40f, 3.4e38f};
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(g.uniform_int(1, 400));
    std::vector<float> s(n);
    for (float& x : s) {
      const int64_t pick = g.uniform_int(0, 9);
      x = pick < 8 ? specials[pick] : static_cast<float>(g.uniform(-3, 3)) * (trial % 3 == 0 ? 1.0f : 1e-3f);
      if (trial % 4 == 1) x = std::round(x);  // many exact ties
    }
    const int k = static_cast<int>(g.uniform_int(0, n + 1));
    const int forced = static_cast<int>(g.uniform_int(0, 3));
    std::vector<float> forced_scores = s;
    for (int i = 0; i < std::min(forced, n); ++i) forced_scores[i] = std::numeric_limits<float>::infinity();
    REQUIRE(radix_select_model(s, k, forced) == topk_indices(forced_scores, k));
  }
}

}  // namespace
}  // namespace servesim::kernels::sparse
