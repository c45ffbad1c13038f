// `servesim report DIR [-o report.html] [--baseline CONFIG] [--metrics a,b] [--no-plots]`:
// one self-contained HTML page for a run or a sweep folder (reports/html_report.h):
// configuration, summary table with intervals and warnings, inline SVG plots.
// Holds a shared lock on DIR and an exclusive one on DIR/plots.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "reports/html_report.h"
#include "reports/output_dir.h"
#include "sim/cli/commands.h"

namespace servesim::cli {

void add_report_command(CLI::App& app) {
  struct ReportArgs {
    std::string dir, out, baseline;
    std::vector<std::string> metrics;
    bool no_plots = false;
  };
  auto a = std::make_shared<ReportArgs>();
  CLI::App* rep = app.add_subcommand("report", "Write a one-page, self-contained HTML report of a run or sweep folder");
  rep->add_option("dir", a->dir, "Run folder, sweep folder or `run --repeat` folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  rep->add_option("-o,--out", a->out, "The HTML file (default DIR/report.html)");
  rep->add_option("-b,--baseline", a->baseline, "The configuration the others are compared with (as in compare)");
  rep->add_option("-m,--metrics", a->metrics, "Summary columns (as in compare; default: compare's)")->delimiter(',');
  rep->add_flag("--no-plots", a->no_plots, "Leave the plots out (no gnuplot needed)");
  rep->callback([a] {
    const std::string out = a->out.empty() ? (std::filesystem::path(a->dir) / "report.html").string() : a->out;
    HtmlReportOptions o;
    o.baseline = a->baseline;
    o.metrics = a->metrics;
    o.plots = !a->no_plots;
    HtmlReportResult r;
    {
      OutputLock read_lock(a->dir, OutputLock::Mode::kShared);
      std::unique_ptr<OutputLock> plots_lock;
      if (o.plots) plots_lock = std::make_unique<OutputLock>((std::filesystem::path(a->dir) / "plots").string());
      r = write_html_report(a->dir, out, o);
    }
    fmt::print("servesim report: wrote {} ({} tables, {} plots)\n", r.path, r.tables, r.plots);
    for (const auto& n : r.notes) fmt::print(stderr, "servesim report: note: {}\n", n);
  });
}

}  // namespace servesim::cli
