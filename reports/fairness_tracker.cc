// Service and fairness accounting; see fairness_tracker.h.
#include "reports/fairness_tracker.h"

#include <algorithm>
#include <cmath>

namespace servesim {

FairnessTracker::FairnessTracker(double w_in, double w_out, Time sample_interval)
    : w_in_(w_in),
      w_out_(w_out),
      w_out_integral_(std::isfinite(w_out) && w_out == std::trunc(w_out) && std::fabs(w_out) < kExactWeight),
      fast_ok_(w_out_integral_),
      interval_(std::max<Time>(1, sample_interval)) {}

// An input or output credit of add_s to a client's service and add_e to its
// extend service, both applied: fast_ok_ stays on only while every sum is
// provably still an exact integer within bound_ < 2^53.
void FairnessTracker::note_added(double add_s, double add_e) {
  if (!fast_ok_) return;
  const double m = std::max(std::fabs(add_s), std::fabs(add_e));  // NaN: fails the test below
  const auto integral = [](double x) { return x == static_cast<double>(static_cast<std::int64_t>(x)); };
  if (!(m < kExactLimit) || !integral(add_s) || !integral(add_e) || !(bound_ + m < kExactLimit)) {
    fast_ok_ = false;
    return;
  }
  bound_ += m;
}

void FairnessTracker::grow(ClientId c) {
  if (c < s_.size()) return;
  s_.resize(c + 1, 0.0);
  e_.resize(c + 1, 0.0);
  waiting_.resize(c + 1, 0);
  backlogged_since_.resize(c + 1, 0);
  backlogged_ns_.resize(c + 1, 0);
}

void FairnessTracker::sample(Pair& p, ClientId i, ClientId j, Time t) {
  const double d = s_[i] - s_[j], e = e_[i] - e_[j];
  area_ += p.last_abs * static_cast<double>(t - p.last_t);
  area_e_ += p.last_abs_e * static_cast<double>(t - p.last_t);
  joint_ns_ += t - p.last_t;
  p.last_t = t;
  p.d_max = std::max(p.d_max, d);
  p.d_min = std::min(p.d_min, d);
  p.e_max = std::max(p.e_max, e);
  p.e_min = std::min(p.e_min, e);
  p.last_abs = std::abs(d - p.d0);
  p.last_abs_e = std::abs(e - p.e0);
  max_ = std::max(max_, p.d_max - p.d_min);
  max_e_ = std::max(max_e_, p.e_max - p.e_min);
  if (!win_on_) return;
  p.wd_max = std::max(p.wd_max, d);
  p.wd_min = std::min(p.wd_min, d);
  p.we_max = std::max(p.we_max, e);
  p.we_min = std::min(p.we_min, e);
  const double a = std::abs(d - p.wd0), ae = std::abs(e - p.we0);
  wslope_ += a - p.wabs;
  wslope_e_ += ae - p.wabs_e;
  p.wabs = a;
  p.wabs_e = ae;
  wmax_ = std::max(wmax_, p.wd_max - p.wd_min);
  wmax_e_ = std::max(wmax_e_, p.we_max - p.we_min);
}

void FairnessTracker::advance(Time t) {
  if (win_at_ && *win_at_ <= t) {
    const Time start = *win_at_;
    win_at_.reset();
    step(start);
    start_window(start);
  }
  step(t);
}

void FairnessTracker::step(Time t) {
  // Pairs opened or closed at now_: one snapshot of the state they left, at
  // most one per grid interval (when a grid point lies before the next hook).
  if (wagg_dirty_ && (now_ + interval_ - 1) / interval_ * interval_ < t) {
    hist_->aggregates(window_aggregates(now_), now_);
    wagg_dirty_ = false;
  }
  if (open_.empty()) {
    next_tick_ = t;
    dirty_ = false;
  }
  while (next_tick_ < t) {
    if (!dirty_) {  // nothing changed: skip to the first tick at or after t
      next_tick_ += (t - next_tick_ + interval_ - 1) / interval_ * interval_;
      break;
    }
    integrate(next_tick_);
    for (auto& [ij, p] : open_) sample(p, ij.first, ij.second, next_tick_);
    if (win_on_) {  // exact sums again (no drift from the incremental updates)
      wslope_ = wslope_e_ = 0;
      for (const auto& [ij, p] : open_) {
        wslope_ += p.wabs;
        wslope_e_ += p.wabs_e;
      }
      hist_->aggregates(window_aggregates(next_tick_), next_tick_);
    }
    dirty_ = false;
    next_tick_ += interval_;
  }
  integrate(t);
  record_clients(t);
  now_ = t;
}

void FairnessTracker::close(ClientId i, ClientId j, Time t) {
  auto it = open_.find({std::min(i, j), std::max(i, j)});
  sample(it->second, it->first.first, it->first.second, t);
  if (win_on_) {
    wslope_ -= it->second.wabs;
    wslope_e_ -= it->second.wabs_e;
  }
  open_.erase(it);
}

void FairnessTracker::set_backlogged(ClientId c, bool on, Time t) {
  if (on) {
    for (ClientId o : backlogged_) {
      const ClientId i = std::min(c, o), j = std::max(c, o);
      Pair p;
      p.d0 = p.d_max = p.d_min = s_[i] - s_[j];
      p.e0 = p.e_max = p.e_min = e_[i] - e_[j];
      p.wd0 = p.wd_max = p.wd_min = p.d0;
      p.we0 = p.we_max = p.we_min = p.e0;
      p.last_t = t;
      open_.emplace(std::make_pair(i, j), p);
    }
    backlogged_.insert(c);
    backlogged_since_[c] = t;
  } else {
    backlogged_.erase(c);
    for (ClientId o : backlogged_) close(c, o, t);
    backlogged_ns_[c] += t - backlogged_since_[c];
  }
  if (win_on_) {
    if (open_.empty()) wslope_ = wslope_e_ = 0;  // exact when nothing is open
    mark(c);
    wagg_dirty_ = true;
  }
}

void FairnessTracker::on_queued(ClientId c, Time t) {
  grow(c);
  advance(t);
  if (waiting_[c]++ == 0) set_backlogged(c, true, t);
}

void FairnessTracker::on_admitted(const RequestSpec& spec, Time t, std::int64_t cached, bool first) {
  const ClientId c = spec.client;
  grow(c);
  advance(t);
  if (first) {
    const double add_s = w_in_ * static_cast<double>(spec.prompt_tokens);
    const double add_e = w_in_ * static_cast<double>(spec.prompt_tokens - cached);
    s_[c] += add_s;
    e_[c] += add_e;
    note_added(add_s, add_e);
    dirty_ = true;
    if (win_on_) mark(c);
  }
  if (--waiting_[c] == 0) set_backlogged(c, false, t);
}

void FairnessTracker::on_output_tokens_checked(ClientId c, Time t, std::int64_t n) {
  grow(c);
  if (t > now_) advance(t);
  // The engine reports an iteration's tokens per client in one call, and the
  // sums must equal those of n calls of one token bit for bit. With an integral
  // weight and integral sums below 2^53 every partial sum is an exact integer, so
  // one multiply-add gives the same bits; otherwise one token at a time.
  double s = s_[c], e = e_[c];
  const double add = w_out_ * static_cast<double>(n);
  // (The magnitudes are checked first: NaN fails them, and the integer casts
  // are then defined. A cast, not std::trunc, which is a libm call here.)
  const double m = std::fabs(add);
  if (w_out_integral_ && n > 0 && n <= kExactTokens && std::fabs(s) + m < kExactLimit &&
      std::fabs(e) + m < kExactLimit && s == static_cast<double>(static_cast<std::int64_t>(s)) &&
      e == static_cast<double>(static_cast<std::int64_t>(e))) {
    s += add;
    e += add;
    note_added(add, add);
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      s += w_out_;
      e += w_out_;
    }
    if (n > 0) fast_ok_ = false;  // the sums are no longer known to be small integers
  }
  s_[c] = s;
  e_[c] = e;
  dirty_ = true;
  if (win_on_) mark(c);
}

