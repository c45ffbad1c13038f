// The bounded history behind fairness over the measurement window; see fairness_window.h.
#include "reports/fairness_window.h"

#include <algorithm>
#include <limits>

namespace servesim {

void FairnessHistory::on_arrival(Time t) {
  if (w_.cooldown_requests <= 0) return;
  recent_.push_back(t);
  if (recent_.size() > static_cast<std::size_t>(w_.cooldown_requests)) recent_.pop_front();
}

Time FairnessHistory::earliest_end(Time now) const {
  if (w_.cooldown_requests > 0)
    return recent_.size() == static_cast<std::size_t>(w_.cooldown_requests) ? recent_.front()
                                                                             : std::numeric_limits<Time>::min();
  if (w_.cooldown > 0) return now - w_.cooldown;
  return now;
}

void FairnessHistory::begin(Time start, std::vector<ClientState> clients, const WindowAggregates& a) {
  begun_ = true;
  start_ = start;
  start_states_ = clients;
  base_ = std::move(clients);
  snaps_.assign(1, a);
  entries_.clear();
}

void FairnessHistory::aggregates(const WindowAggregates& a, Time now) {
  if (!snaps_.empty() && snaps_.back().t == a.t)
    snaps_.back() = a;
  else
    snaps_.push_back(a);
  prune(now);
}

void FairnessHistory::client(Time t, ClientId c, const ClientState& s) { entries_.push_back({t, c, s}); }

void FairnessHistory::prune(Time now) {
  const Time e = earliest_end(now);
  pruned_to_ = std::max(pruned_to_, e);
  while (snaps_.size() >= 2 && snaps_[1].t <= e) snaps_.pop_front();
  while (!entries_.empty() && entries_.front().t <= e) {
    const Entry& x = entries_.front();
    if (base_.size() <= x.c) base_.resize(x.c + 1);
    base_[x.c] = x.s;
    entries_.pop_front();
  }
}

std::optional<FairnessHistory::At> FairnessHistory::at(Time end) const {
  if (!begun_ || snaps_.empty() || snaps_.front().t > end || end < pruned_to_) return std::nullopt;
  At r;
  auto it = std::upper_bound(snaps_.begin(), snaps_.end(), end,
                             [](Time t, const WindowAggregates& a) { return t < a.t; });
  r.a = *std::prev(it);
  const Time dt = end - r.a.t;
  r.a.area += r.a.slope * static_cast<double>(dt);
  r.a.area_e += r.a.slope_e * static_cast<double>(dt);
  r.a.joint += r.a.open * dt;
  r.a.t = end;
  r.clients = base_;
  for (const Entry& x : entries_) {
    if (x.t > end) break;
    if (r.clients.size() <= x.c) r.clients.resize(x.c + 1);
    r.clients[x.c] = x.s;
  }
  return r;
}

}  // namespace servesim
