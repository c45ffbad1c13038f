// Non-negative relative least squares; see feature_fit.h.
#include "costmodel/feature_fit.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

RelativeError relative_error(std::span<const double> predicted, std::span<const double> measured) {
  RelativeError e;
  std::vector<double> r;
  for (std::size_t i = 0; i < predicted.size(); ++i) r.push_back(std::abs(predicted[i] - measured[i]) / measured[i]);
  e.points = r.size();
  if (r.empty()) return e;
  // Nearest-rank quantiles: the value below which the share q of points lie.
  auto rank = [&](double share) {
    auto idx = static_cast<std::size_t>(std::ceil(share * static_cast<double>(r.size()))) - 1;
    return std::min(idx, r.size() - 1);
  };
  const std::size_t mid = rank(0.5), p90 = rank(0.9);  // mid <= p90
  if (std::any_of(r.begin(), r.end(), [](double x) { return std::isnan(x); })) {
    std::sort(r.begin(), r.end());  // NaN: no strict weak order; keep what sorting gave
    e.median = r[mid];
    e.p90 = r[p90];
    e.max = r.back();
    return e;
  }
  // The same order statistics as after a full sort (values are unique as numbers),
  // by selection: p90 over all, the median among the values below it, the maximum.
  e.max = *std::max_element(r.begin(), r.end());
  std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(p90), r.end());
  e.p90 = r[p90];
  std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(mid), r.begin() + static_cast<std::ptrdiff_t>(p90));
  e.median = mid == p90 ? e.p90 : r[mid];
  return e;
}

namespace {

// Exact NNLS over the columns in `allowed` (a bit mask): the optimum is the
// unconstrained least-squares solution on some subset of columns (its active
// set) that is non-negative; try every subset and keep the best feasible one.
Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, unsigned allowed) {
  const auto p = static_cast<std::size_t>(a.cols());
  Eigen::VectorXd best = Eigen::VectorXd::Zero(a.cols());
  double best_err = b.squaredNorm();  // all-zero solution
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    if ((mask & ~allowed) != 0) continue;
    std::vector<Eigen::Index> cols;
    for (std::size_t j = 0; j < p; ++j)
      if (mask & (1u << j)) cols.push_back(static_cast<Eigen::Index>(j));
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
    for (std::size_t c = 0; c < cols.size(); ++c) sub.col(static_cast<Eigen::Index>(c)) = a.col(cols[c]);
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(sub);
    if (qr.rank() < static_cast<Eigen::Index>(cols.size())) continue;  // collinear subset: a smaller one covers it
    Eigen::VectorXd s = qr.solve(b);
    if ((s.array() < 0).any()) continue;
    const double err = (sub * s - b).squaredNorm();
    if (err < best_err * (1 - 1e-12)) {
      best_err = err;
      best.setZero();
      for (std::size_t c = 0; c < cols.size(); ++c) best(cols[c]) = s(static_cast<Eigen::Index>(c));
    }
  }
  return best;
}

// Leave-one-out squared relative error of NNLS restricted to `allowed`.
double leave_one_out(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, unsigned allowed) {
  const Eigen::Index n = a.rows();
  double err = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    Eigen::MatrixXd a_i(n - 1, a.cols());
    Eigen::VectorXd b_i(n - 1);
    for (Eigen::Index r = 0, k = 0; r < n; ++r)
      if (r != i) a_i.row(k) = a.row(r), b_i(k++) = b(r);
    const double pred = a.row(i).dot(nnls(a_i, b_i, allowed));
    err += (pred - b(i)) * (pred - b(i));
  }
  return err;
}

}  // namespace

