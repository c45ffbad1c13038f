// Plots (gnuplot: PNG, PDF and/or SVG) from a run folder or a sweep folder:
// data, scripts and images under <dir>/plots/, all scripts in one gnuplot
// process, every file written to a temporary and renamed (an unwritable folder
// is an InputError naming the file). Which plots, their series, colours, axes
// and the points of a sweep: docs/sweeps.md, "Plots".
#pragma once
#include <string>
#include <vector>

namespace servesim {

inline constexpr std::size_t kMaxSeries = 30;

struct PlotOptions {
  std::vector<std::string> formats = {"png"};  // any of png, pdf, svg
  std::vector<std::string> metrics;            // docs/sweeps.md "Plots" (--metric); empty = the defaults
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
