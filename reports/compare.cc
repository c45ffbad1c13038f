#include "reports/compare.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/sweep_summary.h"
#include "sim/core/error.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {
const char* const kHeadline[] = {"finished",    "unfinished",  "rejected",  "throughput_rps",    "output_tokens_per_s",
                                 "ttft_mean_s", "ttft_p99_s",  "tpot_mean_s", "e2e_mean_s",      "e2e_p99_s",
                                 "jain_service_rate", "service_diff_max"};

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

std::string short_number(const std::string& cell) {
  double x;
  if (!parse_number(cell, x)) return cell;
  if (cell.find_first_not_of("-0123456789") == std::string::npos) return cell;  // integers as written
  return fmt::format("{:.4g}", x);
}

CompareInput input_of(const CsvTable& t, std::size_t row, std::string label) {
  CompareInput in;
  in.label = std::move(label);
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    in.values[t.header[c]] = t.rows[row][c];
    in.order.push_back(t.header[c]);
  }
  return in;
}
}  // namespace

CompareTable compare_table(const std::vector<CompareInput>& runs) {
  std::vector<std::string> cols;
  for (const char* c : kHeadline)
    for (const auto& r : runs)
      if (r.values.count(c)) {
        cols.push_back(c);
        break;
      }
  for (const auto& r : runs)
    for (const auto& c : r.order)
      if ((starts_with(c, "goodput") || starts_with(c, "slo_")) && std::find(cols.begin(), cols.end(), c) == cols.end())
        cols.push_back(c);
  CompareTable t;
  t.header.push_back("run");
  t.header.insert(t.header.end(), cols.begin(), cols.end());
  for (const auto& r : runs) {
    std::vector<std::string> row{r.label};
    for (const auto& c : cols) {
      auto it = r.values.find(c);
      row.push_back(it == r.values.end() ? "" : it->second);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<CompareInput> compare_inputs(const std::string& dir) {
  const fs::path d(dir);
  if (fs::exists(d / "summary.csv")) {
    CsvTable t = read_csv((d / "summary.csv").string());
    if (t.rows.size() != 1)
      throw InputError(fmt::format("{}: expected one row of values, found {}", (d / "summary.csv").string(), t.rows.size()));
    return {input_of(t, 0, dir)};
  }
  if (fs::exists(d / "sweep.csv")) {
    CsvTable t = read_csv((d / "sweep.csv").string());
    const auto [first, end] = swept_columns(t);
    const int run = t.column("run") >= 0 ? t.column("run") : 0;
    std::vector<CompareInput> out;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      std::string label = t.rows[i][run];
      for (int c = first; c < end; ++c)
        if (!t.rows[i][c].empty()) label += " " + t.header[c] + "=" + t.rows[i][c];
      out.push_back(input_of(t, i, label));
    }
    return out;
  }
  throw InputError(fmt::format("{}: neither a run folder nor a sweep point folder (no summary.csv) nor a sweep folder "
                               "(no sweep.csv); is the run finished?",
                               dir));
}

std::string format_table(const CompareTable& t, std::size_t max_rows) {
  const std::size_t shown = std::min(max_rows, t.rows.size());
  std::vector<std::vector<std::string>> cells{t.header};
  for (std::size_t i = 0; i < shown; ++i) {
    std::vector<std::string> r = t.rows[i];
    for (std::size_t c = 1; c < r.size(); ++c) r[c] = short_number(r[c]);
    cells.push_back(std::move(r));
  }
  std::vector<std::size_t> width(t.header.size(), 0);
  for (const auto& r : cells)
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const auto& r : cells) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (c == 0) line += fmt::format("{:<{}}", r[c], width[c]);
      else line += fmt::format("  {:>{}}", r[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (shown < t.rows.size()) out += fmt::format("... {} more rows\n", t.rows.size() - shown);
  return out;
}

void write_compare_csv(const CompareTable& t, const std::string& path) {
  CsvWriter w(path);
  for (const auto& h : t.header) w.field(h);
  w.end_row();
  for (const auto& r : t.rows) {
    for (const auto& c : r) w.field(c);
    w.end_row();
  }
  w.close();
}

void print_sweep_comparison(const std::string& sweep_dir) {
  if (!fs::exists(fs::path(sweep_dir) / "sweep.csv")) return;
  const CompareTable t = compare_table(compare_inputs(sweep_dir));
  if (t.rows.empty()) return;
  fmt::print("\n{}", format_table(t, 40));
}

}  // namespace servesim
