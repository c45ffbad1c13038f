// Preble's E2 global scheduler; see preble_e2_policy.h.
#include "policies/preble_e2_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {

namespace {
constexpr std::uint32_t kMinSamples = 8;
}  // namespace

PrebleE2Policy::PrebleE2Policy(PrebleE2Options o, std::size_t workers)
    : o_(o), view_(workers), load_(workers, 0.0), prefill_rate_(workers, 0.0) {}

PrebleE2Policy::NodeStats& PrebleE2Policy::stats(IndexNodeId n) {
  if (n >= node_stats_.size()) node_stats_.resize(view_.slots());
  NodeStats& s = node_stats_[n];
  if (s.generation != view_.generation(n)) s = NodeStats{view_.generation(n)};
  return s;
}

PrebleE2Policy::NodeHits& PrebleE2Policy::hits(IndexNodeId n, std::uint32_t generation) {
  if (n >= node_hits_.size()) node_hits_.resize(view_.slots());
  NodeHits& h = node_hits_[n];
  if (h.generation != generation) h = NodeHits{generation};
  return h;
}

void PrebleE2Policy::expire(Time now) {
  while (!history_.empty() && history_.front().at + o_.window <= now) {
    load_[history_.front().worker] -= history_.front().load_s;
    history_.pop_front();
    ++history_base_;
  }
}

// The worker minimizing L + M + P (ties: the lower index), as a scan in index
// order with strict < would pick it. M >= 0 and rounding is monotone, so
// (L + M) + P >= L + P =: bound. Pricing M walks the worker's LRU tail (at
// scale every worker is full: the walk dominated explore), so it is priced
// only where it can matter: first for the worker of the lowest bound (cost c),
// then in index order for the others whose bound is <= c (a bound > c means a
// cost > c >= the minimum) and < the best cost so far (at >= it the scan would
// not move). Pricing M reads only (recent_hits), so the skipped ones leave no trace.
WorkerId PrebleE2Policy::explore(const RequestSpec& r, const ClusterView& c, IndexNodeId exclude_holders_of) {
  const Time now = c.now();
  const std::size_t n = c.workers();
  explore_p_.resize(n);
  explore_bound_.resize(n);
  WorkerId first = 0;
  bool any = false;
  for (WorkerId w = 0; w < n; ++w) {
    if (exclude_holders_of != 0 && view_.owns(exclude_holders_of, w)) {
      explore_bound_[w] = std::numeric_limits<double>::quiet_NaN();  // not a candidate
      continue;
    }
    explore_p_[w] = est_.prefill_s(c.cost_model(w), r.prompt_tokens - per_worker_[w], per_worker_[w]);
    explore_bound_[w] = load_[w] + explore_p_[w];
    if (!any || explore_bound_[w] < explore_bound_[first]) first = w;
    any = true;
  }
  if (!any) return 0;
  auto cost = [&](WorkerId w) {
    double m = 0;
    const std::int64_t overflow = view_.held_tokens(w) + (r.prompt_tokens - per_worker_[w]) - view_.capacity(w);
    if (overflow > 0) {
      // The holdings first, each one's hit counter fetched as its node is known; then
      // the sum, in the same order (the counters are scattered: their misses overlap).
      visited_.clear();
      view_.visit_lru(w, overflow, [&](IndexNodeId x, std::int64_t tokens, std::uint32_t generation) {
        if (x < node_hits_.size()) __builtin_prefetch(&node_hits_[x]);
        visited_.push_back(Visited{x, generation, tokens});
      });
      for (const Visited& v : visited_)
        m += prefill_rate_[w] * static_cast<double>(v.tokens) * recent_hits(v.node, v.generation, now);
    }
    return load_[w] + m + explore_p_[w];
  };
  const double first_cost = cost(first);
  WorkerId best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  for (WorkerId w = 0; w < n; ++w) {
    const double bound = explore_bound_[w];
    if (std::isnan(bound) || bound > first_cost || !(bound < best_cost)) continue;
    const double x = w == first ? first_cost : cost(w);
    if (x < best_cost) {
      best_cost = x;
      best = w;
    }
  }
  return best;
}

