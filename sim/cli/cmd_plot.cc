// `servesim plot RUN_OR_SWEEP_DIR [--format png,pdf,svg] [--metric M]... [--x COL] [--y COL,...] [--group COL]`:
// plots under DIR/plots/ (gnuplot; reports/plots.h says which). Holds a
// shared lock on DIR (it is not being written) and an exclusive one on
// DIR/plots (one plotter at a time).
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "reports/output_dir.h"
#include "reports/plots.h"
#include "sim/cli/commands.h"

namespace servesim::cli {

void add_plot_command(CLI::App& app) {
  struct Args {
    std::string dir, formats = "png";
    std::vector<std::string> metrics, y;
    std::string x, group;
  };
  auto a = std::make_shared<Args>();
  CLI::App* plot = app.add_subcommand("plot", "Plot a run folder or a sweep folder into DIR/plots/ (gnuplot)");
  plot->add_option("dir", a->dir, "Run or sweep folder")->required()->check(CLI::ExistingDirectory);
  plot->add_option("-f,--format", a->formats, "Image formats, comma-separated: png, pdf, svg (default png)");
  plot->add_option("-m,--metric", a->metrics,
                   "Run folder: requests.csv columns for the latency CDF (default ttft_s, tpot_s, e2e_s). Sweep folder: "
                   "Y or X:Y columns of sweep.csv, one more plot each (X default: the numeric swept column)")
      ->take_all();
  plot->add_option("--x", a->x,
                   "Sweep: the column on the x axis (numeric: line plots against it; text, e.g. policy_local: grouped "
                   "bar charts with its values as categories). Default: the last numeric swept column, else bars per "
                   "configuration");
  plot->add_option("--y", a->y,
                   "Sweep: the measures drawn, comma-separated sweep.csv columns (default: e2e_p99_s, ttft_mean_s, "
                   "throughput_rps, the fairness measures that move, cache_hit_rate, SLO columns when set)")
      ->delimiter(',');
  plot->add_option("--group", a->group,
                   "Sweep: one series per value of this column (policies by name), e.g. --group policy_local");
  plot->callback([a] {
    PlotOptions o;
    o.formats = parse_plot_formats(a->formats);
    o.metrics = a->metrics;
    o.x = a->x;
    o.y = a->y;
    o.group = a->group;
    OutputLock read_lock(a->dir, OutputLock::Mode::kShared);
    OutputLock write_lock((std::filesystem::path(a->dir) / "plots").string());
    PlotResult r = make_plots(a->dir, o);
    for (const auto& i : r.images) fmt::print("  wrote {}\n", i);
    for (const auto& s : r.skipped) fmt::print("  note: {}\n", s);
  });
}

}  // namespace servesim::cli
