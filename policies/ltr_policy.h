// LtrPolicy: admits waiting requests in the order of a predicted output-length
// rank (vLLM-LTR, Fu et al., NeurIPS 2024): rankers, starvation prevention, the
// preemptive mode and its deviations are described in docs/ltr.md.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "policies/local_policy.h"
#include "policies/ltr_ranker.h"
#include "policies/noisy_oracle.h"

namespace servesim {

inline constexpr std::int64_t kDefaultWarmup = 500;

struct LtrOptions {
  enum class Ranker { kLearned, kNoisyOracle };
  Ranker ranker = Ranker::kLearned;
  double tau = 0.6;            // noisy_oracle: target Kendall τ (the paper's predictors: 0.52-0.64)
  std::string model;           // learned: model file from `servesim ltr train`
  std::int64_t warmup = kDefaultWarmup;  // learned without model: finished requests to train on, per
                                         // worker (more: a better model, later); 0 with a model or an oracle
  LtrLoss loss = LtrLoss::kListMle;           // warm-up training loss
  std::int64_t starvation_threshold = 200;    // 0 = no starvation prevention
  std::int64_t priority_quantum = 10;
  bool preemptive = false;
  bool preempt_for_slots = true;   // preemptive: also preempt for the running-request cap (vLLM-LTR)
  bool promoted_by_score = false;  // promoted requests by score (vLLM-LTR) instead of promotion order;
                                   // default: true with preemptive, false without (see above)
  std::shared_ptr<const LtrModel> loaded;     // `model`, read once when the config is parsed
};

class LtrPolicy final : public LocalPolicy {
 public:
  LtrPolicy(LtrOptions o, std::uint64_t seed);

  void enqueue(const QueuedRequest& r) override;
  void schedule(AdmissionContext& ctx) override;
  std::size_t queued() const override { return waiting_.size(); }
  void on_finish(const RequestSpec& spec) override;
  // ltr_kendall_tau (mean over workers, weighted by ltr_tau_requests),
  // ltr_tau_requests and ltr_promotions (sums).
  void metrics(std::vector<PolicyMetric>& out) const override;

  // Kendall τ-b of scores vs true lengths over finished ranked requests.
  double achieved_tau() const;
  std::size_t tau_requests() const { return eval_pred_.size(); }
  std::int64_t promotions() const { return promotions_; }
  bool model_ready() const { return o_.ranker == LtrOptions::Ranker::kNoisyOracle || model_ != nullptr; }

 private:
  struct Key {
    int tier;              // 0: promoted (starving), 1: normal
    std::uint64_t order;   // tier 0: promotion order (first promoted first)
    double score;          // tier 1: higher first
    std::uint64_t seq;     // then arrival order at this worker
    bool operator<(const Key& o) const {
      if (tier != o.tier) return tier < o.tier;
      if (tier == 0 && order != o.order) return order < o.order;
      if (score != o.score) return score > o.score;
      return seq < o.seq;
    }
  };
  struct Known {  // every live request this worker has seen (erased at finish)
    const RequestSpec* spec = nullptr;  // valid while the request lives
    double score = 0;
    std::uint64_t seq = 0;
    bool ranked = false;           // scored by a trained model / the oracle
    std::int64_t quantum_left = 0; // > 0: promoted
    std::uint64_t promoted_order = 0;
    bool was_victim = false;       // preempted by this policy once: never again
    // by_score: promoted requests compare by score too (order 0 for all).
    Key key(bool by_score) const {
      return Key{quantum_left > 0 ? 0 : 1, by_score ? 0 : promoted_order, score, seq};
    }
  };
  struct Waiting {
    QueuedRequest q;
    Key key;
    std::int64_t since;  // iteration it entered the queue (its idle count starts there)
  };

  Known& know(const RequestSpec& spec);
  void rank(Known& k, const RequestSpec& spec);
  void insert(const QueuedRequest& r, Known& k, std::int64_t since);
  void erase(std::map<Key, RequestHandle>::iterator it);
  void promote_starving();
  bool preempt_behind(AdmissionContext& ctx, const Key& candidate);
  void train_from_warmup();

  LtrOptions o_;
  std::uint64_t seed_;
  std::shared_ptr<const LtrModel> model_;
  std::unique_ptr<NoisyOracle> oracle_;

  std::map<Key, RequestHandle> ranked_;                      // the admission order
  std::set<std::pair<std::int64_t, std::uint64_t>> aging_;   // (since, seq) of unpromoted waiting requests
  std::unordered_map<std::uint64_t, RequestHandle> by_seq_;  // seq -> handle, for aging_
  std::unordered_map<RequestHandle, Waiting> waiting_;
  std::unordered_map<RequestId, Known> known_;
  std::unordered_set<RequestId> promoted_running_;  // admitted, quantum left
  std::vector<RunningRequest> running_;  // scratch

  std::int64_t iter_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_promotion_ = 0;
  std::int64_t promotions_ = 0;
  std::vector<RequestSpec> warmup_set_;
  std::vector<double> eval_pred_, eval_truth_;
};

// The parameters of `local: {name: ltr, ...}`, read and written in this order:
// ranker; (learned) model or warmup (kDefaultWarmup without a model); (noisy_oracle)
// tau; (learned with warmup) loss; the starvation keys, preemptive and
// promoted_order (default `score` with preemptive). Keys that depend on another are
// custom rows after it.
const OptionTable<LtrOptions>& ltr_option_table();

// Reads the `ltr` policy's parameters (loads `model:`) and calls p.finish().
LtrOptions parse_ltr_options(YamlMap& p);
YAML::Node ltr_options_yaml(const LtrOptions& o);

}  // namespace servesim
