// TraceStats: one streaming pass over a trace file (no transformation) for
// `servesim trace stats`: size, time span, mean rate and burstiness (CV of
// inter-arrival times), length percentiles, clients, and — for traces with
// prefix blocks — the ideal infinite-cache leading-prefix hit rate: each
// request hits on its leading blocks whose whole chain (block 0..i) appeared
// in an earlier request, and misses from its first new block on, as a radix
// cache of unbounded size would. Memory: the lengths (for exact percentiles)
// and the set of distinct block chains.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "traces/readers/trace_reader.h"

namespace servesim {

struct LengthSummary {
  double mean = 0;
  double p50 = 0, p90 = 0, p99 = 0;  // nearest rank: always an observed value
  std::int64_t min = 0, max = 0;
};

struct TraceStats {
  std::string path;
  std::string format = "auto";  // the detected (or given) format name
  std::int64_t rows = 0, rows_skipped = 0, rows_dropped = 0;
  std::string first_skip_reason;       // with skip_bad_rows: the first bad row's error
  std::int64_t dependent_rows = 0;     // rows with parents (excluded from timing stats)
  Time first_arrival = 0, last_arrival = 0;
  double span_s = 0;                   // last - first arrival of independent rows
  double mean_rate = 0;                // independent rows / span (0 if span is 0)
  double interarrival_cv = 0;          // stddev / mean of consecutive gaps
  std::int64_t distinct_timestamps = 0;
  LengthSummary prompt, output;
  std::vector<std::pair<std::string, std::int64_t>> clients;  // by count, descending; empty if none
  std::int64_t sessions = 0;
  // Prefix structure (has_prefix false when no row had blocks).
  bool has_prefix = false;
  std::int32_t block_size = 0;
  std::int64_t block_refs = 0, distinct_blocks = 0, distinct_first_blocks = 0, hit_blocks = 0;
  double hit_rate_blocks = 0;  // hit_blocks / block_refs
  double hit_rate_tokens = 0;  // hit prompt tokens / prompt tokens of rows with blocks
  // Timing that would make a replay simulate long idle stretches, one line
  // each, naming the row: a first arrival that looks like a UNIX epoch time
  // in a format `time_origin: auto` does not rebase, a span over
  // kHugeSpanS, a single gap over kHugeGapS that is most of the span.
  std::vector<std::string> warnings;
};

inline constexpr double kEpochLikeS = 1e9;         // 2001-09-09 as UNIX seconds
inline constexpr double kHugeSpanS = 30 * 86400.0;  // 30 days
inline constexpr double kHugeGapS = 3600;           // 1 hour

// Reads the whole file once. Throws InputError on bad input (or skips bad
// rows and counts them when opt.skip_bad_rows).
TraceStats compute_trace_stats(const std::string& path, const TraceReadOptions& opt);
// Same over a reader already open (all its rows are consumed).
TraceStats compute_trace_stats(std::unique_ptr<TraceReader> reader);

// Human-readable report, one fact per line.
std::string format_trace_stats(const TraceStats& s);

// Percentile q in [0,1] of sorted values by nearest rank: the ceil(q*n)-th
// smallest (an observed value; the convention of ../shared/traces/README.md).
double percentile_sorted(const std::vector<std::int32_t>& sorted, double q);

}  // namespace servesim