void FairnessTracker::finish(Time end) {
  advance(std::max(end, now_));
  std::vector<ClientId> still(backlogged_.begin(), backlogged_.end());
  for (ClientId c : still) set_backlogged(c, false, now_);
  if (win_on_) {  // every client's exact final state
    hist_->aggregates(window_aggregates(now_), now_);
    for (ClientId c = 0; c < s_.size(); ++c) hist_->client(now_, c, client_state(c));
    wchanged_list_.clear();
    std::fill(wchanged_.begin(), wchanged_.end(), 0);
  }
}

FairnessTracker::Measures FairnessTracker::measures(std::size_t clients, double span_s) const {
  Measures m;
  m.diff_max = max_;
  m.extend_diff_max = max_e_;
  if (joint_ns_ > 0) {
    m.diff_mean = area_ / static_cast<double>(joint_ns_);
    m.extend_diff_mean = area_e_ / static_cast<double>(joint_ns_);
  }
  auto jain = [&](const std::vector<double>& v) {
    double sum = 0, sq = 0;
    const std::size_t n = std::max(clients, v.size());
    for (std::size_t c = 0; c < v.size(); ++c) {
      const double x = v[c] / span_s;
      sum += x;
      sq += x * x;
    }
    return sq > 0 ? sum * sum / (static_cast<double>(n) * sq) : 1.0;
  };
  m.jain = jain(s_);
  m.jain_extend = jain(e_);
  return m;
}

// ---- measurement window ------------------------------------------------

void FairnessTracker::enable_window(const WindowOptions& w) { hist_ = std::make_unique<FairnessHistory>(w); }

void FairnessTracker::on_arrival(Time t) {
  if (!hist_) return;
  hist_->on_arrival(t);
  const WindowOptions& w = hist_->options();
  if (arrivals_++ == 0) first_arrival_ = t;
  if (win_on_ || win_at_) return;
  if (w.warmup_requests > 0) {
    if (arrivals_ == w.warmup_requests + 1) win_at_ = t;
  } else {
    win_at_ = first_arrival_ + w.warmup;
  }
  if (win_at_ && *win_at_ <= t) advance(t);
}

