// `servesim report DIR -o report.html`: one self-contained HTML page for a
// run folder or a sweep folder (a `run --repeat` folder is a sweep), readable
// on a laptop screen and printable: what ran (the cost model, the
// configuration), the summary table — per configuration the mean ± 95%
// interval over its repetitions, each against the baseline with the
// difference and p-value (reports/compare.h) — every warning in full, and
// the plots (reports/plots.h) inlined as SVG.
//
// Self-contained: no script, no stylesheet, font or image from elsewhere —
// CSS in a <style> element, plots as inline <svg> (gnuplot's XML prologue
// and DOCTYPE dropped), so the file opens offline and can be mailed. Without
// gnuplot the page says so where the plots would be. The page is written
// with write_file (temporary and rename); plots are (re)made under
// DIR/plots/ as SVG.
#pragma once
#include <string>
#include <vector>

namespace servesim {

struct HtmlReportOptions {
  std::string baseline;               // compare's --baseline (empty: the first configuration)
  std::vector<std::string> metrics;   // compare's --metrics (empty: its defaults)
  bool plots = true;                  // make and inline the plots
  std::string gnuplot = "gnuplot";
};

struct HtmlReportResult {
  std::string path;
  std::size_t tables = 0, plots = 0;
  std::vector<std::string> notes;  // e.g. why there are no plots
};

HtmlReportResult write_html_report(const std::string& dir, const std::string& out_html,
                                   const HtmlReportOptions& options = {});

// Text escaped for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace servesim
