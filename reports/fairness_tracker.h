// FairnessTracker: per-client service over time and the fairness measures of
// VTC (Sheng et al., "Fairness in Serving Large Language Models", OSDI 2024)
// and DLPM (Cao et al., 2025), fed by the engine's service hooks
// (RunObserver::on_queued / on_admitted / on_output_tokens).
//
// Service of a client, in two flavours that differ in which input tokens count:
//   service        = w_in · prompt tokens (all, cached included) + w_out · output tokens
//   extend_service = w_in · uncached prompt tokens             + w_out · output tokens
// Input is credited when a request is first admitted (re-admissions after a
// preemption add nothing), output as each token is generated (the token that
// ends a prefill included).
//
// Backlogged: a client with at least one request waiting in some worker's
// queue. For every pair of clients, over each interval in which BOTH are
// backlogged, let D(t) = S_i(t) − S_j(t) (cumulative service). Reported:
//   *_diff_max:  the largest max D − min D over any such interval — VTC's
//                measure, the largest |service difference| over any
//                sub-interval during which both stayed backlogged;
//   *_diff_mean: the time average, over all jointly backlogged time of all
//                pairs, of |D(t) − D(start of the interval)|.
// D is sampled at backlog transitions and every `sample_interval` of
// simulated time (default 50 ms), so extremes within one sample interval can
// be missed by at most the service delivered in it.
// Jain's index of service rate: (Σ x_c)² / (n · Σ x_c²) over the n clients
// with requests, x_c = service_c / run duration (1 = equal service).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sim/core/request.h"
#include "sim/core/time.h"

namespace servesim {

class FairnessTracker {
 public:
  FairnessTracker(double w_in, double w_out, Time sample_interval = 50 * kNsPerMs);

  void on_queued(ClientId c, Time t);
  void on_admitted(const RequestSpec& spec, Time t, std::int64_t cached, bool first);
  void on_output_tokens(ClientId c, Time t, std::int64_t n);
  // Closes every open interval at `end` (requests still waiting stay backlogged until then).
  void finish(Time end);

  struct Measures {
    double diff_max = 0, diff_mean = 0;  // service (all prompt tokens)
    double extend_diff_max = 0, extend_diff_mean = 0;
    double jain = 1, jain_extend = 1;
  };
  // REQUIRES: finish() was called. `clients` = number of clients in the run.
  Measures measures(std::size_t clients, double span_s) const;
  double service(ClientId c) const { return c < s_.size() ? s_[c] : 0.0; }
  double extend_service(ClientId c) const { return c < e_.size() ? e_[c] : 0.0; }
  bool backlogged(ClientId c) const { return backlogged_.count(c) > 0; }
  std::size_t clients() const { return s_.size(); }  // highest client id seen + 1
  double backlogged_s(ClientId c) const { return c < backlogged_ns_.size() ? time_to_seconds(backlogged_ns_[c]) : 0.0; }

 private:
  struct Pair {
    double d0 = 0, d_max = 0, d_min = 0;     // D = S_i - S_j: at start, extremes
    double e0 = 0, e_max = 0, e_min = 0;     // same for extend service
    double last_abs = 0, last_abs_e = 0;     // |D - D0| at the last sample
    Time last_t = 0;
  };
  void grow(ClientId c);
  void advance(Time t);                // samples every open pair at ticks up to t
  void sample(Pair& p, ClientId i, ClientId j, Time t);
  void close(ClientId i, ClientId j, Time t);
  void set_backlogged(ClientId c, bool on, Time t);

  double w_in_, w_out_;
  Time interval_;
  Time next_tick_ = 0;
  bool dirty_ = false;  // service changed since the last tick
  std::vector<double> s_, e_;           // cumulative service per client
  std::vector<std::int64_t> waiting_;   // queued requests per client
  std::vector<Time> backlogged_since_, backlogged_ns_;
  std::set<ClientId> backlogged_;
  std::map<std::pair<ClientId, ClientId>, Pair> open_;  // i < j, both backlogged
  double max_ = 0, max_e_ = 0;
  double area_ = 0, area_e_ = 0;        // ∫ |D - D0| dt, in service·ns
  Time joint_ns_ = 0;
  Time now_ = 0;
};

}  // namespace servesim
