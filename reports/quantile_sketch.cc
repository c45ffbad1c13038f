#include "reports/quantile_sketch.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <limits>

namespace servesim {
namespace {
const double kGamma = (1 + QuantileSketch::kAlpha) / (1 - QuantileSketch::kAlpha);
const double kLogGamma = std::log(kGamma);
}  // namespace

void QuantileSketch::add_exact(double v) {
  exact_.push_back(v);
  sorted_ = false;
  if (exact_.size() > kExact) spill();
}

void QuantileSketch::count_outside(int i) {
  if (counts_.empty()) {
    offset_ = i;
    counts_.push_back(0);
  } else if (i < offset_) {
    counts_.insert(counts_.begin(), static_cast<std::size_t>(offset_ - i), 0);
    offset_ = i;
  } else {
    counts_.resize(static_cast<std::size_t>(i - offset_ + 1), 0);
  }
  ++counts_[static_cast<std::size_t>(i - offset_)];
}

int QuantileSketch::bucket_by_log(double v) {
  // Infinity and NaN count in the largest double's bucket: converting an
  // infinite quotient to int would be undefined behaviour (UBSan).
  if (!std::isfinite(v)) v = std::numeric_limits<double>::max();
  return static_cast<int>(std::ceil(std::log(v) / kLogGamma));
}

// bucket_by_log without libm's log for (nearly) every value. For a normal
// v = 2^e * m, m in [1, 2): ln v = e ln 2 + ln c_j + ln(m / c_j), c_j the
// centre of the j-th of 128 slices of [1, 2), ln c_j from a table and
// ln(1 + r), |r| < 2^-8, from its series to r^4 (truncation < 2e-13). In
// bucket units (1 / ln gamma ~ 500) every error of this sum and of the scaling
// is below 1e-9, and bucket_by_log's own quotient is within 1e-10 of the exact
// one (log within 1 ulp, < 1.2e-13 below 710, then one division). So where the
// quotient here lies more than kMargin = 1e-6 from an integer, both round up to
// the same integer; within kMargin of one (about 2 values in a million) the
// bucket is bucket_by_log's. Non-finite values go there too.
// quantile_sketch_test compares the two at every bucket boundary from 1e-12 to
// 1e12 (and beyond in steps) and on random doubles.
namespace {
struct LogSlices {
  static constexpr int kBits = 7;
  double inv_centre[1 << kBits];
  double log_centre[1 << kBits];
  LogSlices() {
    for (int j = 0; j < (1 << kBits); ++j) {
      const double c = 1 + (j + 0.5) / (1 << kBits);
      inv_centre[j] = 1 / c;
      log_centre[j] = std::log(c);
    }
  }
};
const LogSlices kSlices;
const double kInvLogGamma = 1 / kLogGamma;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kMargin = 1e-6;
}  // namespace

int QuantileSketch::bucket(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const auto biased = static_cast<int>(bits >> 52);  // v > 0: no sign bit
  if (biased == 0 || biased >= 0x7ff) return bucket_by_log(v);  // subnormal (not above 1e-12), inf, NaN
  const int j = static_cast<int>(bits >> (52 - LogSlices::kBits)) & ((1 << LogSlices::kBits) - 1);
  const double m = std::bit_cast<double>((bits & ((std::uint64_t{1} << 52) - 1)) | 0x3ff0000000000000ull);
  const double r = m * kSlices.inv_centre[j] - 1;
  const double log1p_r = r * (1 + r * (-0.5 + r * (1.0 / 3 + r * -0.25)));
  const double x = ((biased - 1023) * kLn2 + kSlices.log_centre[j] + log1p_r) * kInvLogGamma;
  int below = static_cast<int>(x);  // |x| < 400,000
  if (below > x) --below;           // floor
  const double frac = x - below;
  if (frac < kMargin || frac > 1 - kMargin) return bucket_by_log(v);
  return below + 1;
}

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
