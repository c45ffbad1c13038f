#include "reports/window.h"

#include <algorithm>

namespace servesim {

WindowSelection select_window(const std::vector<Time>& arrivals, const WindowOptions& w, Time first_arrival,
                              Time run_end) {
  WindowSelection s;
  const std::size_t n = arrivals.size();
  if (w.warmup_requests > 0) {
    s.first = std::min(n, static_cast<std::size_t>(w.warmup_requests));
    s.start = s.first < n ? arrivals[s.first] : run_end;
  } else {
    s.start = first_arrival + w.warmup;
    s.first = static_cast<std::size_t>(std::lower_bound(arrivals.begin(), arrivals.end(), s.start) - arrivals.begin());
  }
  if (w.cooldown_requests > 0) {
    s.last = n - std::min(n, static_cast<std::size_t>(w.cooldown_requests));
    s.end = s.last < n ? arrivals[s.last] : run_end;
  } else {
    s.end = run_end - w.cooldown;
    s.last = static_cast<std::size_t>(std::upper_bound(arrivals.begin(), arrivals.end(), s.end) - arrivals.begin());
  }
  s.last = std::max(s.last, s.first);
  s.end = std::max(s.end, s.start);
  return s;
}

}  // namespace servesim
