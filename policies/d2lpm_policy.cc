// D²LPM global layer; see d2lpm_policy.h.
#include "policies/d2lpm_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/error.h"

namespace servesim {

std::vector<double>& D2lpmPolicy::counters(ClientId c) {
  if (c >= q_.size()) q_.resize(c + 1);
  // A client's first round: one quantum on every worker (see the header).
  if (q_[c].empty()) q_[c].assign(view_.workers(), o_.quantum);
  return q_[c];
}

void D2lpmPolicy::apply(const RequestSpec& prompt, WorkerId w, ClientId client, std::int64_t output_tokens,
                        GlobalPrefixIndex::RecordedPath& path) {
  view_.record(prompt, w, &path);
  counters(client)[w] -= o_.w_out * static_cast<double>(output_tokens);
  Active& a = active_[w];
  if (--a.outstanding[client] == 0) a.list.erase(std::find(a.list.begin(), a.list.end(), client));
  path.clear();
  spare_paths_.push_back(std::move(path));
}

void D2lpmPolicy::apply_due(Time now) {
  while (!pending_.empty() && pending_.front().at <= now) {
    Update& u = pending_.front();
    apply(u.prompt, u.worker, u.client, u.output_tokens, u.path);
    u.prompt.prefix_blocks.clear();
    spare_blocks_.push_back(std::move(u.prompt.prefix_blocks));
    pending_.pop_front();
  }
}

// qa: the arriving client's counters. Every client in a worker's active list
// was routed, so its counters exist already (q_[c], not counters(c)).
void D2lpmPolicy::refill(WorkerId w, ClientId arriving, std::vector<double>& qa) {
  double k = std::floor(-qa[w] / o_.quantum) + 1;
  if (k <= 0) return;  // the arriving client is positive here
  const Active& a = active_[w];
  for (ClientId c : a.list) {
    const double x = q_[c][w];
    if (x > 0) return;
    k = std::min(k, std::floor(-x / o_.quantum) + 1);
  }
  refills_ += static_cast<std::int64_t>(k);
  for (ClientId c : a.list) q_[c][w] += k * o_.quantum;
  const bool arriving_active = arriving < a.outstanding.size() && a.outstanding[arriving] > 0;
  if (!arriving_active) qa[w] += k * o_.quantum;
}

WorkerId D2lpmPolicy::route(const RequestSpec& r, const ClusterView& c) {
  const std::size_t n = c.workers();
  if (!sized_) {
    for (WorkerId w = 0; w < n; ++w) {
      const WorkerLoad l = c.load(w);
      view_.set_capacity(w, l.kv_capacity_pages * l.page_size);
    }
    sized_ = true;
  }
  apply_due(c.now());
  std::vector<double>& q = counters(r.client);  // the only call that may grow q_ here
  for (WorkerId w = 0; w < n; ++w) refill(w, r.client, q);
  std::int64_t matched = 0;
  walked_.clear();  // the view's walk of this prompt, if it takes one: record()'s hint below
  if (walked_.capacity() == 0 && !spare_paths_.empty()) {  // a path buffer an applied update left
    walked_ = std::move(spare_paths_.back());
    spare_paths_.pop_back();
  }
  if (o_.cluster_view) {
    per_worker_.resize(n);
    for (WorkerId w = 0; w < n; ++w) {
      per_worker_[w] = c.locality(w, r).total();
      matched = std::max(matched, per_worker_[w]);
    }
  } else {
    matched = view_.match(r, per_worker_, &walked_).tokens;
  }
  WorkerId best = 0;
  std::int64_t best_queue = std::numeric_limits<std::int64_t>::max();
  bool found = false;
  auto consider = [&](WorkerId w) {
    const std::int64_t queue = c.outstanding(w);  // load(w)'s waiting + running, without the rest of it
    if (queue < best_queue) {
      best_queue = queue;
      best = w;
      found = true;
    }
  };
  if (matched > 0)
    for (WorkerId w = 0; w < n; ++w)
      if (per_worker_[w] == matched && q[w] > 0) consider(w);
  if (!found)
    for (WorkerId w = 0; w < n; ++w) consider(w);
  q[best] -= o_.w_in * static_cast<double>(r.prompt_tokens - (o_.charge_extend ? per_worker_[best] : 0));
  Routed& routed = routed_[r.id];
  // The path starts as the match's walk (nothing changed the view since), so
  // record() does not walk those blocks again; it then leaves the whole path there.
  if (++routed.in_flight == 1) {
    routed.path.swap(walked_);  // (walked_ takes routed.path's old buffer, cleared before its next use)
    view_.record(r, best, &routed.path);
  } else {
    view_.record(r, best, &walked_);  // an id shared by requests in flight: its path is not kept
  }
  Active& a = active_[best];
  if (a.outstanding.size() <= r.client) a.outstanding.resize(r.client + 1, 0);
  if (a.outstanding[r.client]++ == 0) a.list.push_back(r.client);
  return best;
}

void D2lpmPolicy::on_finish(const RequestSpec& r, WorkerId w, Time now) {
  GlobalPrefixIndex::RecordedPath path;
  // The path routing recorded for this request, unless another one with its id was routed meanwhile.
  if (Routed* routed = routed_.find(r.id); routed != nullptr && --routed->in_flight == 0) {
    path = std::move(routed->path);
    routed_.erase(r.id);
  }
  // Updates are applied in finish order, each once its time has come. Without a
  // delay this one's time is now: the earlier ones due go first, then this one, at
  // once (nothing else is pending: their times are at most now), from the request
  // itself, with no copy of its blocks.
  apply_due(now);
  if (o_.update_delay <= 0) {
    SIM_CHECK(pending_.empty(), "d2lpm: an update due by now is still pending after a finish at {} ns", now);
    apply(r, w, r.client, r.output_tokens, path);
    return;
  }
  Update u{now + o_.update_delay, w, r.client, r.output_tokens, RequestSpec{}, std::move(path)};
  u.prompt.prompt_tokens = r.prompt_tokens;
  u.prompt.prefix_block_size = r.prefix_block_size;
  if (!spare_blocks_.empty()) {  // a copy of the blocks, into a vector an earlier update left
    u.prompt.prefix_blocks = std::move(spare_blocks_.back());
    spare_blocks_.pop_back();
  }
  u.prompt.prefix_blocks.assign(r.prefix_blocks.begin(), r.prefix_blocks.end());
  pending_.push_back(std::move(u));  // (due after now: the delay is > 0 here)
}

const OptionTable<D2lpmOptions>& d2lpm_option_table() {
  using R = OptionRange;
  static const OptionTable<D2lpmOptions> t = {
      {"quantum", &D2lpmOptions::quantum, R::kPositive, "Q^g, refill per (client, worker) and round"},
      {"w_in", &D2lpmOptions::w_in, R::kNonNegative, "charge per input token"},
      {"w_out", &D2lpmOptions::w_out, R::kNonNegative, "charge per output token"},
      {"charge", choice(&D2lpmOptions::charge_extend, "extend", "prompt"), R::kAny,
       "extend: tokens the view says the worker lacks; prompt: all prompt tokens"},
      {"update_delay_s", seconds(&D2lpmOptions::update_delay), R::kNonNegative,
       "delay between a finish and its counter update"},
      {"view", choice(&D2lpmOptions::cluster_view, "cluster", "index"), R::kAny,
       "index: its own prefix view; cluster: every tier and the store, from the engine", kOptionMax, 0,
       [](const D2lpmOptions& o) { return o.cluster_view; }},
  };
  return t;
}

}  // namespace servesim
