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
//
// Over the measurement window [start, end] (reports/window.h; enable_window):
// the same measures of the service DELIVERED during that time span, not of
// the service of the window's requests: fairness is a property of the
// schedule over time (who was served while both waited), and a request that
// arrived in the warm-up is still served, fairly or not, inside the window.
// Each jointly backlogged interval is clipped to [start, end] and D is
// measured from its value at the clipped interval's start; Jain's index uses
// x_c = (S_c(end) − S_c(start)) / (end − start); per client, the service and
// backlogged time inside the span. The start is known when it happens (first
// arrival + warmup_s, or the arrival of request warmup_requests + 1); the end
// is read from a bounded history at finish (reports/fairness_window.h).
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "reports/fairness_window.h"
#include "reports/window.h"
#include "sim/core/request.h"
#include "sim/core/time.h"

namespace servesim {

class FairnessTracker {
 public:
  FairnessTracker(double w_in, double w_out, Time sample_interval = 50 * kNsPerMs);

  void on_queued(ClientId c, Time t);
  void on_admitted(const RequestSpec& spec, Time t, std::int64_t cached, bool first);
  // n tokens are added one at a time (same sums as n calls with one token).
  // Inline: the engine calls it per client per iteration. While every service
  // sum is an integer below bound_ (fast_ok_, kept by the hooks that add to
  // them), one multiply-add is exact and gives those bits without testing the
  // client's sums (fairness_tracker.cc, on_output_tokens_checked).
  void on_output_tokens(ClientId c, Time t, std::int64_t n) {
    if (c < s_.size() && fast_ok_ && n > 0 && n <= kExactTokens) {
      const double add = w_out_ * static_cast<double>(n);
      const double bound = bound_ + std::fabs(add);
      if (bound < kExactLimit) {
        if (t > now_) advance(t);
        bound_ = bound;
        s_[c] += add;
        e_[c] += add;
        dirty_ = true;
        if (win_on_) mark(c);
        return;
      }
    }
    on_output_tokens_checked(c, t, n);
  }
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

  // The measurement window. enable_window: before any hook. on_arrival: every
  // arrival (RunObserver::on_arrival), in time order with the other hooks.
  void enable_window(const WindowOptions& w);
  void on_arrival(Time t);
  struct WindowMeasures {
    Measures m;
    std::vector<double> service, extend_service, backlogged_s;  // per client, inside [start, end]
  };
  // REQUIRES: finish() was called. The measures over [start, end] (an empty
  // span: no difference, Jain 1, no service). nullopt when the window was not
  // enabled or `start` is not where this tracker saw the window begin (an
  // observer that does not report arrivals).
  std::optional<WindowMeasures> window_measures(Time start, Time end, std::size_t clients) const;
  std::size_t window_history_kept() const { return hist_ ? hist_->kept() : 0; }

 private:
  struct Pair {
    double d0 = 0, d_max = 0, d_min = 0;     // D = S_i - S_j: at start, extremes
    double e0 = 0, e_max = 0, e_min = 0;     // same for extend service
    double last_abs = 0, last_abs_e = 0;     // |D - D0| at the last sample
    Time last_t = 0;
    // The same, from the window's start (or the pair's opening inside it).
    double wd0 = 0, wd_max = 0, wd_min = 0, we0 = 0, we_max = 0, we_min = 0, wabs = 0, wabs_e = 0;
  };
  void grow(ClientId c);
  void on_output_tokens_checked(ClientId c, Time t, std::int64_t n);
  // fast_ok_'s upkeep after adding add_s / add_e to a client's service sums.
  void note_added(double add_s, double add_e);
  void advance(Time t);                // starts the window when due, then step(t)
  void step(Time t);                   // samples every open pair at ticks up to t
  void start_window(Time t);
  void integrate(Time t);              // windowed time integrals up to t
  WindowAggregates window_aggregates(Time t) const;
  ClientState client_state(ClientId c) const;
  void mark(ClientId c);               // c's service or backlog changed (window running)
  void record_clients(Time t);         // changed clients at the last grid point before t
  void sample(Pair& p, ClientId i, ClientId j, Time t);
  void close(ClientId i, ClientId j, Time t);
  void set_backlogged(ClientId c, bool on, Time t);

  double w_in_, w_out_;
  // on_output_tokens' exact shortcut (fairness_tracker.cc): an integral w_out below
  // 2^20, at most 2^30 tokens per call, sums below 2^53 (every integer exact).
  static constexpr double kExactWeight = 1048576.0;      // 2^20
  static constexpr std::int64_t kExactTokens = 1 << 30;  // 2^30
  static constexpr double kExactLimit = 9007199254740992.0;  // 2^53
  bool w_out_integral_;
  // Every s_ and e_ is an integer and |each| <= bound_ < 2^53 (an integer too),
  // so an integral add with bound_ + |add| < 2^53 is exact (the inline fast path).
  // Starts as w_out_integral_; goes off for good once that can no longer be
  // told cheaply (a non-integral or huge input weight sum); then every output
  // call takes the per-client test, as before.
  bool fast_ok_;
  double bound_ = 0;
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
  // Measurement window (enable_window).
  std::unique_ptr<FairnessHistory> hist_;
  std::optional<Time> win_at_;  // the window's start, once known and not yet reached
  bool win_on_ = false;         // the window has started
  std::int64_t arrivals_ = 0;
  Time first_arrival_ = 0;
  double wmax_ = 0, wmax_e_ = 0, warea_ = 0, warea_e_ = 0, wslope_ = 0, wslope_e_ = 0;
  Time wjoint_ = 0, wlast_ = 0;
  bool wagg_dirty_ = false;     // pairs opened or closed since the last snapshot
  std::vector<char> wchanged_;
  std::vector<ClientId> wchanged_list_;
};

}  // namespace servesim
