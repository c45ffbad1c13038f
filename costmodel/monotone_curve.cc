// Isotonic regression and monotone interpolation; see monotone_curve.h.
#include "costmodel/monotone_curve.h"

#include <algorithm>

#include "sim/core/error.h"

namespace servesim {

namespace {

// Pool adjacent violators: blocks of (mean, count); a value pushed merges with
// the blocks before it while a block's mean is below its predecessor's.
struct Pools {
  std::vector<double> mean;
  std::vector<std::size_t> count;

  void clear() {
    mean.clear();
    count.clear();
  }
  void push(double y) {
    mean.push_back(y);
    count.push_back(1);
    while (mean.size() > 1 && mean[mean.size() - 2] > mean.back()) {
      const std::size_t c = count[count.size() - 2] + count.back();
      const double m = (mean[mean.size() - 2] * static_cast<double>(count[count.size() - 2]) +
                        mean.back() * static_cast<double>(count.back())) /
                       static_cast<double>(c);
      mean.pop_back();
      count.pop_back();
      mean.back() = m;
      count.back() = c;
    }
  }
};

}  // namespace

std::vector<double> isotonic_non_decreasing(const std::vector<double>& ys) {
  Pools pools;
  for (double y : ys) pools.push(y);
  std::vector<double> out;
  for (std::size_t b = 0; b < pools.mean.size(); ++b) out.insert(out.end(), pools.count[b], pools.mean[b]);
  return out;
}

std::vector<std::pair<double, double>> monotone_loo_neighbours(const std::vector<double>& ys, std::size_t step) {
  const std::size_t n = ys.size();
  SIM_CHECK(n >= 3 && step >= 1, "monotone_loo_neighbours: {} ys, step {}", n, step);
  std::vector<std::pair<double, double>> out;
  // Pool adjacent violators over ys without point i pushes ys[0..i) first: the
  // same merges, in the same order, as for the prefix alone. So each held-out
  // point starts from a copy of the prefix's pools (grown once, left to right)
  // and pushes the points after it: the same merges, in the same order, as
  // isotonic_non_decreasing on the reduced vector.
  Pools prefix, pools;
  prefix.mean.reserve(n);
  prefix.count.reserve(n);
  pools.mean.reserve(n);
  pools.count.reserve(n);
  const std::vector<double>& mean = pools.mean;
  const std::vector<std::size_t>& count = pools.count;
  std::size_t pushed = 0;  // ys[0..pushed) are in prefix
  for (std::size_t i = 1; i + 1 < n; i += step) {
    for (; pushed < i; ++pushed) prefix.push(ys[pushed]);
    pools.mean.assign(prefix.mean.begin(), prefix.mean.end());
    pools.count.assign(prefix.count.begin(), prefix.count.end());
    for (std::size_t j = i + 1; j < n; ++j) pools.push(ys[j]);
    // The fitted values at reduced positions i - 1 and i (the held-out point's neighbours).
    double y_lo = 0, y_hi = 0;
    for (std::size_t b = 0, start = 0; b < mean.size(); start += count[b], ++b) {
      if (start <= i - 1 && i - 1 < start + count[b]) y_lo = mean[b];
      if (start <= i && i < start + count[b]) {
        y_hi = mean[b];
        break;
      }
    }
    out.emplace_back(y_lo, y_hi);
  }
  return out;
}

std::vector<double> monotone_loo_predictions(const std::vector<double>& xs,
                                             const std::vector<std::pair<double, double>>& neighbours,
                                             const std::vector<double>& gx, std::size_t step) {
  const std::size_t n = xs.size();
  SIM_CHECK(n >= 3 && step >= 1 && (gx.empty() || gx.size() == n) && neighbours.size() == (n - 2 + step - 1) / step,
            "monotone_loo_predictions: {} xs, {} neighbour pairs, {} guide values, step {}", n, neighbours.size(),
            gx.size(), step);
  for (std::size_t i = 1; i < n; ++i) SIM_CHECK(xs[i] > xs[i - 1], "curve xs not increasing at {}", i);
  for (std::size_t i = 0; i < gx.size(); ++i)
    SIM_CHECK(gx[i] > 0 && (i == 0 || gx[i] >= gx[i - 1]), "curve guide not positive and non-decreasing at x={}", xs[i]);
  std::vector<double> out;
  out.reserve(neighbours.size());
  for (std::size_t i = 1, k = 0; i + 1 < n; i += step, ++k) {
    const auto [y_lo, y_hi] = neighbours[k];
    // MonotoneCurve::operator() at xs[i], strictly between its neighbours.
    const double x = xs[i];
    double f = (x - xs[i - 1]) / (xs[i + 1] - xs[i - 1]);
    if (!gx.empty() && gx[i + 1] > gx[i - 1]) f = std::clamp((gx[i] - gx[i - 1]) / (gx[i + 1] - gx[i - 1]), 0.0, 1.0);
    out.push_back(y_lo + f * (y_hi - y_lo));
  }
  return out;
}

std::vector<double> monotone_loo_predictions(const std::vector<double>& xs, const std::vector<double>& ys,
                                             const std::vector<double>& gx, std::size_t step) {
  SIM_CHECK(ys.size() == xs.size(), "monotone_loo_predictions: {} xs, {} ys", xs.size(), ys.size());
  return monotone_loo_predictions(xs, monotone_loo_neighbours(ys, step), gx, step);
}

MonotoneCurve::MonotoneCurve(std::vector<double> xs, std::vector<double> ys, Guide guide, std::vector<bool> dips)
    : xs_(std::move(xs)), guide_(std::move(guide)) {
  SIM_CHECK(!xs_.empty() && xs_.size() == ys.size(), "curve needs matching non-empty xs/ys ({} vs {})", xs_.size(),
            ys.size());
  for (std::size_t i = 1; i < xs_.size(); ++i) SIM_CHECK(xs_[i] > xs_[i - 1], "curve xs not increasing at {}", i);
  SIM_CHECK(dips.empty() || dips.size() == ys.size(), "curve dips: {} for {} points", dips.size(), ys.size());
  // Isotonic regression on each stretch between kept dips (one stretch without dips).
  std::size_t begin = 0;
  for (std::size_t i = 0; i < ys.size(); ++i) {
    const bool cut = i + 1 == ys.size() || (!dips.empty() && dips[i] && ys[i + 1] < ys[i]);
    if (!cut) continue;
    const auto stretch = isotonic_non_decreasing(std::vector<double>(ys.begin() + begin, ys.begin() + i + 1));
    ys_.insert(ys_.end(), stretch.begin(), stretch.end());
    if (i + 1 < ys.size()) ++kept_dips_;
    begin = i + 1;
  }
  if (guide_) {
    for (double x : xs_) gx_.push_back(guide_(x));
    for (std::size_t i = 0; i < gx_.size(); ++i)
      SIM_CHECK(gx_[i] > 0 && (i == 0 || gx_[i] >= gx_[i - 1]), "curve guide not positive and non-decreasing at x={}",
                xs_[i]);
  }
}

double MonotoneCurve::operator()(double x) const {
  if (x <= xs_.front()) return ys_.front();
  if (x >= xs_.back()) {
    if (guide_) return ys_.back() * std::max(1.0, guide_(x) / gx_.back());
    return ys_.back() * x / xs_.back();
  }
  const auto it = std::upper_bound(xs_.begin(), xs_.end(), x);
  const std::size_t hi = static_cast<std::size_t>(it - xs_.begin());
  const std::size_t lo = hi - 1;
  double f = (x - xs_[lo]) / (xs_[hi] - xs_[lo]);
  if (guide_ && gx_[hi] > gx_[lo]) f = std::clamp((guide_(x) - gx_[lo]) / (gx_[hi] - gx_[lo]), 0.0, 1.0);
  return ys_[lo] + f * (ys_[hi] - ys_[lo]);
}

}  // namespace servesim
