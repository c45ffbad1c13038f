// Warnings about a run's results that a reader of summary.csv must not miss
// (summary.csv's `warnings` column, also printed by `servesim run`; each
// names its cause):
//  - survivorship: more than kMaxUnfinishedShare of the requests in the
//    measurement window were rejected or unfinished; latency percentiles
//    then cover finished requests only and look better than the service was;
//  - imbalance: with 2 or more workers, one did more than kMaxWorkerShare of
//    the cluster's busy time while the others idled (e.g. cache_aware routing
//    on a workload without prefix blocks sends every request to one worker);
//  - empty window (error level: the text starts with "error: "):
//    report.window excludes every arrival; the rates, goodput and the
//    windowed fairness columns are then empty, not 0 or a perfect 1;
//  - slo_clients: slo.clients names a client the workload never had;
//  - uncached admissions: an empty worker admitted a request without its cached
//    prefix, whose pages (rounded up per block) did not fit beside the prompt
//    (KvManager::admit): more prefill than the cache hit rate suggests.
//
// Warnings travel: summary.csv keeps them, sweep_summary.csv aggregates them
// per point, `compare` and the HTML report show them, and plots mark the
// points they concern. Readers classify a `warnings` cell with
// warning_tags(), which matches the fixed phrases the writers use (one list,
// kWarningKinds, for both), so a tag never depends on a number in the text.
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

// The kinds of warning, each with the short tag readers show (compare, plot
// legends, the HTML report), the phrase every warning of that kind contains,
// and whether it is error level (the result is undefined, not merely biased).
struct WarningKind {
  const char* tag;
  const char* phrase;
  bool error;
};
const std::vector<WarningKind>& warning_kinds();

// Tags of the kinds present in a `warnings` cell (or any text), in
// warning_kinds() order; "other" when the cell is not empty and matches none.
std::vector<std::string> warning_tags(const std::string& cell);
// True when the cell holds an error-level warning.
bool has_error_warning(const std::string& cell);

// The warning a set of repetitions gets when every number they report is the
// same (the seed varied nothing): an interval over them would be 0 wide and
// claim a precision that does not exist.
std::string identical_repetitions_warning(std::size_t runs);

}  // namespace servesim
