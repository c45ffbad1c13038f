// Service and fairness accounting; see fairness_tracker.h.
#include "reports/fairness_tracker.h"

#include <algorithm>
#include <cmath>

namespace servesim {

FairnessTracker::FairnessTracker(double w_in, double w_out, Time sample_interval)
    : w_in_(w_in), w_out_(w_out), interval_(std::max<Time>(1, sample_interval)) {}

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
}

void FairnessTracker::advance(Time t) {
  if (open_.empty()) {
    next_tick_ = t;
    dirty_ = false;
  }
  while (next_tick_ < t) {
    if (!dirty_) {  // nothing changed: skip to the first tick at or after t
      next_tick_ += (t - next_tick_ + interval_ - 1) / interval_ * interval_;
      break;
    }
    for (auto& [ij, p] : open_) sample(p, ij.first, ij.second, next_tick_);
    dirty_ = false;
    next_tick_ += interval_;
  }
  now_ = t;
}

void FairnessTracker::close(ClientId i, ClientId j, Time t) {
  auto it = open_.find({std::min(i, j), std::max(i, j)});
  sample(it->second, it->first.first, it->first.second, t);
  open_.erase(it);
}

void FairnessTracker::set_backlogged(ClientId c, bool on, Time t) {
  if (on) {
    for (ClientId o : backlogged_) {
      const ClientId i = std::min(c, o), j = std::max(c, o);
      Pair p;
      p.d0 = p.d_max = p.d_min = s_[i] - s_[j];
      p.e0 = p.e_max = p.e_min = e_[i] - e_[j];
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
    s_[c] += w_in_ * static_cast<double>(spec.prompt_tokens);
    e_[c] += w_in_ * static_cast<double>(spec.prompt_tokens - cached);
    dirty_ = true;
  }
  if (--waiting_[c] == 0) set_backlogged(c, false, t);
}

void FairnessTracker::on_output_tokens(ClientId c, Time t, std::int64_t n) {
  grow(c);
  if (t > now_) advance(t);
  s_[c] += w_out_ * static_cast<double>(n);
  e_[c] += w_out_ * static_cast<double>(n);
  dirty_ = true;
}

void FairnessTracker::finish(Time end) {
  advance(std::max(end, now_));
  std::vector<ClientId> still(backlogged_.begin(), backlogged_.end());
  for (ClientId c : still) set_backlogged(c, false, now_);
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

}  // namespace servesim
