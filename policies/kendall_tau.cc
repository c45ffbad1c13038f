#include "policies/kendall_tau.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "sim/core/error.h"

namespace servesim {
namespace {

// Pairs tied within runs of equal values of a sorted sequence: Σ t(t−1)/2.
template <class Eq>
std::int64_t tied_pairs(std::size_t n, Eq equal_to_previous) {
  std::int64_t pairs = 0, run = 1;
  for (std::size_t i = 1; i <= n; ++i) {
    if (i < n && equal_to_previous(i)) {
      ++run;
    } else {
      pairs += run * (run - 1) / 2;
      run = 1;
    }
  }
  return pairs;
}

// Sorts v ascending and returns the number of inversions (i < j, v[i] > v[j]).
std::int64_t sort_count_inversions(std::vector<double>& v) {
  std::vector<double> buf(v.size());
  std::int64_t inv = 0;
  for (std::size_t width = 1; width < v.size(); width *= 2) {
    for (std::size_t lo = 0; lo < v.size(); lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, v.size()), hi = std::min(lo + 2 * width, v.size());
      std::size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (v[j] < v[i]) {
          inv += static_cast<std::int64_t>(mid - i);  // v[j] jumps over every remaining left element
          buf[k++] = v[j++];
        } else {
          buf[k++] = v[i++];
        }
      }
      while (i < mid) buf[k++] = v[i++];
      while (j < hi) buf[k++] = v[j++];
    }
    v.swap(buf);
  }
  return inv;
}

}  // namespace

double kendall_tau_b(std::span<const double> x, std::span<const double> y) {
  SIM_CHECK(x.size() == y.size(), "kendall_tau_b: {} x values but {} y values", x.size(), y.size());
  const std::size_t n = x.size();
  if (n < 2) return 0;
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return x[a] != x[b] ? x[a] < x[b] : y[a] < y[b]; });

  const std::int64_t xties = tied_pairs(n, [&](std::size_t i) { return x[idx[i]] == x[idx[i - 1]]; });
  const std::int64_t joint =
      tied_pairs(n, [&](std::size_t i) { return x[idx[i]] == x[idx[i - 1]] && y[idx[i]] == y[idx[i - 1]]; });
  std::vector<double> ys(n);
  for (std::size_t i = 0; i < n; ++i) ys[i] = y[idx[i]];
  // Within a run of equal x, y is ascending, so every inversion is a
  // discordant pair (x strictly ordered, y strictly reversed).
  const std::int64_t discordant = sort_count_inversions(ys);
  const std::int64_t yties = tied_pairs(n, [&](std::size_t i) { return ys[i] == ys[i - 1]; });

  const std::int64_t total = static_cast<std::int64_t>(n) * static_cast<std::int64_t>(n - 1) / 2;
  if (total == xties || total == yties) return 0;
  const double con_minus_dis = static_cast<double>(total - xties - yties + joint - 2 * discordant);
  return con_minus_dis / std::sqrt(static_cast<double>(total - xties)) / std::sqrt(static_cast<double>(total - yties));
}

}  // namespace servesim
