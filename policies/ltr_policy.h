// LtrPolicy: admit waiting requests in the order of a predicted output-length
// RANK (vLLM-LTR: Fu et al., "Efficient LLM Scheduling by Learning to Rank",
// NeurIPS 2024) — an SJF approximation that needs no oracle.
//
// Rankers (`ranker:`):
//   learned       LtrModel (ltr_ranker.h) over honest features only. Either
//                 `model: FILE` (trained offline with `servesim ltr train`),
//                 or `warmup: N` (the default, N = 500): until N requests
//                 have FINISHED on this worker it ranks nothing (arrival
//                 order); each finished request's features and true output
//                 length — known once it finished, as in a real server — go
//                 to a training set; at the N-th finish it trains (ListMLE by
//                 default, `loss:`) and re-ranks the queue. Each worker
//                 trains its own model, once.
//   noisy_oracle  −log(true output) + noise sized for Kendall τ ≈ `tau`
//                 (noisy_oracle.h). Reads the truth: the policy is an oracle.
// Every request is scored once, when it first arrives at this worker; its
// score is kept across preemptions. Ties: arrival order.
//
// Starvation prevention (as in the LTR code): a waiting request left
// unscheduled for `starvation_threshold` consecutive iterations (scheduling
// steps of this worker; default 200, 0 = off) is promoted: it goes before
// every unpromoted request, and keeps that priority for its next
// `priority_quantum` scheduled iterations (default 10), then is demoted.
// Promoted requests go in promotion order (oldest first). The LTR code ranks
// them by score instead, but then, under a sustained overload where every
// request starves, the longest ones lose to every promoted short one again
// and their wait is unbounded; promotion order bounds it. The price: when
// queueing delays exceed the threshold for most requests, most are promoted
// and the order drifts toward FCFS (docs/ltr.md measures it).
//
// Admission walks the order and stops at the first request that does not
// fit (no skipping ahead: the order is the policy). `preemptive: true`
// runs it as vLLM-LTR does: running + waiting are re-ranked every step, and
// when the next waiting request does not fit — in KV memory, or because the
// running-request cap is reached (`preempt_for_slots`, default true) — the
// running request ranked last (unpromoted, strictly behind it) is preempted
// by recomputation to make room, repeatedly; promoted requests are ordered
// by score (`promoted_order: score`, the LTR code's rule). Deviation: the
// engine preempts by recomputation where the LTR code swaps out and keeps
// the work done, so each request is preempted by the policy at most once
// (else a long request, promoted, run for its quantum, then preempted again
// and again, would lose its work every time and never finish — a livelock
// the conformance suite provoked).
// The default stays non-preemptive with promotion order: with recomputation
// instead of swapping, slot preemption recomputes nearly every request when
// the running cap binds (docs/ltr.md: Azure conv replay, mean E2E 2.8 s ->
// 145 s), and ordering promoted requests by score lets the longest ones lose
// to every promoted short one under sustained overload (unbounded wait).
//
// Achieved τ: at each finish the true length is compared with the score the
// request was ranked by (requests ranked before a warm-up model existed are
// left out); metrics() reports Kendall τ-b over them as ltr_kendall_tau
// (summary.csv).
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
  std::int64_t warmup = 0;     // learned without model: finished requests to train on, per worker
                               // (default kDefaultWarmup; more: a better model, later)
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

// The plain parameters of `local: {name: ltr, ...}`. ranker, tau, model,
// warmup, loss and promoted_order depend on one another (and warmup's and
// promoted_order's defaults on other keys): parse_ltr_options() reads those.
const OptionTable<LtrOptions>& ltr_option_table();

// Reads the `ltr` policy's parameters (loads `model:`) and calls p.finish().
LtrOptions parse_ltr_options(YamlMap& p);
YAML::Node ltr_options_yaml(const LtrOptions& o);

}  // namespace servesim
