// FeatureFit: a kernel time modelled as a non-negative combination of
// physical features, t = Σ c_i · φ_i (µs), fitted with Eigen by least squares
// on RELATIVE error (each row weighted by 1 / measured time, so a 5 µs launch
// counts as much as a 50 ms prefill).
//
// Coefficients are constrained to be >= 0: every feature grows with the work
// (bytes, FLOPs, sequences), so a fitted model is monotone non-decreasing in
// every token count, as CostModel's contract requires, and never predicts a
// negative time. The constrained problem is solved exactly by enumerating the
// active sets (at most kMaxFeatures columns: 2^6 small QR solves), which is
// deterministic and takes microseconds.
//
// With few rows (fewer than twice the features) the form is reduced to the
// feature subset with the smallest leave-one-out error (at most rows − 1
// features), so three to five points never feed a four-coefficient form;
// describe() says so. Where a well-measured sibling exists, fit_scaled() is
// better: the bench measures some head shapes at three points only.
//
// Typical features: 1 (launch + fixed latency), bytes (1 / effective
// bandwidth), FLOPs (1 / effective rate), FLOPs per query row (the sequential
// latency of one tile when the grid does not fill the GPU).
#pragma once
#include <span>
#include <string>
#include <vector>

namespace servesim {

// Median and 90th percentile of |predicted − measured| / measured.
struct RelativeError {
  double median = 0;
  double p90 = 0;
  double max = 0;
  std::size_t points = 0;
};
RelativeError relative_error(std::span<const double> predicted, std::span<const double> measured);

class FeatureFit {
 public:
  static constexpr std::size_t kMaxFeatures = 6;

  FeatureFit() = default;
  // REQUIRES: every row of x has names.size() entries (all >= 0), t > 0,
  // names.size() <= kMaxFeatures, and x.size() == t.size() >= 1.
  // Fewer rows than names: a reduced form (see above).
  static FeatureFit fit(std::vector<std::string> names, const std::vector<std::vector<double>>& x,
                        const std::vector<double>& t);

  // A fit with too few rows of its own: `reference`'s form (a well-measured
  // sibling, e.g. another head shape of the same kernel) times one factor α
  // fitted to these rows. REQUIRES: rows as for fit(), reference not empty.
  static FeatureFit fit_scaled(const FeatureFit& reference, const std::string& reference_name,
                               const std::vector<std::vector<double>>& x, const std::vector<double>& t);

  double predict(std::span<const double> features) const;
  bool empty() const { return coef_.empty(); }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<double>& coefficients() const { return coef_; }
  // Residuals on the points it was fitted to.
  const RelativeError& residuals() const { return residuals_; }
  // "1=5.98 kv_bytes=3.4e-07 ..." for reports.
  std::string describe() const;

 private:
  std::vector<std::string> names_;
  std::vector<double> coef_;
  std::size_t fitted_features_ = 0;  // features allowed a non-zero coefficient
  bool small_sample_ = false;        // form chosen by leave-one-out
  std::string scaled_from_;          // fit_scaled: the reference's name
  RelativeError residuals_;
};

}  // namespace servesim
