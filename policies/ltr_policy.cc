#include "policies/ltr_policy.h"

#include <algorithm>
#include <string_view>

#include "policies/kendall_tau.h"
#include "sim/core/error.h"

namespace servesim {

LtrPolicy::LtrPolicy(LtrOptions o, std::uint64_t seed) : o_(std::move(o)), seed_(seed) {
  if (o_.ranker == LtrOptions::Ranker::kNoisyOracle) {
    oracle_ = std::make_unique<NoisyOracle>(o_.tau, seed);
  } else {
    model_ = o_.loaded;
    SIM_CHECK(model_ || o_.warmup > 0, "ltr ranker: learned needs a model or a warm-up window");
  }
}

LtrPolicy::Known& LtrPolicy::know(const RequestSpec& spec) {
  auto [it, fresh] = known_.try_emplace(spec.id);
  if (fresh) {
    it->second.spec = &spec;
    it->second.seq = next_seq_++;
    rank(it->second, spec);
  }
  return it->second;
}

void LtrPolicy::rank(Known& k, const RequestSpec& spec) {
  if (oracle_) {
    k.score = oracle_->score(spec);
    k.ranked = true;
  } else if (model_) {
    k.score = model_->score(spec);
    k.ranked = true;
  }
}

void LtrPolicy::insert(const QueuedRequest& r, Known& k, std::int64_t since) {
  const Key key = k.key(o_.promoted_by_score);
  ranked_.emplace(key, r.handle);
  waiting_[r.handle] = Waiting{r, key, since};
  if (key.tier == 1) {
    aging_.emplace(since, k.seq);
    by_seq_[k.seq] = r.handle;
  }
}

void LtrPolicy::erase(std::map<Key, RequestHandle>::iterator it) {
  const Waiting& w = waiting_.at(it->second);
  if (it->first.tier == 1) {
    aging_.erase({w.since, it->first.seq});
    by_seq_.erase(it->first.seq);
  }
  waiting_.erase(it->second);
  ranked_.erase(it);
}

void LtrPolicy::enqueue(const QueuedRequest& r) {
  Known& k = know(*r.spec);
  promoted_running_.erase(r.spec->id);  // preempted while promoted: waits with its quantum left
  insert(r, k, iter_);
}

void LtrPolicy::promote_starving() {
  if (o_.starvation_threshold <= 0) return;
  while (!aging_.empty() && iter_ - aging_.begin()->first >= o_.starvation_threshold) {
    const std::uint64_t seq = aging_.begin()->second;
    const RequestHandle h = by_seq_.at(seq);
    Waiting w = waiting_.at(h);
    erase(ranked_.find(w.key));
    Known& k = known_.at(w.q.spec->id);
    k.quantum_left = std::max<std::int64_t>(o_.priority_quantum, 1);
    k.promoted_order = next_promotion_++;
    ++promotions_;
    insert(w.q, k, iter_);
  }
}

bool LtrPolicy::preempt_behind(AdmissionContext& ctx, const Key& candidate) {
  ctx.running_requests(running_);
  const RunningRequest* victim = nullptr;
  Key worst{};
  for (const RunningRequest& r : running_) {
    auto it = known_.find(r.spec->id);
    if (it == known_.end()) continue;
    const Key key = it->second.key(o_.promoted_by_score);
    if (key.tier == 0 || it->second.was_victim || !(candidate < key)) continue;  // promoted, preempted once, or ahead
    if (!victim || worst < key) {
      victim = &r;
      worst = key;
    }
  }
  if (!victim) return false;
  known_.at(victim->spec->id).was_victim = true;
  return ctx.preempt(victim->handle);
}

void LtrPolicy::schedule(AdmissionContext& ctx) {
  ++iter_;
  for (auto it = promoted_running_.begin(); it != promoted_running_.end();) {
    Known& k = known_.at(*it);
    it = --k.quantum_left > 0 ? std::next(it) : promoted_running_.erase(it);
  }
  promote_starving();
  while (!ranked_.empty()) {
    auto it = ranked_.begin();
    const QueuedRequest q = waiting_.at(it->second).q;
    const AdmitResult res = ctx.try_admit(q);
    if (res == AdmitResult::kAdmitted) {
      erase(it);
      Known& k = known_.at(q.spec->id);
      if (k.quantum_left > 0 && --k.quantum_left > 0) promoted_running_.insert(q.spec->id);
      continue;
    }
    // The candidate is ranked_.begin() still (a preemption re-queues only requests ranked behind it).
    const bool short_of = res == AdmitResult::kNoMemory || (o_.preempt_for_slots && res == AdmitResult::kNoSlot);
    if (o_.preemptive && short_of && preempt_behind(ctx, it->first)) continue;
    return;
  }
}

void LtrPolicy::on_finish(const RequestSpec& spec) {
  auto it = known_.find(spec.id);
  if (it != known_.end()) {
    if (it->second.ranked) {
      eval_pred_.push_back(-it->second.score);
      eval_truth_.push_back(static_cast<double>(spec.output_tokens));
    }
    known_.erase(it);
  }
  promoted_running_.erase(spec.id);
  if (!model_ && !oracle_ && static_cast<std::int64_t>(warmup_set_.size()) < o_.warmup) {
    warmup_set_.push_back(spec);  // its output length is known now that it finished
    if (static_cast<std::int64_t>(warmup_set_.size()) == o_.warmup) train_from_warmup();
  }
}

void LtrPolicy::train_from_warmup() {
  LtrTrainOptions t;
  t.loss = o_.loss;
  t.seed = seed_;
  model_ = std::make_shared<const LtrModel>(train_ltr_model(warmup_set_, t));
  warmup_set_.clear();
  warmup_set_.shrink_to_fit();
  // Score everything live: running requests (for preemption; they were not
  // ranked by the model, so their τ is not counted) and the queue, re-ranked.
  for (auto& [id, k] : known_) k.score = model_->score(*k.spec);
  std::vector<Waiting> queue;
  queue.reserve(waiting_.size());
  for (const auto& [key, h] : ranked_) queue.push_back(waiting_.at(h));
  ranked_.clear();
  aging_.clear();
  by_seq_.clear();
  waiting_.clear();
  for (const Waiting& w : queue) {
    Known& k = known_.at(w.q.spec->id);
    k.ranked = true;
    insert(w.q, k, w.since);  // keeps its idle count
  }
}

double LtrPolicy::achieved_tau() const { return kendall_tau_b(eval_pred_, eval_truth_); }

void LtrPolicy::metrics(std::vector<PolicyMetric>& out) const {
  const auto n = static_cast<double>(eval_pred_.size());
  out.push_back({"ltr_kendall_tau", achieved_tau(), n, PolicyMetric::Merge::kMean});
  out.push_back({"ltr_tau_requests", n, 1, PolicyMetric::Merge::kSum});
  out.push_back({"ltr_promotions", static_cast<double>(promotions_), 1, PolicyMetric::Merge::kSum});
}

namespace {

using R = OptionRange;
bool is_learned(const LtrOptions& o) { return o.ranker == LtrOptions::Ranker::kLearned; }

// model: learned only; written when given.
OptionCustom<LtrOptions> model_row() {
  OptionCustom<LtrOptions> row = custom<LtrOptions>(
      [](YamlMap& p, const char* key, LtrOptions& o) {
        if (!is_learned(o) && p.has(key)) p.fail(key, fmt::format("{} applies to ranker: learned", key));
        o.model = p.get<std::string>(key, o.model);
      },
      [](const LtrOptions& o) { return YAML::Node(o.model); });
  row.written = [](const LtrOptions& o) { return is_learned(o) && !o.model.empty(); };
  return row;
}

// warmup: learned without a model only; default kDefaultWarmup there, 0 otherwise.
OptionCustom<LtrOptions> warmup_row() {
  OptionCustom<LtrOptions> row = custom<LtrOptions>(
      [](YamlMap& p, const char* key, LtrOptions& o) {
        const bool learned = is_learned(o);
        if (!learned && p.has(key)) p.fail(key, fmt::format("{} applies to ranker: learned", key));
        if (!o.model.empty() && p.has(key))
          p.fail(key, "give either model: (trained offline) or warmup: (trained online), not both");
        o.warmup = p.get<std::int64_t>(key, learned && o.model.empty() ? kDefaultWarmup : 0);
        if (learned && o.model.empty() && o.warmup < 1)
          p.fail(key, fmt::format("must be >= 1 (finished requests to train on), got {}", o.warmup));
      },
      [](const LtrOptions& o) { return YAML::Node(o.warmup); });
  row.written = [](const LtrOptions& o) { return is_learned(o) && o.warmup > 0; };
  return row;
}

// promoted_order: score or promotion; default score with preemptive, promotion without.
OptionCustom<LtrOptions> promoted_order_row() {
  OptionCustom<LtrOptions> row = custom<LtrOptions>(
      [](YamlMap& p, const char* key, LtrOptions& o) {
        const std::string name = p.get<std::string>(key, o.preemptive ? "score" : "promotion");
        if (name != "score" && name != "promotion")
          p.fail(key, fmt::format("expected score or promotion, got '{}'", name));
        o.promoted_by_score = name == "score";
      },
      [](const LtrOptions& o) { return YAML::Node(o.promoted_by_score ? "score" : "promotion"); });
  row.names = {"score", "promotion"};
  return row;
}

}  // namespace

// In the order of the echo; ranker first (the other keys' checks and defaults read it),
// model before warmup, preemptive before promoted_order (their defaults).
const OptionTable<LtrOptions>& ltr_option_table() {
  static const OptionTable<LtrOptions> t = {
      {"ranker", one_of(&LtrOptions::ranker, "ranker", {"learned", "noisy_oracle"}), R::kAny,
       "learned (features a trace has) or noisy_oracle (true lengths)"},
      {"model", model_row(), R::kAny, "learned: a model file from servesim ltr train (trained offline)"},
      {"warmup", warmup_row(), R::kAny, "learned without model: finished requests per worker to train on online"},
      {"tau", &LtrOptions::tau, R::kFractionOrZero, "noisy_oracle: the target Kendall tau", kOptionMax, 0,
       [](const LtrOptions& o) { return !is_learned(o); }},
      {"loss", one_of(&LtrOptions::loss, "loss", {"listmle", "pairwise"}), R::kAny,
       "learned, trained online: the warm-up training loss", kOptionMax, 0,
       [](const LtrOptions& o) { return is_learned(o) && o.warmup > 0; }},
      {"starvation_threshold", &LtrOptions::starvation_threshold, R::kNonNegative,
       "steps a request may wait before promotion (0 = no starvation prevention)"},
      {"priority_quantum", &LtrOptions::priority_quantum, R::kAtLeastOne, "scheduled iterations a promoted request keeps"},
      {"preemptive", &LtrOptions::preemptive, R::kAny, "re-rank running and waiting requests every step"},
      {"preempt_for_slots", &LtrOptions::preempt_for_slots, R::kAny,
       "preemptive: also preempt for the running-request cap"},
      {"promoted_order", promoted_order_row(), R::kAny,
       "order of promoted requests: by score (the LTR code) or first promoted first"},
  };
  return t;
}

LtrOptions parse_ltr_options(YamlMap& p) {
  LtrOptions o;
  read_options(p, ltr_option_table(), o);
  if (is_learned(o) && p.has("tau")) p.fail("tau", "tau sets the noisy oracle's quality; it needs ranker: noisy_oracle");
  if (!is_learned(o) && p.has("loss")) p.fail("loss", "loss applies to ranker: learned");
  p.finish();
  if (!o.model.empty()) {
    try {
      o.loaded = std::make_shared<const LtrModel>(load_ltr_model(o.model));
    } catch (const InputError& e) {
      p.fail("model", e.what());
    }
  }
  return o;
}

YAML::Node ltr_options_yaml(const LtrOptions& o) {
  YAML::Node n;
  n["name"] = "ltr";
  write_options(n, ltr_option_table(), o);
  return n;
}

}  // namespace servesim
