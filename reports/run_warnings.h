// Warnings about a run's results that a reader of summary.csv must not miss
// (summary.csv's `warnings` column, also printed by `servesim run`; each
// names its cause):
//  - survivorship: more than kMaxUnfinishedShare of the requests in the
//    measurement window were rejected or unfinished; latency percentiles
//    then cover finished requests only and look better than the service was;
//  - imbalance: with 2 or more workers, one did more than kMaxWorkerShare of
//    the cluster's busy time while the others idled (e.g. cache_aware routing
//    on a workload without prefix blocks sends every request to one worker);
//  - empty window: report.window excludes every arrival;
//  - slo_clients: slo.clients names a client the workload never had.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/worker_stats.h"

namespace servesim {

inline constexpr double kMaxUnfinishedShare = 0.05;
inline constexpr double kMaxWorkerShare = 0.90;

struct WarningInputs {
  std::uint64_t window_requests = 0;  // arrived in the measurement window
  std::uint64_t window_rejected = 0, window_unfinished = 0;
  bool window_set = false;            // report.window given
  double window_start_s = 0, window_end_s = 0;
  std::string policy_global;          // as in summary.csv, for the imbalance hint
  std::vector<std::string> unknown_slo_clients;
};

std::vector<std::string> run_warnings(const WarningInputs& in, const std::vector<WorkerStats>& workers);

// Warnings joined with "; " (summary.csv's `warnings` cell; empty when none).
std::string join_warnings(const std::vector<std::string>& warnings);

}  // namespace servesim