void FairnessTracker::start_window(Time t) {
  win_on_ = true;
  wmax_ = wmax_e_ = warea_ = warea_e_ = wslope_ = wslope_e_ = 0;
  wjoint_ = 0;
  wlast_ = t;
  for (auto& [ij, p] : open_) {
    p.wd0 = p.wd_max = p.wd_min = s_[ij.first] - s_[ij.second];
    p.we0 = p.we_max = p.we_min = e_[ij.first] - e_[ij.second];
    p.wabs = p.wabs_e = 0;
  }
  std::vector<ClientState> states(s_.size());
  for (ClientId c = 0; c < s_.size(); ++c) states[c] = client_state(c);
  hist_->begin(t, std::move(states), window_aggregates(t));
}

void FairnessTracker::integrate(Time t) {
  if (!win_on_ || t <= wlast_) return;
  const Time dt = t - wlast_;
  warea_ += wslope_ * static_cast<double>(dt);
  warea_e_ += wslope_e_ * static_cast<double>(dt);
  wjoint_ += static_cast<Time>(open_.size()) * dt;
  wlast_ = t;
}

WindowAggregates FairnessTracker::window_aggregates(Time t) const {
  WindowAggregates a;
  a.t = t;
  a.max = wmax_;
  a.max_e = wmax_e_;
  a.area = warea_;
  a.area_e = warea_e_;
  a.slope = wslope_;
  a.slope_e = wslope_e_;
  a.joint = wjoint_;
  a.open = static_cast<std::int64_t>(open_.size());
  return a;
}

ClientState FairnessTracker::client_state(ClientId c) const {
  ClientState st;
  st.s = s_[c];
  st.e = e_[c];
  st.bl = backlogged_ns_[c];
  st.since = backlogged_.count(c) ? backlogged_since_[c] : -1;
  return st;
}

void FairnessTracker::mark(ClientId c) {
  if (wchanged_.size() <= c) wchanged_.resize(c + 1, 0);
  if (!wchanged_[c]) {
    wchanged_[c] = 1;
    wchanged_list_.push_back(c);
  }
}

void FairnessTracker::record_clients(Time t) {
  if (!win_on_ || t <= 0) return;
  // The state after the hooks at now_ holds on [now_, t): record it at the
  // first grid point in there, if any (later grid points see the same state).
  const Time g = (now_ + interval_ - 1) / interval_ * interval_;
  if (g >= t || wchanged_list_.empty()) return;
  for (ClientId c : wchanged_list_) {
    hist_->client(g, c, client_state(c));
    wchanged_[c] = 0;
  }
  wchanged_list_.clear();
  hist_->prune(g);
}

std::optional<FairnessTracker::WindowMeasures> FairnessTracker::window_measures(Time start, Time end,
                                                                                std::size_t clients) const {
  if (!hist_) return std::nullopt;
  const std::size_t n = std::max(clients, s_.size());
  WindowMeasures r;
  r.service.assign(n, 0.0);
  r.extend_service.assign(n, 0.0);
  r.backlogged_s.assign(n, 0.0);
  if (!hist_->begun()) {  // the window began at or after the run's end: an empty span
    if (end <= start) return r;
    return std::nullopt;
  }
  if (hist_->start() != start) return std::nullopt;
  if (end <= start) return r;
  const auto at = hist_->at(end);
  if (!at) return std::nullopt;
  r.m.diff_max = at->a.max;
  r.m.extend_diff_max = at->a.max_e;
  if (at->a.joint > 0) {
    r.m.diff_mean = at->a.area / static_cast<double>(at->a.joint);
    r.m.extend_diff_mean = at->a.area_e / static_cast<double>(at->a.joint);
  }
  const std::vector<ClientState>& from = hist_->at_start();
  const double span = time_to_seconds(end - start);
  double sum = 0, sq = 0, sum_e = 0, sq_e = 0;
  for (std::size_t c = 0; c < n; ++c) {
    const ClientState a = c < from.size() ? from[c] : ClientState{};
    const ClientState b = c < at->clients.size() ? at->clients[c] : ClientState{};
    r.service[c] = b.s - a.s;
    r.extend_service[c] = b.e - a.e;
    r.backlogged_s[c] = time_to_seconds(b.backlogged_ns(end) - a.backlogged_ns(start));
    const double x = r.service[c] / span, xe = r.extend_service[c] / span;
    sum += x;
    sq += x * x;
    sum_e += xe;
    sq_e += xe * xe;
  }
  r.m.jain = sq > 0 ? sum * sum / (static_cast<double>(n) * sq) : 1.0;
  r.m.jain_extend = sq_e > 0 ? sum_e * sum_e / (static_cast<double>(n) * sq_e) : 1.0;
  return r;
}

}  // namespace servesim
