// `servesim plot RUN_OR_SWEEP_DIR`: PNG plots under DIR/plots/ (gnuplot).
#include <fmt/format.h>

#include "reports/plots.h"
#include "sim/cli/commands.h"

namespace servesim::cli {

void add_plot_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  CLI::App* plot = app.add_subcommand("plot", "Plot a run folder or a sweep folder into DIR/plots/*.png (gnuplot)");
  plot->add_option("dir", *dir, "Run or sweep folder")->required()->check(CLI::ExistingDirectory);
  plot->callback([dir] {
    PlotResult r = make_plots(*dir);
    for (const auto& i : r.images) fmt::print("  wrote {}\n", i);
    for (const auto& s : r.skipped) fmt::print("  note: {}\n", s);
  });
}

}  // namespace servesim::cli
