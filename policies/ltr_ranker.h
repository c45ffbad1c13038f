// LtrModel: the learned output-length ranker of the `ltr` policy — a linear
// scoring model over the honest features of ltr_features.h, trained to rank
// (Fu et al., "Efficient LLM Scheduling by Learning to Rank", NeurIPS 2024:
// only the ORDER of output lengths matters to an SJF-like scheduler, so the
// model learns a ranking, not a length). Higher score = predicted shorter.
//
// Training (train_ltr_model) reads the true output length of each training
// request — the label — and nothing else of the truth. Losses:
//   listmle  (default, the paper's): random lists of `list_size` requests,
//            each sorted by true length (shortest first, ties in random
//            order); loss = Σ_i [log Σ_{j≥i} exp s_j − s_i] (Plackett-Luce);
//   pairwise (RankNet): log(1 + exp(−(s_i − s_j))) for every pair of a list
//            with output_i < output_j.
// Full-batch Adam on Eigen (sparse feature matrix × dense weights), lists
// re-drawn every step, L2 on the weights. Deterministic for a seed.
//
// Model files are YAML (save_ltr_model / load_ltr_model), naming the feature
// layout, the loss, what they were trained on and the held-out τ.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "policies/ltr_features.h"
#include "sim/core/request.h"

namespace servesim {

enum class LtrLoss { kListMle, kPairwise };

// "listmle" / "pairwise"; parse throws InputError naming the valid ones.
std::string ltr_loss_name(LtrLoss l);
LtrLoss parse_ltr_loss(const std::string& s);

struct LtrTrainOptions {
  LtrLoss loss = LtrLoss::kListMle;
  int steps = 300;              // full-batch Adam steps (cost: linear)
  int list_size = 32;           // requests per ranking list (pairwise cost: quadratic)
  double learning_rate = 0.05;  // Adam step size
  double l2 = 0.3;              // weight decay (added to the per-list gradient); higher: less overfit to rare slots
  std::uint64_t seed = 1;
};

class LtrModel {
 public:
  LtrModel();  // all-zero weights: every request ties (the policy falls back to arrival order)
  explicit LtrModel(Eigen::VectorXd w);

  double score(const RequestSpec& r) const;
  const Eigen::VectorXd& weights() const { return w_; }

 private:
  Eigen::VectorXd w_;
  mutable std::vector<SparseFeature> row_;  // scratch (a model is used by one thread)
};

// REQUIRES: train.size() >= 2. Reads train[i].output_tokens as the label.
LtrModel train_ltr_model(std::span<const RequestSpec> train, const LtrTrainOptions& o);

// Kendall τ-b between the model's predicted order and the true output
// lengths of `eval` (positive: shorter predicted ⇒ shorter in truth).
double ltr_tau(const LtrModel& m, std::span<const RequestSpec> eval);

// What a model file records besides the weights.
struct LtrModelInfo {
  std::string trained_on;       // trace or scenario path
  LtrLoss loss = LtrLoss::kListMle;
  std::int64_t train_requests = 0;
  std::int64_t holdout_requests = 0;
  double holdout_tau = 0;
};

// Writes the model YAML; throws InputError if the file cannot be written.
void save_ltr_model(const LtrModel& m, const LtrModelInfo& info, const std::string& path);
// Reads a model YAML; throws InputError naming the file and field on any problem.
LtrModel load_ltr_model(const std::string& path, LtrModelInfo* info = nullptr);

}  // namespace servesim