WorkerId PrebleE2Policy::route(const RequestSpec& r, const ClusterView& c) {
  const std::size_t n = c.workers();
  const Time now = c.now();
  if (!sized_) {
    for (WorkerId w = 0; w < n; ++w) {
      const WorkerLoad l = c.load(w);
      view_.set_capacity(w, l.kv_capacity_pages * l.page_size);
      prefill_rate_[w] = est_.prefill_s(c.cost_model(w), 1024, 0) / 1024;
    }
    sized_ = true;
  }
  expire(now);
  if (o_.rebalance || o_.replicate) {
    if (++since_check_ >= o_.rebalance_every * static_cast<std::int64_t>(n)) {
      since_check_ = 0;
      check(now);
    }
  }
  const GlobalPrefixIndex::Match m = view_.match(r, per_worker_);
  std::int64_t matched = m.tokens;
  if (o_.cluster_view) {
    matched = 0;
    for (WorkerId w = 0; w < n; ++w) {
      per_worker_[w] = c.locality(w, r).total();
      matched = std::max(matched, per_worker_[w]);
    }
  }
  const std::int64_t missed = r.prompt_tokens - matched;
  WorkerId pick = 0;
  if (matched > missed) {
    double best = std::numeric_limits<double>::infinity();
    for (WorkerId w = 0; w < n; ++w)
      if (per_worker_[w] == matched && load_[w] < best) {
        best = load_[w];
        pick = w;
      }
    NodeStats& s = stats(view_.top_of(m.node));
    bool all_hold = true;
    for (WorkerId w = 0; w < n; ++w) all_hold = all_hold && per_worker_[w] == matched;
    if (o_.replicate && s.replicate && !all_hold) {
      pick = explore(r, c, view_.top_of(m.node));
      s.replicate = false;
      counts_.replicated++;
    } else {
      counts_.exploit++;
    }
  } else {
    pick = explore(r, c, 0);
    counts_.explore++;
  }
  // Book the work on the chosen worker, and record its new holding.
  const WorkerLoad l = c.load(pick);
  const CostModel& model = c.cost_model(pick);
  const double tpot_s = est_.decode_step_s(model, l.running + 1, l.running > 0 ? l.running_context_tokens / l.running : 0);
  const double decode_s = out_.mean() * tpot_s;
  const double load_s = est_.prefill_s(model, r.prompt_tokens - per_worker_[pick], per_worker_[pick]) + decode_s;
  view_.record(r, pick);
  const IndexNodeId top = view_.last_path().empty() || !view_.alive(view_.last_path().front()) ? 0 : view_.last_path().front();
  const std::uint32_t gen = top != 0 ? view_.generation(top) : 0;
  history_.push_back(WindowEntry{now, pick, load_s, top, gen});
  load_[pick] += load_s;
  routed_[r.id] = Routed{pick, history_base_ + history_.size() - 1, tpot_s, decode_s, top, gen};
  for (IndexNodeId x : view_.last_path())  // the counters of the request's new blocks are cold: asked for at once
    if (x < node_hits_.size()) __builtin_prefetch(&node_hits_[x]);
  for (IndexNodeId x : view_.last_path()) {
    if (!view_.alive(x)) continue;
    NodeHits& h = hits(x, view_.generation(x));
    if (now - h.hits_since >= o_.window) {
      h.hits = 0;
      h.hits_since = now;
    }
    h.hits++;
  }
  return pick;
}

void PrebleE2Policy::on_finish(const RequestSpec& r, WorkerId, Time now) {
  out_.add(r.output_tokens);
  const Routed* found = routed_.find(r.id);
  if (found == nullptr) return;
  const Routed d = *found;
  routed_.erase(r.id);
  // Its decode leaves the load: L counts the decode of active requests only
  // (Preble's code: active requests × output length × TPOT). Its prefill stays
  // until the window drops the entry.
  if (d.entry >= history_base_) {
    WindowEntry& e = history_[d.entry - history_base_];
    e.load_s -= d.decode_s;
    load_[e.worker] -= d.decode_s;  // its worker now: a rebalance may have moved it
  }
  // TTFT sample for the subtree's overload detector.
  if (d.top == 0 || !view_.alive(d.top) || view_.generation(d.top) != d.generation) return;
  NodeStats& s = stats(d.top);
  if (s.samples == 0) sampled_.emplace_back(d.top, d.generation);
  const double e2e = time_to_seconds(now - r.arrival);
  s.ttft_sum += std::max(0.0, e2e - static_cast<double>(r.output_tokens) * d.tpot_s);
  s.samples++;
}

