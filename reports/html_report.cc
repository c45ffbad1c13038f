#include "reports/html_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "reports/compare.h"
#include "reports/csv_reader.h"
#include "reports/output_dir.h"
#include "reports/plots.h"
#include "reports/run_warnings.h"
#include "reports/sweep_summary.h"
#include "sim/core/error.h"

namespace servesim {
namespace fs = std::filesystem;

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "DejaVu Sans", sans-serif; margin: 0 auto; max-width: 1240px;
       padding: 1rem 1.5rem 3rem; color: #1a1a1a; line-height: 1.4; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; }
.meta { color: #555; font-size: 0.9rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: right; white-space: nowrap; }
th { background: #f2f2f2; position: sticky; top: 0; white-space: normal; max-width: 8rem; vertical-align: bottom; }
span.ci { color: #666; font-size: 0.78rem; }
td:first-child, th:first-child { text-align: left; white-space: normal; min-width: 9rem; max-width: 15rem; }
tr.baseline td { background: #f7f7e8; }
td.sig { font-weight: bold; }
td.warn { color: #9a5b00; text-align: left; white-space: normal; min-width: 10rem; }
ul.warnings li { margin: 0.3rem 0; }
li.error { color: #b00020; font-weight: bold; }
figure { margin: 1.5rem 0; page-break-inside: avoid; }
figure svg { width: 100%; height: auto; max-height: 85vh; display: block; }
figcaption { font-size: 0.85rem; color: #555; }
pre { background: #f7f7f7; padding: 0.6rem; overflow-x: auto; font-size: 0.8rem; }
)";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// gnuplot's SVG as an inline element: no XML prologue or DOCTYPE, and its ids
// made unique per plot (every gnuplot SVG defines the same ids).
std::string inline_svg(const std::string& svg, std::size_t k) {
  std::size_t start = svg.find("<svg");
  if (start == std::string::npos) return {};
  std::string body = svg.substr(start);
  const std::string prefix = fmt::format("p{}_", k);
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t i = body.find(from); i != std::string::npos; i = body.find(from, i + to.size()))
      body.replace(i, from.size(), to);
  };
  for (const char q : {'\'', '"'}) {
    replace_all(std::string("id=") + q, std::string("id=") + q + prefix);
    replace_all(std::string("href=") + q + "#", std::string("href=") + q + "#" + prefix);
  }
  replace_all("url(#", "url(#" + prefix);
  return body;
}

std::string number4(const std::string& cell) {
  double x;
  return parse_number(cell, x) ? fmt::format("{:.4g}", x) : html_escape(cell);
}

// A column name that may wrap after its underscores (narrow columns on a laptop screen).
std::string header_cell(const std::string& name) {
  std::string out;
  for (char c : html_escape(name)) {
    out += c;
    if (c == '_') out += "&#8203;";
  }
  return out;
}

// An interval half-width: two significant digits are all it carries.
std::string number2(const std::string& cell) {
  double x;
  return parse_number(cell, x) ? fmt::format("{:.2g}", x) : html_escape(cell);
}

int col(const CompareTable& t, const std::string& name) {
  auto it = std::find(t.header.begin(), t.header.end(), name);
  return it == t.header.end() ? -1 : static_cast<int>(it - t.header.begin());
}

// The aggregated table and the comparison against the baseline, as HTML.
std::string summary_tables(const CompareTable& t, std::size_t& tables) {
  std::vector<std::string> metrics;
  for (const auto& h : t.header)
    if (h.size() > 5 && h.compare(h.size() - 5, 5, "_mean") == 0) metrics.push_back(h.substr(0, h.size() - 5));
  const int base = col(t, "baseline");
  std::string base_label;
  std::string html = "<div class=\"scroll\"><table id=\"summary\"><thead><tr><th>configuration</th><th>runs</th>";
  for (const auto& m : metrics) html += "<th title=\"" + html_escape(axis_title(m)) + "\">" + header_cell(m) + "</th>";
  html += "<th>warnings</th></tr></thead><tbody>\n";
  for (const auto& r : t.rows) {
    const bool is_base = base >= 0 && r[base] == "yes";
    if (is_base) base_label = r[0];
    html += std::string(is_base ? "<tr class=\"baseline\">" : "<tr>") + "<td>" + html_escape(r[0]) + "</td><td>" +
            html_escape(r[1]) + "</td>";
    for (const auto& m : metrics) {
      const std::string& mean = r[col(t, m + "_mean")];
      const std::string& ci = r[col(t, m + "_ci95")];
      html += "<td>" + (mean.empty() ? "" : number4(mean) + (ci.empty() ? "" : "<br><span class=\"ci\">± " + number2(ci) + "</span>")) +
              "</td>";
    }
    html += "<td class=\"warn\">" + html_escape(r[col(t, "warnings")]) + "</td></tr>\n";
  }
  html += "</tbody></table></div>\n<p class=\"meta\">Mean ± half-width of the 95% Student t confidence interval over "
          "each configuration's runs (none with one run, or when the runs are identical). Latency columns cover "
          "finished requests only: read them with <code>unfinished</code> and the warnings.</p>\n";
  ++tables;
  if (metrics.empty() || col(t, metrics.front() + "_diff") < 0) return html;
  html += "<h3>Against the baseline: " + html_escape(base_label) +
          "</h3>\n<div class=\"scroll\"><table id=\"versus\"><thead><tr><th>configuration</th>";
  for (const auto& m : metrics) html += "<th>" + header_cell(m) + "</th>";
  html += "<th>test</th></tr></thead><tbody>\n";
  for (const auto& r : t.rows) {
    if (base >= 0 && r[base] == "yes") continue;
    html += "<tr><td>" + html_escape(r[0]) + "</td>";
    for (const auto& m : metrics) {
      double ratio, p;
      const bool has_ratio = parse_number(r[col(t, m + "_ratio")], ratio);
      const bool has_p = parse_number(r[col(t, m + "_p")], p);
      if (!has_ratio) {
        html += "<td></td>";
        continue;
      }
      html += std::string(has_p && p < 0.05 ? "<td class=\"sig\">" : "<td>") + fmt::format("{:+.1f}%", 100 * (ratio - 1)) +
              (has_p ? fmt::format("<br><span class=\"ci\">p={:.2g}</span>", p) : "") + "</td>";
    }
    html += "<td>" + html_escape(r[col(t, "test")]) + "</td></tr>\n";
  }
  html += "</tbody></table></div>\n<p class=\"meta\">Relative difference of the means; p: two-sided test of no "
          "difference (paired t when the repetitions share seeds, else Welch); bold: p &lt; 0.05.</p>\n";
  ++tables;
  return html;
}

// Every warning in full: a run's summary.csv cell, or each point's sweep_summary.csv cell.
std::string warnings_list(const fs::path& dir, bool sweep) {
  std::vector<std::pair<std::string, std::string>> items;  // (where, cell)
  if (sweep) {
    const fs::path p = dir / "sweep_summary.csv";
    if (fs::exists(p)) {
      const CsvTable t = read_csv(p.string());
      const int w = t.column("warnings"), point = t.column("point");
      for (const auto& r : t.rows)
        if (w >= 0 && !r[w].empty()) items.push_back({point >= 0 ? r[point] : "", r[w]});
    }
  } else {
    const CsvTable t = read_csv((dir / "summary.csv").string());
    const int w = t.column("warnings");
    if (w >= 0 && !t.rows.empty() && !t.rows[0][w].empty()) items.push_back({"", t.rows[0][w]});
  }
  if (items.empty()) return "<p>None: no run reported a warning.</p>\n";
  std::string html = "<ul class=\"warnings\">\n";
  for (const auto& [where, cell] : items)
    html += std::string(has_error_warning(cell) ? "<li class=\"error\">" : "<li>") +
            (where.empty() ? "" : "<b>" + html_escape(where) + "</b>: ") + html_escape(cell) + "</li>\n";
  return html + "</ul>\n";
}

std::string first_cell(const fs::path& csv, const std::string& column) {
  if (!fs::exists(csv)) return {};
  const CsvTable t = read_csv(csv.string());
  const int c = t.column(column);
  return c >= 0 && !t.rows.empty() ? t.rows[0][c] : std::string();
}

}  // namespace

HtmlReportResult write_html_report(const std::string& dir_s, const std::string& out_html,
                                   const HtmlReportOptions& o) {
  const fs::path dir(dir_s);
  const bool sweep = fs::exists(dir / "sweep.csv");
  if (!sweep && !fs::exists(dir / "summary.csv"))
    throw InputError(fmt::format("{}: neither a run folder (summary.csv) nor a sweep folder (sweep.csv); is the run "
                                 "finished?",
                                 dir_s));
  HtmlReportResult r;
  r.path = out_html;
  const fs::path values = sweep ? dir / "sweep.csv" : dir / "summary.csv";
  std::string name = dir.lexically_normal().filename().string();
  if (name.empty()) name = dir.lexically_normal().parent_path().filename().string();
  std::string config_text, config_note;
  if (sweep) {
    std::string sweep_name = name;
    if (fs::exists(dir / "sweep_meta.yaml")) {
      try {
        const YAML::Node n = YAML::LoadFile((dir / "sweep_meta.yaml").string());
        if (n["sweep"]) sweep_name = n["sweep"].as<std::string>();
        if (n["file"]) config_note = "Sweep file: " + n["file"].as<std::string>() + ". ";
      } catch (const YAML::Exception&) {
      }
    }
    name = "sweep " + sweep_name;
    const CsvTable t = read_csv(values.string());
    const auto [first, end] = swept_columns(t);
    std::string swept;
    for (int c = first; c < end; ++c) {
      std::vector<std::string> seen;
      for (const auto& row : t.rows)
        if (!row[c].empty() && std::find(seen.begin(), seen.end(), row[c]) == seen.end()) seen.push_back(row[c]);
      std::string vals;
      for (const auto& v : seen) vals += (vals.empty() ? "" : ", ") + v;
      swept += fmt::format("<li><code>{}</code>: {}</li>\n", html_escape(t.header[c]), html_escape(vals));
    }
    config_note += fmt::format("{} runs. Swept values:</p>\n<ul>{}</ul>\n<p>The first run's configuration (every "
                               "default filled in; the others differ in the swept values and the seed):",
                               t.rows.size(), swept);
    const int run = t.column("run");
    if (run >= 0 && !t.rows.empty()) {
      const fs::path c = dir / "points" / t.rows[0][run] / "config.resolved.yaml";
      if (fs::exists(c)) config_text = slurp(c);
    }
  } else {
    const std::string scenario = first_cell(values, "scenario");
    name = "run " + name + (scenario.empty() || scenario == name ? "" : " (scenario " + scenario + ")");
    config_note = "The configuration that ran (every default filled in; <code>servesim run</code> on it reproduces the "
                  "run):";
    if (fs::exists(dir / "config.resolved.yaml")) config_text = slurp(dir / "config.resolved.yaml");
  }
  const std::string cost = first_cell(values, "cost_model");
  const std::string calibrated = first_cell(values, "calibrated");

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>servesim: " +
                     html_escape(name) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  html += "<h1>servesim report: " + html_escape(name) + "</h1>\n";
  html += "<p class=\"meta\">Folder <code>" + html_escape(dir_s) + "</code>. Every number is simulated; cost model: " +
          html_escape(cost.empty() ? "not recorded" : cost) +
          (calibrated == "false" ? " <b>(uncalibrated)</b>" : "") + ".</p>\n";

  html += "<h2>Summary</h2>\n";
  std::vector<CompareInput> inputs = compare_inputs(dir_s);
  html += summary_tables(compare_aggregate(inputs, CompareOptions{o.metrics, o.baseline}), r.tables);

  html += "<h2>Warnings</h2>\n" + warnings_list(dir, sweep);

  html += "<h2>Plots</h2>\n";
  if (o.plots) {
    try {
      PlotOptions po;
      po.formats = {"svg"};
      po.gnuplot = o.gnuplot;
      const PlotResult pr = make_plots(dir_s, po);
      for (const auto& img : pr.images) {
        const std::string svg = inline_svg(slurp(img), r.plots);
        if (svg.empty()) continue;
        html += "<figure>" + svg + "<figcaption>" + html_escape(fs::path(img).stem().string()) +
                " (data and gnuplot script beside it in " + html_escape((dir / "plots").string()) +
                ")</figcaption></figure>\n";
        ++r.plots;
      }
      for (const auto& s : pr.skipped) html += "<p class=\"meta\">Not drawn: " + html_escape(s) + "</p>\n";
    } catch (const InputError& e) {
      r.notes.push_back(std::string("no plots: ") + e.what());
      html += "<p>No plots: " + html_escape(e.what()) + "</p>\n";
    }
  } else {
    html += "<p>Plots left out (--no-plots).</p>\n";
  }

  html += "<h2>Configuration</h2>\n<p>" + config_note + "</p>\n";
  if (!config_text.empty())
    html += "<details><summary>config.resolved.yaml</summary><pre>" + html_escape(config_text) + "</pre></details>\n";
  html += "<p class=\"meta\">Written by <code>servesim report</code>; self-contained (no network).</p>\n</body>\n</html>\n";
  write_file(out_html, html);
  return r;
}

}  // namespace servesim
