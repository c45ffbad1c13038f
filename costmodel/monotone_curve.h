// MonotoneCurve: a measured time-versus-tokens curve of one GEMM weight shape,
// kept as data rather than a formula, because cuBLAS's tile and wave steps
// (a GEMM of 129 rows costs a 256-row tile) are what a smooth fit would erase.
//
// Fitting: measured medians are made non-decreasing in M by isotonic regression
// (pool adjacent violators; noise can make M=2 measure faster than M=1), then
// the curve interpolates linearly between measured M. Below the smallest M it
// holds the first value (a GEMM is never cheaper than its weights read once);
// above the largest M it grows proportionally to M (compute bound: time per
// token constant), so it stays monotone everywhere.
#pragma once
#include <vector>

namespace servesim {

class MonotoneCurve {
 public:
  MonotoneCurve() = default;
  // REQUIRES: xs strictly increasing, xs.size() == ys.size() >= 1, ys > 0.
  MonotoneCurve(std::vector<double> xs, std::vector<double> ys);

  double operator()(double x) const;
  bool empty() const { return xs_.empty(); }
  double min_x() const { return xs_.front(); }
  double max_x() const { return xs_.back(); }
  const std::vector<double>& xs() const { return xs_; }
  const std::vector<double>& ys() const { return ys_; }  // after isotonic regression

 private:
  std::vector<double> xs_;
  std::vector<double> ys_;
};

// Isotonic (non-decreasing) least-squares fit of ys with equal weights.
std::vector<double> isotonic_non_decreasing(const std::vector<double>& ys);

}  // namespace servesim
