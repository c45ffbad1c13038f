// The measurement window (report.window, docs/configuration.md): the requests
// whose metrics summary.csv reports, chosen by arrival, so that warm-up (an
// empty cluster filling) and cool-down (the tail of arrivals that the run
// ends on) do not bias latency, throughput and goodput.
//
// Each side is set by time or by count (not both on one side):
//   start: first arrival + warmup_s,    or the arrival of request number
//          warmup_requests + 1 in arrival order (the first warmup_requests
//          requests are excluded);
//   end:   run end − cooldown_s,        or the arrival of the first of the
//          last cooldown_requests requests (those are excluded).
// The run end is the later of the engine's end (the horizon, if any) and the
// last finish. A request is in the window when it arrived (requests after the
// horizon never did) and start <= arrival <= end (time sides), or its
// position in arrival order is inside the counted sides. Arrival order breaks
// ties by report order, which is deterministic.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/core/time.h"

namespace servesim {

struct WindowOptions {
  Time warmup = 0, cooldown = 0;                          // report.window.warmup_s / cooldown_s
  std::int64_t warmup_requests = 0, cooldown_requests = 0;  // report.window.warmup_requests / cooldown_requests
  bool set() const { return warmup > 0 || cooldown > 0 || warmup_requests > 0 || cooldown_requests > 0; }
  bool operator==(const WindowOptions&) const = default;
};

struct WindowSelection {
  Time start = 0, end = 0;        // end >= start (an empty window has end == start)
  std::size_t first = 0, last = 0;  // in-window positions [first, last) of the sorted arrivals
};

// `arrivals`: every arrived request's arrival, sorted ascending.
// `first_arrival`: the run's first arrival; `run_end` as above.
WindowSelection select_window(const std::vector<Time>& arrivals, const WindowOptions& w, Time first_arrival,
                              Time run_end);

}  // namespace servesim
