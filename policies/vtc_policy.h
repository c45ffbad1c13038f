// VtcPolicy: Virtual Token Counter fair scheduling (Sheng et al., "Fairness
// in Serving Large Language Models", OSDI 2024; seed 004).
//
// One counter per client. Each step, repeatedly admit the oldest waiting
// request of the client with the smallest counter (ties: lower client index)
// until a request does not fit. Charging: w_in per input token when a request
// is first admitted (all prompt tokens by default, VTC's measure; `charge:
// extend` charges only the tokens not found in the prefix cache), and w_out
// per output token as it is generated. A request re-admitted after a
// preemption is not charged again (the recomputation was the engine's choice).
//
// Counter lift: when a client's queue goes from empty to non-empty its counter
// is raised (never lowered) to the smallest counter among clients with queued
// requests, or, when no client has any, to the CURRENT counter of the last
// client whose queue emptied (it keeps growing while that client's requests
// decode; the VTC paper's Algorithm 2 reads it at lift time) — so idle time
// earns no credit.
//
// One instance per worker: counters are per worker (VTC is a single-server
// algorithm; D²LPM is the distributed extension).
#pragma once
#include <algorithm>
#include <deque>
#include <set>
#include <vector>

#include "sim/core/option_table.h"
#include "sim/core/service_weights.h"
#include "sim/core/yaml_map.h"
#include "policies/local_policy.h"
#include "policies/policy_registry.h"

namespace servesim {

struct VtcOptions {
  double w_in = kDefaultWIn;
  double w_out = kDefaultWOut;
  bool charge_extend = false;  // false: all prompt tokens (VTC); true: uncached prompt tokens only
};

class VtcPolicy final : public LocalPolicy {
 public:
  explicit VtcPolicy(VtcOptions o) : o_(o) {}

  void enqueue(const QueuedRequest& r) override {
    const ClientId c = r.spec->client;
    grow(c);
    if (queues_[c].empty()) {
      // Counter lift (monitoring stream).
      const double floor = !active_.empty() ? active_.begin()->first : has_left_ ? counter_[last_left_] : 0.0;
      counter_[c] = std::max(counter_[c], floor);
      active_.insert({counter_[c], c});
    }
    if (r.preempted)
      queues_[c].push_front(r);
    else
      queues_[c].push_back(r);
    ++size_;
  }
  std::size_t queued() const override { return size_; }

  void schedule(AdmissionContext& ctx) override {
    while (!active_.empty()) {
      const ClientId c = active_.begin()->second;
      const QueuedRequest q = queues_[c].front();
      const std::int64_t cached = o_.charge_extend ? ctx.cached_tokens(q) : 0;
      if (ctx.try_admit(q) != AdmitResult::kAdmitted) return;
      if (!q.preempted) charge(c, o_.w_in * static_cast<double>(q.spec->prompt_tokens - cached));  // while still active
      queues_[c].pop_front();
      --size_;
      if (queues_[c].empty()) {
        active_.erase({counter_[c], c});
        last_left_ = c;
        has_left_ = true;
      }
    }
  }

  void on_decode_tokens(ClientId c, std::int64_t tokens) override {
    grow(c);
    charge(c, o_.w_out * static_cast<double>(tokens));
  }
  bool counts_decode_tokens() const override { return true; }
  bool finish_ignores_decode_tokens() const override { return true; }  // no on_finish
  void on_decode_token_each(ClientId c, std::int64_t n) override {  // n charges of one token, one re-keying
    grow(c);
    const bool active = !queues_[c].empty();
    if (active) active_.erase({counter_[c], c});
    counter_[c] = charge_repeated(counter_[c], o_.w_out * 1.0, n);
    if (active) active_.insert({counter_[c], c});
  }

  double counter(ClientId c) const { return c < counter_.size() ? counter_[c] : 0.0; }

 private:
  void grow(ClientId c) {
    if (c >= counter_.size()) {
      counter_.resize(c + 1, 0.0);
      queues_.resize(c + 1);
    }
  }
  void charge(ClientId c, double amount) {
    const bool active = !queues_[c].empty();
    if (active) active_.erase({counter_[c], c});
    counter_[c] += amount;
    if (active) active_.insert({counter_[c], c});
  }

  VtcOptions o_;
  std::vector<double> counter_;
  std::vector<std::deque<QueuedRequest>> queues_;
  std::set<std::pair<double, ClientId>> active_;  // clients with queued requests, by counter
  ClientId last_left_ = 0;  // the last client whose queue emptied (valid when has_left_)
  bool has_left_ = false;
  std::size_t size_ = 0;
};

// The parameters of `local: {name: vtc, ...}`.
inline const OptionTable<VtcOptions>& vtc_option_table() {
  using R = OptionRange;
  static const OptionTable<VtcOptions> t = {
      {"w_in", &VtcOptions::w_in, R::kNonNegative, "weight per input token"},
      {"w_out", &VtcOptions::w_out, R::kNonNegative, "weight per output token"},
      {"charge", choice(&VtcOptions::charge_extend, "extend", "prompt"), R::kAny,
       "prompt: all prompt tokens (VTC); extend: only tokens not in the prefix cache"},
  };
  return t;
}

inline VtcOptions parse_vtc_options(YamlMap& p) { return parse_policy_options(p, vtc_option_table()); }

}  // namespace servesim
