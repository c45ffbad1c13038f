// QuantileSketch: percentiles of a stream of non-negative values in bounded
// memory. The first kExact values are kept and percentiles are exact (linear
// interpolation between order statistics, like numpy's default). Past that,
// values go into logarithmic buckets with relative accuracy 0.1% (DDSketch,
// Masson et al., VLDB 2019), so memory does not grow with the run length.
// Mean, min and max are always exact.
#pragma once
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
  // Adds v; `known` is bucket(v) or kNoBucket, set here when this sketch
  // needs it (spilled, v above 1e-12).
  void add(double v, int& known);
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
