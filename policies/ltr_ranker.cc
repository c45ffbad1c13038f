#include "policies/ltr_ranker.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include <Eigen/SparseCore>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_map.h"
#include "policies/kendall_tau.h"
#include "sim/core/error.h"
#include "sim/core/output_file.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

using SparseRows = Eigen::SparseMatrix<double, Eigen::RowMajor>;

SparseRows feature_matrix(std::span<const RequestSpec> reqs) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(reqs.size() * 12);
  std::vector<SparseFeature> row;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    ltr_features(reqs[i], row);
    for (const SparseFeature& f : row) t.emplace_back(static_cast<int>(i), f.index, f.value);
  }
  SparseRows x(static_cast<Eigen::Index>(reqs.size()), kLtrFeatureDim);
  x.setFromTriplets(t.begin(), t.end());
  return x;
}

// Adds d loss / d s for one list (indices sorted shortest first) to grad;
// returns the list's loss.
double listmle_list(std::span<const std::size_t> list, const Eigen::VectorXd& s, Eigen::VectorXd& grad) {
  const std::size_t n = list.size();
  double m = -INFINITY;
  for (std::size_t i : list) m = std::max(m, s[static_cast<Eigen::Index>(i)]);
  // Suffix sums Z_k = Σ_{j≥k} exp(s_j − m).
  std::vector<double> z(n + 1, 0.0);
  for (std::size_t k = n; k-- > 0;) z[k] = z[k + 1] + std::exp(s[static_cast<Eigen::Index>(list[k])] - m);
  double loss = 0, inv_prefix = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto idx = static_cast<Eigen::Index>(list[k]);
    loss += std::log(z[k]) + m - s[idx];
    inv_prefix += 1.0 / z[k];  // element k appears in the normalizers of positions 0..k
    grad[idx] += -1.0 + std::exp(s[idx] - m) * inv_prefix;
  }
  return loss;
}

double pairwise_list(std::span<const std::size_t> list, std::span<const RequestSpec> reqs, const Eigen::VectorXd& s,
                     Eigen::VectorXd& grad) {
  double loss = 0;
  std::int64_t pairs = 0;
  for (std::size_t a = 0; a < list.size(); ++a)
    for (std::size_t b = a + 1; b < list.size(); ++b)
      if (reqs[list[a]].output_tokens != reqs[list[b]].output_tokens) ++pairs;
  if (pairs == 0) return 0;
  const double w = 1.0 / static_cast<double>(pairs);
  for (std::size_t a = 0; a < list.size(); ++a) {
    for (std::size_t b = a + 1; b < list.size(); ++b) {
      // list is sorted shortest first: list[a] should score higher unless tied.
      if (reqs[list[a]].output_tokens == reqs[list[b]].output_tokens) continue;
      const auto i = static_cast<Eigen::Index>(list[a]), j = static_cast<Eigen::Index>(list[b]);
      const double margin = s[i] - s[j];
      loss += w * (margin > 0 ? std::log1p(std::exp(-margin)) : -margin + std::log1p(std::exp(margin)));
      const double g = -w / (1.0 + std::exp(margin));  // d/d margin
      grad[i] += g;
      grad[j] -= g;
    }
  }
  return loss;
}

}  // namespace

std::string ltr_loss_name(LtrLoss l) { return l == LtrLoss::kListMle ? "listmle" : "pairwise"; }

LtrLoss parse_ltr_loss(const std::string& s) {
  if (s == "listmle") return LtrLoss::kListMle;
  if (s == "pairwise") return LtrLoss::kPairwise;
  throw InputError(fmt::format("unknown LTR loss '{}'; expected listmle or pairwise", s));
}

LtrModel::LtrModel() : w_(Eigen::VectorXd::Zero(kLtrFeatureDim)) {}

LtrModel::LtrModel(Eigen::VectorXd w) : w_(std::move(w)) {
  SIM_CHECK(w_.size() == kLtrFeatureDim, "LTR model has {} weights, layout {} needs {}", w_.size(), kLtrFeatureLayout,
            kLtrFeatureDim);
}

double LtrModel::score(const RequestSpec& r) const {
  ltr_features(r, row_);
  double s = 0;
  for (const SparseFeature& f : row_) s += w_[f.index] * f.value;
  return s;
}

