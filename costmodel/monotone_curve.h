// MonotoneCurve: a measured time-versus-tokens curve of one GEMM weight shape,
// kept as data rather than a formula, because cuBLAS's tile and wave steps
// (a GEMM of 129 rows costs a 256-row tile) are what a smooth fit would erase.
//
// Fitting: measured medians are made non-decreasing in M by isotonic regression
// (pool adjacent violators; noise can make M=2 measure faster than M=1), then
// the curve interpolates between measured M: linearly in M, or, when a guide
// g (a non-decreasing model of the same curve, gemm_guide.h) is given,
// linearly in g(M) -- y = y_lo + (y_hi - y_lo)(g(M) - g(M_lo))/(g(M_hi) - g(M_lo))
// -- so measured points are kept exactly and the steps between them follow the
// guide (linear in M where the guide is flat across the interval). Below the
// smallest M it holds the first value (a GEMM is never cheaper than its weights
// read once); above the largest M it grows proportionally to M, or to g(M) with
// a guide (compute bound: time per token constant up to wave steps). Every
// piece is non-decreasing, so the curve is monotone everywhere.
//
// Measured dips: cuBLASLt picks its GEMM algorithm by M, so a GEMM measured
// densely in M (the gemm_dense bench family) can really be faster at a larger
// M (M=568 in 2/3 of the time of M=552). Such a dip is kept when the caller
// marks it (dips[i]: the step from point i to point i + 1 is a real drop, e.g.
// its two p10-p90 ranges do not overlap); isotonic regression then runs on
// each stretch between kept dips separately, so noise is still pooled and the
// curve is monotone everywhere except at the marked dips.
#pragma once
#include <functional>
#include <utility>
#include <vector>

namespace servesim {

class MonotoneCurve {
 public:
  MonotoneCurve() = default;
  using Guide = std::function<double(double)>;
  // REQUIRES: xs strictly increasing, xs.size() == ys.size() >= 1, ys > 0;
  // guide, when given, non-decreasing and > 0; dips empty or dips.size() ==
  // xs.size() (the last entry unused).
  MonotoneCurve(std::vector<double> xs, std::vector<double> ys, Guide guide = {}, std::vector<bool> dips = {});

  double operator()(double x) const;
  bool empty() const { return xs_.empty(); }
  double min_x() const { return xs_.front(); }
  double max_x() const { return xs_.back(); }
  const std::vector<double>& xs() const { return xs_; }
  const std::vector<double>& ys() const { return ys_; }  // after isotonic regression (per stretch between kept dips)
  bool guided() const { return static_cast<bool>(guide_); }
  int kept_dips() const { return kept_dips_; }  // dips marked by the caller

 private:
  std::vector<double> xs_;
  std::vector<double> ys_;
  Guide guide_;
  std::vector<double> gx_;  // guide at xs_
  int kept_dips_ = 0;
};

// Isotonic (non-decreasing) least-squares fit of ys with equal weights.
std::vector<double> isotonic_non_decreasing(const std::vector<double>& ys);

// Leave-one-out predictions of a curve's interior points: for i = 1, 1 + step,
// ... < xs.size() - 1, MonotoneCurve(xs and ys without point i, guide)(xs[i]),
// bit for bit, in O(points) time and no allocation per held-out point (the
// guide is evaluated once per point: gx = guide(xs), empty without a guide).
// REQUIRES: as MonotoneCurve's constructor; xs.size() >= 3; step >= 1;
// gx empty or gx.size() == xs.size().
std::vector<double> monotone_loo_predictions(const std::vector<double>& xs, const std::vector<double>& ys,
                                             const std::vector<double>& gx, std::size_t step);
// The same in two steps: the part that depends on ys only (for each held-out
// point, the fit without it at its two neighbours' positions), then the
// predictions from it, so several guides over the same points (GEMM guide
// selection) pool the points once. monotone_loo_predictions(xs, ys, gx, step)
// is monotone_loo_predictions(xs, monotone_loo_neighbours(ys, step), gx, step).
std::vector<std::pair<double, double>> monotone_loo_neighbours(const std::vector<double>& ys, std::size_t step);
std::vector<double> monotone_loo_predictions(const std::vector<double>& xs,
                                             const std::vector<std::pair<double, double>>& neighbours,
                                             const std::vector<double>& gx, std::size_t step);

}  // namespace servesim
