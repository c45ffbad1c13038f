#include "reports/run_warnings.h"

#include <fmt/format.h>

#include "sim/core/time.h"

namespace servesim {

std::vector<std::string> run_warnings(const WarningInputs& in, const std::vector<WorkerStats>& workers) {
  std::vector<std::string> out;
  const std::uint64_t lost = in.window_rejected + in.window_unfinished;
  if (in.window_requests > 0 &&
      static_cast<double>(lost) > kMaxUnfinishedShare * static_cast<double>(in.window_requests))
    out.push_back(fmt::format(
        "{:.1f}% of the requests in the measurement window did not finish ({} unfinished at the end, {} rejected, of "
        "{}): latency percentiles cover finished requests only (survivorship bias); the load is beyond what the "
        "cluster serves or the horizon is too short",
        100.0 * static_cast<double>(lost) / static_cast<double>(in.window_requests), in.window_unfinished,
        in.window_rejected, in.window_requests));
  if (in.window_set && in.window_requests == 0)
    out.push_back(fmt::format("the measurement window [{:.6f}, {:.6f}] s holds no request: report.window excludes every "
                              "arrival, so the per-request metrics are empty",
                              in.window_start_s, in.window_end_s));
  if (workers.size() >= 2) {
    Time total = 0;
    std::size_t top = 0;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      total += workers[i].busy_ns;
      if (workers[i].busy_ns > workers[top].busy_ns) top = i;
    }
    const double share = total > 0 ? static_cast<double>(workers[top].busy_ns) / static_cast<double>(total) : 0;
    if (share > kMaxWorkerShare)
      out.push_back(fmt::format(
          "worker {} did {:.1f}% of the busy time of {} workers while the others idled: global policy {} sent "
          "nearly every request to one worker{}; results equal a smaller cluster's",
          top, 100 * share, workers.size(), in.policy_global,
          in.policy_global.starts_with("cache_aware")
              ? " (cache_aware routes by prefix blocks; a workload without them gives it nothing to tell workers apart)"
              : ""));
  }
  for (const std::string& c : in.unknown_slo_clients)
    out.push_back(fmt::format("slo.clients names '{}', which is not a client of this workload: its thresholds were "
                              "not used",
                              c));
  return out;
}

std::string join_warnings(const std::vector<std::string>& warnings) {
  std::string s;
  for (const std::string& w : warnings) s += (s.empty() ? "" : "; ") + w;
  return s;
}

}  // namespace servesim