LtrModel train_ltr_model(std::span<const RequestSpec> train, const LtrTrainOptions& o) {
  SIM_CHECK(train.size() >= 2, "LTR training needs at least 2 requests, got {}", train.size());
  const SparseRows x = feature_matrix(train);
  const SparseRows xt = x.transpose();
  const auto n = static_cast<Eigen::Index>(train.size());
  const std::size_t list_size = std::max<std::size_t>(2, static_cast<std::size_t>(o.list_size));
  Eigen::VectorXd w = Eigen::VectorXd::Zero(kLtrFeatureDim), m1 = w, m2 = w;
  Eigen::VectorXd grad_s(n);
  std::vector<std::size_t> perm(train.size());
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  Rng rng(Rng::stream(o.seed, 0x17).next_u64());
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double p1 = 1, p2 = 1;
  for (int step = 0; step < o.steps; ++step) {
    for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);  // Fisher-Yates
    const Eigen::VectorXd s = x * w;
    grad_s.setZero();
    std::size_t lists = 0;
    for (std::size_t lo = 0; lo + 1 < perm.size(); lo += list_size) {
      auto list = std::span<std::size_t>(perm).subspan(lo, std::min(list_size, perm.size() - lo));
      // Shortest first; ties keep the (random) shuffled order.
      std::stable_sort(list.begin(), list.end(),
                       [&](std::size_t a, std::size_t b) { return train[a].output_tokens < train[b].output_tokens; });
      if (o.loss == LtrLoss::kListMle)
        listmle_list(list, s, grad_s);
      else
        pairwise_list(list, train, s, grad_s);
      ++lists;
    }
    Eigen::VectorXd g = xt * grad_s / static_cast<double>(std::max<std::size_t>(lists, 1)) + o.l2 * w;
    m1 = b1 * m1 + (1 - b1) * g;
    m2 = b2 * m2 + (1 - b2) * g.cwiseProduct(g);
    p1 *= b1;
    p2 *= b2;
    w -= (o.learning_rate * (m1 / (1 - p1)).array() / ((m2 / (1 - p2)).array().sqrt() + eps)).matrix();
  }
  return LtrModel(std::move(w));
}

double ltr_tau(const LtrModel& m, std::span<const RequestSpec> eval) {
  std::vector<double> pred(eval.size()), truth(eval.size());
  for (std::size_t i = 0; i < eval.size(); ++i) {
    pred[i] = -m.score(eval[i]);  // predicted length order
    truth[i] = static_cast<double>(eval[i].output_tokens);
  }
  return kendall_tau_b(pred, truth);
}

void save_ltr_model(const LtrModel& m, const LtrModelInfo& info, const std::string& path) {
  YAML::Emitter e;
  e.SetDoublePrecision(10);
  e << YAML::BeginMap;
  e << YAML::Key << "ltr_model" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "features" << YAML::Value << kLtrFeatureLayout;
  e << YAML::Key << "dim" << YAML::Value << kLtrFeatureDim;
  e << YAML::Key << "loss" << YAML::Value << ltr_loss_name(info.loss);
  e << YAML::Key << "trained_on" << YAML::Value << info.trained_on;
  e << YAML::Key << "train_requests" << YAML::Value << info.train_requests;
  e << YAML::Key << "holdout_requests" << YAML::Value << info.holdout_requests;
  e << YAML::Key << "holdout_tau" << YAML::Value << info.holdout_tau;
  // Sparse: only non-zero weights, as {feature index: weight}.
  e << YAML::Key << "weights" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (Eigen::Index i = 0; i < m.weights().size(); ++i)
    if (m.weights()[i] != 0) e << YAML::Key << i << YAML::Value << m.weights()[i];
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  // Checked writes to "<path>.tmp", renamed into place: never a short model.
  write_file(path, std::string("# servesim learned output-length ranker (policy ltr, ranker: learned, model: <this "
                               "file>).\n# Linear scores over the honest features of policies/ltr_features.h; higher "
                               "= shorter.\n") +
                       e.c_str() + "\n");
}

LtrModel load_ltr_model(const std::string& path, LtrModelInfo* info) {
  YamlMap root(load_yaml_file(path), path);
  YamlMap m = root.map("ltr_model");
  root.finish();
  const std::string layout = m.require<std::string>("features");
  if (layout != kLtrFeatureLayout)
    m.fail("features", fmt::format("feature layout '{}' is not this build's '{}'; retrain the model", layout,
                                   kLtrFeatureLayout));
  const std::int64_t dim = m.require<std::int64_t>("dim");
  if (dim != kLtrFeatureDim) m.fail("dim", fmt::format("{} features, this build's layout has {}", dim, kLtrFeatureDim));
  LtrModelInfo meta;
  meta.loss = parse_ltr_loss(m.get<std::string>("loss", "listmle"));
  meta.trained_on = m.get<std::string>("trained_on", "");
  meta.train_requests = m.get<std::int64_t>("train_requests", 0);
  meta.holdout_requests = m.get<std::int64_t>("holdout_requests", 0);
  meta.holdout_tau = m.get<double>("holdout_tau", 0.0);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(kLtrFeatureDim);
  YAML::Node weights = m.raw("weights");
  if (!weights.IsMap()) m.fail("weights", "expected a map {feature index: weight}");
  for (const auto& kv : weights) {
    long long i = -1;
    double v = 0;
    try {
      i = kv.first.as<long long>();
      v = kv.second.as<double>();
    } catch (const YAML::Exception&) {
      m.fail("weights", fmt::format("entry '{}' is not 'index: number'", kv.first.Scalar()));
    }
    if (i < 0 || i >= kLtrFeatureDim || !std::isfinite(v))
      m.fail("weights", fmt::format("entry {}: {} out of range (indices 0..{}, finite weights)", i, v, kLtrFeatureDim - 1));
    w[static_cast<Eigen::Index>(i)] = v;
  }
  m.finish();
  if (info) *info = meta;
  return LtrModel(std::move(w));
}

}  // namespace servesim
