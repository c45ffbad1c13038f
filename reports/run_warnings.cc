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
    out.push_back(fmt::format("error: the measurement window [{:.6f}, {:.6f}] s holds no request: report.window "
                              "excludes every arrival, so the per-request metrics, rates, goodput and the windowed "
                              "fairness columns are empty (undefined, not 0 or perfectly fair)",
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
  std::int64_t uncached = 0, uncached_tokens = 0;
  for (const WorkerStats& w : workers) uncached += w.uncached_admissions, uncached_tokens += w.uncached_admission_tokens;
  if (uncached > 0)
    out.push_back(fmt::format(
        "{} admissions to an empty worker computed their prompt without its cached prefix ({} cached tokens "
        "computed again): the prefix's KV pages, rounded up per cached block, did not fit beside the rest of the "
        "prompt; choose a KV page size that divides the workload's prefix block size",
        uncached, uncached_tokens));
  for (const std::string& c : in.unknown_slo_clients)
    out.push_back(fmt::format("slo.clients names '{}', which is not a client of this workload: its thresholds were "
                              "not used",
                              c));
  return out;
}

const std::vector<WarningKind>& warning_kinds() {
  static const std::vector<WarningKind> kinds = {
      {"empty_window", "holds no request: report.window excludes every arrival", true},
      {"unfinished>5%", "of the requests in the measurement window did not finish", false},
      {"one_worker", "while the others idled", false},
      {"slo_client", "which is not a client of this workload", false},
      {"window_fallback", "cover the whole run, not the measurement window", false},
      {"identical_repetitions", "repetitions are identical", false},
      {"uncached_admission", "computed their prompt without its cached prefix", false},
  };
  return kinds;
}

std::vector<std::string> warning_tags(const std::string& cell) {
  std::vector<std::string> tags;
  for (const WarningKind& k : warning_kinds())
    if (cell.find(k.phrase) != std::string::npos) tags.emplace_back(k.tag);
  if (tags.empty() && cell.find_first_not_of(" ") != std::string::npos) tags.emplace_back("other");
  return tags;
}

bool has_error_warning(const std::string& cell) {
  for (const WarningKind& k : warning_kinds())
    if (k.error && cell.find(k.phrase) != std::string::npos) return true;
  return false;
}

std::string identical_repetitions_warning(std::size_t runs) {
  return fmt::format("the {} repetitions are identical in throughput and latency: the seed varied nothing they "
                     "depend on (a trace replay fixes arrivals and lengths), so no interval is given; vary the input "
                     "with `variance:` (docs/sweeps.md, \"Sources of variance\")",
                     runs);
}

std::string join_warnings(const std::vector<std::string>& warnings) {
  std::string s;
  for (const std::string& w : warnings) s += (s.empty() ? "" : "; ") + w;
  return s;
}

}  // namespace servesim
