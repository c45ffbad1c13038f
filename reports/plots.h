// Plots (gnuplot: PNG, PDF and/or SVG) from a run folder or a sweep folder.
// Data and scripts are written beside the images under <dir>/plots/ so a
// reader can restyle them; all the scripts of one make_plots call run in one
// gnuplot process (its start costs more than a plot), each beginning with
// `reset` so it also runs alone. Every file (data, script, image, gnuplot's
// log) is written to a temporary and renamed into place, every step checked
// (reports/output_dir.h): an unwritable folder or a full disk is an
// InputError naming the file, never a missing or short plot.
//
// Every plot names its run or sweep in the title, keeps its legend outside
// the plot area on the right (titles at most kMaxTitle characters, so it is
// never clipped), draws every point with a marker, titles its axes in words
// with units (axis_title) and starts the axis of a non-negative measure at 0.
// Series are grouped by policy *name* (parameters such as DLPM's quantum are
// on the axis, so one line joins DLPM across Q^u); a policy has the same
// colour in every plot (policy_colour). Points whose runs have warnings
// (reports/run_warnings.h) get a hollow black ring and a legend entry.
// Series get distinct colour + marker (+ dash) combinations up to
// kMaxSeries; beyond that only the kMaxSeries largest are drawn (clients by
// final service) and the title says how many were left out.
//
// Run folder:   latency_cdf (CDFs of the requests.csv columns in `metrics`,
//               default TTFT, TPOT, E2E; finished requests), client_service
//               (cumulative service per client from client_service.csv; a run
//               without it is credited when each request finishes, and the
//               title says so), kv_usage and queue_length (per worker, from
//               timeline.csv).
// Sweep folder: rows of sweep.csv with the same swept values (repetitions
//               of a point, or points differing only in `seed`) are one
//               point of the plots: their mean, with error bars of the 95%
//               Student t confidence interval (reports/sweep_summary.h) when
//               there are several; lines never join runs of different seeds.
//               The "x" swept column is the last swept column holding numbers
//               with at least two distinct values (e.g. policy_local_quantum):
//               it is drawn on a numeric axis (log scale when its values span
//               two decades or more), points sorted numerically; series are
//               the combinations of the other swept values; rows without an x
//               value (reference points) stand alone (horizontal dashed lines
//               in the <metric>_vs_<x> plots).
//               - <metric>_vs_<x> for e2e_p99_s, throughput_rps and
//                 service_diff_max (when present) — only when there is an x;
//               - throughput_latency (p99 E2E vs throughput),
//                 fairness_throughput, fairness_extend_throughput: trade-off
//                 scatter plots, each point labelled with its x value;
//               - latency_cdf: the E2E CDF of repetition 0 of each point.
//               `metrics`: "Y" or "X:Y" columns of sweep.csv, each one more
//               plot custom_<Y>_vs_<X> (X default: the x swept column, else
//               throughput_rps).
#pragma once
#include <string>
#include <vector>

namespace servesim {

inline constexpr std::size_t kMaxSeries = 30;

struct PlotOptions {
  std::vector<std::string> formats = {"png"};  // any of png, pdf, svg
  std::vector<std::string> metrics;            // see above; empty = the defaults
  // Sweep folder: --x COL (a numeric column: line plots against it; a text
  // column: grouped bar charts with it as categories), --y COL... (the
  // metrics drawn, default: p99 E2E, mean TTFT, throughput, the fairness
  // measures that move, cache hit rate), --group COL (series: one per value;
  // default: the other swept columns, policies by name).
  std::string x, group;
  std::vector<std::string> y;
  std::string gnuplot = "gnuplot";
};

struct PlotResult {
  std::vector<std::string> images;
  std::vector<std::string> skipped;  // "name: why"
};

PlotResult make_plots(const std::string& dir, const PlotOptions& options = {});

// Checks a --format list ("png,pdf"); InputError naming the bad entry.
std::vector<std::string> parse_plot_formats(const std::string& list);

// Longest series title drawn in a legend.
inline constexpr std::size_t kMaxTitle = 40;

// An axis title in words with its unit: "e2e_p99_s" -> "p99 end-to-end latency (s)".
std::string axis_title(const std::string& column);

// The colour of a series named after a policy ("dlpm", "vtc/least_outstanding"):
// fixed per policy name, so every plot of every sweep agrees; empty when the
// name starts with no known policy.
std::string policy_colour(const std::string& series);

// The gnuplot style of series i (0-based): "lc rgb '#...' pt N dt M"; distinct
// for i < kMaxSeries.
std::string series_style(std::size_t i);

}  // namespace servesim
