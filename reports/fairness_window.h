// FairnessHistory: what FairnessTracker keeps so that, at the end of a run,
// it can evaluate its fairness measures over the measurement window
// (reports/window.h), whose end is known only then when it is set by
// cooldown_s (the run's end is the last finish) or cooldown_requests (the
// number of arrivals is not known in advance).
//
// The window's START is causal: first arrival + warmup_s, or the arrival of
// request warmup_requests + 1, so the tracker starts its window accounting
// at that instant (begin()). From then on it appends:
//   - aggregate snapshots (WindowAggregates) after every sample tick, and
//     after pairs opened or closed when a grid point (multiple of the sample
//     interval) lies before the next hook — at most about two per interval,
//     whatever the number of backlog changes: the time integrals grow
//     linearly between snapshots (slope, open pairs), so their value at an
//     instant is exact unless pairs opened or closed less than one interval
//     before it;
//   - per-client states (service, extend service, backlog) at points of a
//     fixed grid (multiples of the sample interval) where they changed:
//     a state at grid point g is the state after every hook at or before g
//     (recorded at the first grid point after a change).
// Memory stays bounded for long runs: only the history the END can still
// need is kept. Whatever happens later, the end is not earlier than
// earliest_end(now): now − cooldown_s (the run ends at or after now), the
// N-th most recent arrival so far (cooldown_requests = N; those arrival
// times are kept, N of them), or now without a cooldown. Older snapshots
// are dropped (the last one at or before that instant stays) and older
// client states are folded into a base row per client. Memory: O(clients +
// cooldown_requests + changes during the cooldown's span), not O(requests).
//
// at(end) reads the history at the window's end: aggregates from the last
// snapshot at or before it (+ slope · elapsed); client states as of the last
// grid point at or before `end`. Both are at most one sample interval stale
// (exact at the run's end, where finish() records everything).
#pragma once
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <vector>

#include "reports/window.h"
#include "sim/core/request.h"
#include "sim/core/time.h"

namespace servesim {

// The windowed pair measures at instant t (service·ns integrals, as in
// FairnessTracker); they grow by slope · dt and open · dt until the next one.
struct WindowAggregates {
  Time t = 0;
  double max = 0, max_e = 0;      // largest max − min of D over clipped intervals
  double area = 0, area_e = 0;    // ∫ |D − D(interval start)| dt over jointly backlogged time
  double slope = 0, slope_e = 0;  // Σ |D − D0| of the open pairs (last sample)
  Time joint = 0;                 // jointly backlogged pair time
  std::int64_t open = 0;          // open pairs
};

// One client's state: cumulative service and backlog (backlogged since
// `since`, or not backlogged when since < 0).
struct ClientState {
  double s = 0, e = 0;
  Time bl = 0, since = -1;
  Time backlogged_ns(Time t) const { return bl + (since >= 0 ? t - since : 0); }
};

class FairnessHistory {
 public:
  explicit FairnessHistory(const WindowOptions& w) : w_(w) {}
  const WindowOptions& options() const { return w_; }
  void on_arrival(Time t);  // every arrival, in time order
  Time earliest_end(Time now) const;
  // The window starts at `start` with these client states and aggregates.
  void begin(Time start, std::vector<ClientState> clients, const WindowAggregates& a);
  bool begun() const { return begun_; }
  Time start() const { return start_; }
  const std::vector<ClientState>& at_start() const { return start_states_; }
  // Appends (replaces the last one when at the same instant); `now` >= a.t.
  void aggregates(const WindowAggregates& a, Time now);
  void client(Time t, ClientId c, const ClientState& s);
  void prune(Time now);

  struct At {
    WindowAggregates a;               // at `end` (integrals extended to it)
    std::vector<ClientState> clients;  // index = client
  };
  // nullopt when the history no longer reaches back to `end` (it cannot,
  // when `end` is a window end of this run) or the window never began.
  std::optional<At> at(Time end) const;
  std::size_t kept() const { return snaps_.size() + entries_.size() + recent_.size(); }

 private:
  struct Entry {
    Time t;
    ClientId c;
    ClientState s;
  };
  WindowOptions w_;
  bool begun_ = false;
  Time start_ = 0;
  std::vector<ClientState> start_states_, base_;
  std::deque<WindowAggregates> snaps_;
  std::deque<Entry> entries_;
  std::deque<Time> recent_;  // the last cooldown_requests arrivals
  Time pruned_to_ = std::numeric_limits<Time>::min();  // history before this is folded or dropped
};

}  // namespace servesim