void PrebleE2Policy::check(Time now) {
  counts_.checks++;
  const std::size_t n = load_.size();
  // Replication: subtrees whose mean TTFT since the last check doubled over their lowest level.
  // The subtrees checked are those some worker holds (its tops list); each one's
  // check reads and writes its own stats only, so the order does not matter. A
  // subtree with samples that no worker holds now keeps them for a later check;
  // one whose node died (or was reused) has no stats to check: its slot's stats
  // reset when next used.
  if (o_.replicate) {
    std::size_t kept = 0;
    for (const auto& [t, generation] : sampled_) {
      if (!view_.alive(t) || view_.generation(t) != generation) continue;
      NodeStats& s = stats(t);
      if (!view_.held(t) || s.samples < kMinSamples) {
        sampled_[kept++] = {t, generation};
        continue;
      }
      const double mean = s.ttft_sum / s.samples;
      s.ttft_sum = 0;
      s.samples = 0;
      if (s.lowest <= 0 || mean < s.lowest || now - s.lowest_since >= o_.window) {
        s.lowest = mean;
        s.lowest_since = now;
      } else if (mean >= o_.replicate_factor * s.lowest) {
        s.replicate = true;
        s.lowest = mean;
        s.lowest_since = now;
      }
    }
    sampled_.resize(kept);
  }
  if (!o_.rebalance) return;
  WorkerId heavy = 0, light = 0;
  for (WorkerId w = 1; w < n; ++w) {
    if (load_[w] > load_[heavy]) heavy = w;
    if (load_[w] < load_[light]) light = w;
  }
  if (heavy == light || load_[heavy] <= 0 || load_[heavy] < o_.rebalance_ratio * load_[light]) return;
  // The heavy worker's subtrees and their window loads (in its recency order: deterministic).
  std::vector<std::pair<IndexNodeId, double>> tops;
  view_.visit_tops(heavy, [&](IndexNodeId t) { tops.emplace_back(t, 0.0); });
  if (tops.empty()) return;
  std::unordered_map<IndexNodeId, std::size_t> at;  // lookups only
  for (std::size_t i = 0; i < tops.size(); ++i) at.emplace(tops[i].first, i);
  for (const WindowEntry& e : history_) {
    if (e.worker != heavy || e.top == 0) continue;
    auto it = at.find(e.top);
    if (it != at.end() && view_.generation(e.top) == e.generation) tops[it->second].second += e.load_s;
  }
  std::stable_sort(tops.begin(), tops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  double gap = (load_[heavy] - load_[light]) / 2;
  std::vector<IndexNodeId> move;
  for (const auto& [t, l] : tops)
    if (l > 0 && l <= gap) {
      move.push_back(t);
      gap -= l;
    }
  if (move.empty()) {  // none fits in half the gap: the one whose move narrows the gap most, if any does
    double best = load_[heavy] - load_[light];
    for (const auto& [t, l] : tops) {
      const double after = std::abs((load_[heavy] - l) - (load_[light] + l));
      if (l > 0 && after < best) {
        best = after;
        move.assign(1, t);
      }
    }
  }
  for (IndexNodeId t : move) {
    const std::uint32_t gen = view_.generation(t);
    view_.move_subtree(t, heavy, light);
    for (WindowEntry& e : history_)
      if (e.worker == heavy && e.top == t && e.generation == gen) {
        e.worker = light;
        load_[heavy] -= e.load_s;
        load_[light] += e.load_s;
      }
    counts_.moved_subtrees++;
  }
}

const OptionTable<PrebleE2Options>& preble_e2_option_table() {
  using R = OptionRange;
  static const OptionTable<PrebleE2Options> t = {
      {"window_s", seconds(&PrebleE2Options::window), R::kPositive, "history window"},
      {"rebalance", &PrebleE2Options::rebalance, R::kAny, "load rebalancing by subtree moves"},
      {"rebalance_ratio", &PrebleE2Options::rebalance_ratio, R::kAtLeastOne, "load ratio that triggers a rebalance"},
      {"rebalance_every", &PrebleE2Options::rebalance_every, R::kPositive,
       "requests routed per worker between two checks"},
      {"replicate", &PrebleE2Options::replicate, R::kAny, "hot-prefix replication on TTFT overload"},
      {"replicate_factor", &PrebleE2Options::replicate_factor, R::kAboveOne, "overload factor that triggers replication"},
      {"view", choice(&PrebleE2Options::cluster_view, "cluster", "index"), R::kAny,
       "index: its own tree; cluster: every tier and the store, from the engine", kOptionMax, 0,
       [](const PrebleE2Options& o) { return o.cluster_view; }},
  };
  return t;
}

}  // namespace servesim
