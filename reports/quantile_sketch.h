// QuantileSketch: percentiles of a stream of non-negative values in bounded
// memory. The first kExact values are kept and percentiles are exact (linear
// interpolation between order statistics, like numpy's default). Past that,
// values go into logarithmic buckets with relative accuracy 0.1% (DDSketch,
// Masson et al., VLDB 2019), so memory does not grow with the run length.
// Mean, min and max are always exact.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace servesim {

class QuantileSketch {
 public:
  static constexpr std::size_t kExact = 4096;
  static constexpr double kAlpha = 0.001;

  void add(double v) {
    int known = kNoBucket;
    add(v, known);
  }
  // x.add(v); y.add(v): the same counts, with v's bucket computed once when
  // both have spilled (a request's latency goes to its client's sketch and
  // to the overall one).
  static void add_both(QuantileSketch& x, QuantileSketch& y, double v) {
    int known = kNoBucket;
    x.add(v, known);
    y.add(v, known);
  }
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return min_; }
  double max() const { return max_; }
  // q in [0, 1]. REQUIRES: count() > 0.
  double quantile(double q) const;

  // The bucket of a value > 1e-12 once spilled: ceil(log(v) / log(gamma)),
  // evaluated exactly so (bucket_by_log) only where the quotient lies within
  // 1e-6 of an integer, elsewhere from a cheaper logarithm whose error bound
  // puts it in the same bucket (quantile_sketch.cc); infinity and NaN count as
  // the largest double. Public for the tests.
  static int bucket(double v);
  static int bucket_by_log(double v);

 private:
  static constexpr int kNoBucket = -0x7fffffff - 1;  // below every bucket (|bucket| < 400,000)
  static constexpr double kMinPositive = 1e-12;        // values at or below count as zeros
  // Adds v; `known` is bucket(v) or kNoBucket, set here when this sketch
  // needs it (spilled, v above kMinPositive). Inline: every request adds
  // its latencies; keeping exact values, growing the buckets and spilling are
  // out of line.
  void add(double v, int& known) {
    if (count_ == 0) {
      min_ = max_ = v;
    } else {
      min_ = std::min(min_, v);
      max_ = std::max(max_, v);
    }
    ++count_;
    sum_ += v;
    if (!spilled_) return add_exact(v);
    if (v <= kMinPositive) {
      ++zeros_;
      return;
    }
    if (known == kNoBucket) known = bucket(v);
    // Below offset_ the difference wraps to a huge index: one comparison.
    const auto k = static_cast<std::size_t>(static_cast<unsigned>(known - offset_));
    if (k < counts_.size())
      ++counts_[k];
    else
      count_outside(known);
  }
  void add_exact(double v);  // keeps v (not spilled yet); spills past kExact values
  // Counts bucket i outside [offset_, offset_ + counts_.size()): grows counts_.
  void count_outside(int i);
  void spill();
  double bucket_value(int i) const;

  std::uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
  mutable std::vector<double> exact_;  // sorted lazily
  mutable bool sorted_ = true;
  bool spilled_ = false;
  std::uint64_t zeros_ = 0;            // values <= kMinPositive
  int offset_ = 0;                     // bucket index of counts_[0]
  std::vector<std::uint64_t> counts_;
};

}  // namespace servesim
