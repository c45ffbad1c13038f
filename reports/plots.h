// Plots (PNG via gnuplot's pngcairo terminal) from a run folder or a sweep
// folder. Data and scripts are written beside the images under <dir>/plots/
// so a reader can restyle them.
//
// Run folder:   latency_cdf.png (TTFT, TPOT and E2E CDFs), client_service.png
//               (cumulative service per client from client_service.csv; a run
//               without it is credited when each request finishes, and the
//               title says so), kv_usage.png and queue_length.png (per worker,
//               from timeline.csv).
// Sweep folder: latency_cdf.png (E2E CDF per point), fairness_throughput.png
//               (max backlogged service difference vs throughput, each point
//               labelled with its swept values, when the summary has a fairness
//               column), throughput_latency.png (p99 E2E vs throughput).
#pragma once
#include <string>
#include <vector>

namespace servesim {

struct PlotResult {
  std::vector<std::string> images;
  std::vector<std::string> skipped;  // "name: why"
};

PlotResult make_plots(const std::string& dir, const std::string& gnuplot = "gnuplot");

}  // namespace servesim
