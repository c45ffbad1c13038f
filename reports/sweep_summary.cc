#include "reports/sweep_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>

#include "reports/csv_writer.h"
#include "reports/run_warnings.h"

namespace servesim {

double student_t_975(std::size_t df) {
  static const double table[] = {12.7062047, 4.30265273, 3.18244631, 2.77644511, 2.57058184, 2.44691185,
                                 2.36462425, 2.30600414, 2.26215716, 2.22813885, 2.20098516, 2.17881283,
                                 2.16036866, 2.14478669, 2.13144955, 2.11990530, 2.10981558, 2.10092204,
                                 2.09302405, 2.08596345, 2.07961384, 2.07387307, 2.06865761, 2.06389856,
                                 2.05953855, 2.05552944, 2.05183052, 2.04840714, 2.04522964, 2.04227246};
  if (df == 0) return std::numeric_limits<double>::quiet_NaN();
  if (df <= 30) return table[df - 1];
  const double z = 1.959963985, n = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

MeanCi mean_ci(const std::vector<double>& v) {
  MeanCi r;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.n = v.size();
  r.mean = r.std = r.ci95 = nan;
  if (v.empty()) return r;
  double sum = 0;
  for (double x : v) sum += x;
  r.mean = sum / static_cast<double>(r.n);
  if (r.n < 2) return r;
  double ss = 0;
  for (double x : v) ss += (x - r.mean) * (x - r.mean);
  r.std = std::sqrt(ss / static_cast<double>(r.n - 1));
  r.ci95 = student_t_975(r.n - 1) * r.std / std::sqrt(static_cast<double>(r.n));
  return r;
}

bool parse_number(const std::string& cell, double& out) {
  if (cell.empty()) return false;
  char* end = nullptr;
  out = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() + cell.size() && std::isfinite(out);
}

std::pair<int, int> swept_columns(const CsvTable& t) {
  int first = t.column("run") >= 0 ? t.column("run") + 1 : 1;
  int end = t.column("scenario");
  if (end < first) end = static_cast<int>(t.header.size());
  return {first, end};
}

std::string summary_path_for(const std::string& sweep_csv) {
  std::filesystem::path p(sweep_csv);
  return (p.parent_path() / (p.stem().string() + "_summary.csv")).string();
}

bool identical_runs(const CsvTable& t, const std::vector<std::size_t>& rows, const std::vector<int>& numeric) {
  auto same = [&](int c) {
    for (std::size_t i : rows)
      if (t.rows[i][c] != t.rows[rows.front()][c]) return false;
    return true;
  };
  bool any_headline = false;  // a headline metric with a value (an empty window has none: undefined, not identical)
  for (const char* h : kHeadlineMetrics)
    if (const int c = t.column(h); c >= 0) {
      if (std::all_of(rows.begin(), rows.end(), [&](std::size_t i) { return t.rows[i][c].empty(); })) continue;
      any_headline = true;
      if (!same(c)) return false;
    }
  if (any_headline) return true;
  for (int c : numeric)
    if (t.header[c] != "seed" && t.header[c] != "repetition" && !same(c)) return false;
  return true;
}

std::string point_warnings(const CsvTable& t, const std::vector<std::size_t>& rows, int warnings_column,
                           bool identical) {
  std::vector<std::pair<std::string, std::size_t>> distinct;  // first-seen order
  if (warnings_column >= 0)
    for (std::size_t i : rows) {
      const std::string& cell = t.rows[i][warnings_column];
      if (cell.empty()) continue;
      auto it = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) { return d.first == cell; });
      if (it == distinct.end()) distinct.emplace_back(cell, 1);
      else ++it->second;
    }
  std::string out;
  for (const auto& [cell, count] : distinct)
    out += (out.empty() ? "" : "; ") +
           (count == rows.size() ? cell : "[" + std::to_string(count) + " of " + std::to_string(rows.size()) + " runs] " + cell);
  if (identical) out += (out.empty() ? "" : "; ") + identical_repetitions_warning(rows.size());
  return out;
}

std::size_t write_sweep_summary(const std::string& sweep_csv, const std::string& out_csv) {
  const CsvTable t = read_csv(sweep_csv);
  const auto [first, end] = swept_columns(t);
  const int point = t.column("point");
  // Points in order of their first run.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const std::string& p = point >= 0 ? t.rows[i][point] : t.rows[i][0];
    auto [it, fresh] = rows.try_emplace(p);
    if (fresh) order.push_back(p);
    it->second.push_back(i);
  }
  // Summarized columns: every one after the swept block but the run's identity.
  std::vector<int> numeric, text;
  for (int c = end; c < static_cast<int>(t.header.size()); ++c) {
    const std::string& h = t.header[c];
    if (h == "point" || h == "repetition" || h == "seed" || h == "run") continue;
    bool all_numbers = true;
    for (const auto& r : t.rows) {
      double x;
      if (!r[c].empty() && !parse_number(r[c], x)) all_numbers = false;
    }
    (all_numbers && h != "warnings" ? numeric : text).push_back(c);  // warnings: text even when every cell is empty
  }
  const int warnings = t.column("warnings");
  CsvWriter w(out_csv);
  w.field(std::string_view("point")).field(std::string_view("runs"));
  w.field(std::string_view("runs_with_warnings")).field(std::string_view("warning_tags"));
  for (int c = first; c < end; ++c) w.field(t.header[c]);
  for (int c : text) w.field(t.header[c]);
  for (int c : numeric)
    for (const char* s : {"_mean", "_std", "_ci95"}) w.field(t.header[c] + s);
  w.end_row();
  auto number = [&](double x) {
    if (std::isnan(x)) w.empty(); else w.field(x);
  };
  for (const auto& p : order) {
    const auto& idx = rows.at(p);
    const bool identical = idx.size() >= 2 && identical_runs(t, idx, numeric);
    const std::string warning_cell = point_warnings(t, idx, warnings, identical);
    std::size_t warned = 0;
    if (warnings >= 0)
      for (std::size_t i : idx) warned += !t.rows[i][warnings].empty();
    std::string tags;
    for (const std::string& tag : warning_tags(warning_cell)) tags += (tags.empty() ? "" : ",") + tag;
    w.field(p).field(static_cast<std::int64_t>(idx.size()));
    w.field(static_cast<std::int64_t>(warned)).field(tags);
    for (int c = first; c < end; ++c) w.field(t.rows[idx.front()][c]);
    for (int c : text) {
      if (c == warnings) {
        w.field(warning_cell);
        continue;
      }
      const std::string& v = t.rows[idx.front()][c];
      bool same = std::all_of(idx.begin(), idx.end(), [&](std::size_t i) { return t.rows[i][c] == v; });
      if (same) w.field(v); else w.empty();
    }
    for (int c : numeric) {
      std::vector<double> v;
      for (std::size_t i : idx) {
        double x;
        if (parse_number(t.rows[i][c], x)) v.push_back(x);
      }
      const MeanCi m = mean_ci(v);
      // Equal in every run: no spread to estimate (an empty interval, not a 0-wide one).
      const bool constant = std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
      number(m.mean);
      number(identical || constant ? std::nan("") : m.std);
      number(identical || constant ? std::nan("") : m.ci95);
    }
    w.end_row();
  }
  w.close();
  return order.size();
}

}  // namespace servesim
