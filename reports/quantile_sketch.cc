#include "reports/quantile_sketch.h"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {
constexpr double kMinPositive = 1e-12;
const double kGamma = (1 + QuantileSketch::kAlpha) / (1 - QuantileSketch::kAlpha);
const double kLogGamma = std::log(kGamma);
}  // namespace

void QuantileSketch::add(double v) {
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  ++count_;
  sum_ += v;
  if (!spilled_) {
    exact_.push_back(v);
    sorted_ = false;
    if (exact_.size() > kExact) spill();
    return;
  }
  if (v <= kMinPositive) {
    ++zeros_;
    return;
  }
  int i = bucket(v);
  if (counts_.empty()) {
    offset_ = i;
    counts_.push_back(0);
  } else if (i < offset_) {
    counts_.insert(counts_.begin(), static_cast<std::size_t>(offset_ - i), 0);
    offset_ = i;
  } else if (i >= offset_ + static_cast<int>(counts_.size())) {
    counts_.resize(static_cast<std::size_t>(i - offset_ + 1), 0);
  }
  ++counts_[static_cast<std::size_t>(i - offset_)];
}

int QuantileSketch::bucket(double v) const { return static_cast<int>(std::ceil(std::log(v) / kLogGamma)); }

// The value a bucket stands for: within relative error alpha of every member.
double QuantileSketch::bucket_value(int i) const { return 2 * std::pow(kGamma, i) / (kGamma + 1); }

void QuantileSketch::spill() {
  spilled_ = true;
  std::vector<double> values = std::move(exact_);
  exact_.clear();
  exact_.shrink_to_fit();
  count_ -= values.size();  // add() counts them again
  double s = sum_, lo = min_, hi = max_;
  for (double v : values) add(v);
  sum_ = s;
  min_ = lo;
  max_ = hi;
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  if (!spilled_) {
    if (!sorted_) {
      std::sort(exact_.begin(), exact_.end());
      sorted_ = true;
    }
    double pos = q * static_cast<double>(exact_.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t hi = std::min(lo + 1, exact_.size() - 1);
    double frac = pos - static_cast<double>(lo);
    return exact_[lo] + (exact_[hi] - exact_[lo]) * frac;
  }
  auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_ - 1));
  if (rank < zeros_) return 0;
  std::uint64_t seen = zeros_;
  for (std::size_t k = 0; k < counts_.size(); ++k) {
    seen += counts_[k];
    if (seen > rank) return std::clamp(bucket_value(offset_ + static_cast<int>(k)), min_, max_);
  }
  return max_;
}

}  // namespace servesim