FeatureFit FeatureFit::fit(std::vector<std::string> names, const std::vector<std::vector<double>>& x,
                           const std::vector<double>& t) {
  const std::size_t p = names.size();
  const std::size_t n = t.size();
  SIM_CHECK(p >= 1 && p <= kMaxFeatures && n == x.size() && n >= 1, "bad fit input: {} features, {} rows", p, n);
  // Weighted design: row i divided by t_i, so the residual is relative.
  // Columns are scaled to unit norm so that bytes (1e9) and counts (1) mix.
  Eigen::MatrixXd a(n, p);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    SIM_CHECK(x[i].size() == p && t[i] > 0, "fit row {} malformed", i);
    for (std::size_t j = 0; j < p; ++j) a(i, j) = x[i][j] / t[i];
  }
  Eigen::VectorXd scale(p);
  for (std::size_t j = 0; j < p; ++j) {
    double norm = a.col(j).norm();
    scale(j) = norm > 0 ? norm : 1.0;
    a.col(j) /= scale(j);
  }
  // Few rows for the form: choose the feature subset that predicts left-out
  // rows best, so that 3-5 points do not feed a 4-coefficient form.
  unsigned allowed = (1u << p) - 1;
  if (n < 2 * p) {
    allowed = 1;  // one row: the leading feature alone
    double best = std::numeric_limits<double>::infinity();
    for (unsigned mask = 1; n > 1 && mask < (1u << p); ++mask) {
      if (static_cast<std::size_t>(std::popcount(mask)) > n - 1) continue;
      const double e = leave_one_out(a, b, mask);
      if (e < best * (1 - 1e-9) || (e <= best * (1 + 1e-9) && std::popcount(mask) < std::popcount(allowed)))
        best = e, allowed = mask;
    }
  }
  const Eigen::VectorXd c = nnls(a, b, allowed);
  FeatureFit f;
  f.names_ = std::move(names);
  f.coef_.assign(p, 0.0);
  f.fitted_features_ = static_cast<std::size_t>(std::popcount(allowed));
  f.small_sample_ = n < 2 * p;
  for (std::size_t j = 0; j < p; ++j) f.coef_[j] = c(static_cast<Eigen::Index>(j)) / scale(static_cast<Eigen::Index>(j));
  std::vector<double> pred;
  for (const auto& row : x) pred.push_back(f.predict(row));
  f.residuals_ = relative_error(pred, t);
  return f;
}

FeatureFit FeatureFit::fit_scaled(const FeatureFit& reference, const std::string& reference_name,
                                  const std::vector<std::vector<double>>& x, const std::vector<double>& t) {
  SIM_CHECK(!reference.empty() && x.size() == t.size() && !t.empty(), "bad scaled fit input");
  // α minimizing Σ (α·r_i − 1)² with r_i = reference prediction / measured.
  double sr = 0, srr = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double r = reference.predict(x[i]) / t[i];
    sr += r;
    srr += r * r;
  }
  FeatureFit f = reference;
  const double alpha = srr > 0 ? sr / srr : 1.0;
  for (double& c : f.coef_) c *= alpha;
  f.fitted_features_ = reference.coef_.size();
  f.scaled_from_ = fmt::format("{} x {:.4f}", reference_name, alpha);
  std::vector<double> pred;
  for (const auto& row : x) pred.push_back(f.predict(row));
  f.residuals_ = relative_error(pred, t);
  return f;
}

double FeatureFit::predict(std::span<const double> features) const {
  SIM_CHECK(features.size() == coef_.size(), "fit has {} features, got {}", coef_.size(), features.size());
  double t = 0;
  for (std::size_t j = 0; j < coef_.size(); ++j) t += coef_[j] * features[j];
  return t;
}

std::string FeatureFit::describe() const {
  std::string s;
  for (std::size_t j = 0; j < coef_.size(); ++j) s += fmt::format("{}{}={:.4g}", j ? " " : "", names_[j], coef_[j]);
  if (small_sample_) s += fmt::format(" (form chosen by leave-one-out: {} rows)", residuals_.points);
  if (!scaled_from_.empty()) s += fmt::format(" (form of {}: {} rows)", scaled_from_, residuals_.points);
  return s;
}

}  // namespace servesim
