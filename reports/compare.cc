#include "reports/compare.h"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/run_warnings.h"
#include "reports/sweep_summary.h"
#include "sim/core/error.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {
const char* const kHeadline[] = {"finished",    "unfinished",  "rejected",  "throughput_rps",    "output_tokens_per_s",
                                 "ttft_mean_s", "ttft_p99_s",  "tpot_mean_s", "e2e_mean_s",      "e2e_p99_s",
                                 "jain_service_rate", "service_diff_max"};

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// "policy_local_quantum" -> "quantum", "workload_rate_scale" -> "rate_scale".
std::string short_key(const std::string& h) {
  for (const char* p : {"policy_local_", "policy_global_", "workload_", "cluster_", "report_"})
    if (starts_with(h, p) && h.size() > std::string(p).size()) return h.substr(std::string(p).size());
  return h;
}

// A policy column's name without its parameters: "dlpm(quantum=16,...)" -> "dlpm".
std::string policy_name(const std::string& v) { return v.substr(0, v.find('(')); }

// "lpm/d2lpm" from the run's policy columns ("" parts left out).
std::string policy_part(const std::map<std::string, std::string>& values) {
  std::string out;
  for (const char* c : {"policy_local", "policy_global"}) {
    auto it = values.find(c);
    if (it == values.end() || it->second.empty()) continue;
    out += (out.empty() ? "" : "/") + policy_name(it->second);
  }
  return out;
}

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
    CompareInput in = input_of(t, 0, dir);
    in.config = dir;
    in.group = dir;
    return {in};
  }
  if (fs::exists(d / "sweep.csv")) {
    CsvTable t = read_csv((d / "sweep.csv").string());
    const auto [first, end] = swept_columns(t);
    const int run = t.column("run") >= 0 ? t.column("run") : 0;
    const int point = t.column("point") >= 0 ? t.column("point") : 0;
    std::vector<CompareInput> out;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      std::string label = t.rows[i][run];
      std::string swept, key;
      for (int c = first; c < end; ++c) {
        const std::string& h = t.header[c];
        const std::string& v = t.rows[i][c];
        if (v.empty()) continue;
        label += " " + h + "=" + v;
        if (h == "seed") continue;  // points that differ only in a swept seed are repetitions of one configuration
        key += h + "=" + v + ";";
        if (h == "policy_local" || h == "policy_global" || h == "policy_local_name" || h == "policy_global_name")
          continue;  // in the policy part
        swept += " " + short_key(h) + "=" + v;
      }
      CompareInput in = input_of(t, i, label);
      in.config = policy_part(in.values) + swept;
      in.group = dir + "#" + (key.empty() ? t.rows[i][point] : key);
      out.push_back(std::move(in));
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

// ---- Statistics -------------------------------------------------------------

namespace {

// Regularized incomplete beta I_x(a, b), by its continued fraction (modified
// Lentz), using the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction
// converges slowly.
double incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(1 - x, b, a);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x)) / a;
  const double tiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double num;
    if (i == 0) num = 1;
    else if (i % 2 == 0) num = (m * (b - m) * x) / ((a + 2.0 * m - 1) * (a + 2.0 * m));
    else num = -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1));
    d = 1 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    d = 1 / d;
    c = 1 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    const double cd = c * d;
    f *= cd;
    if (std::fabs(1 - cd) < 1e-14) break;
  }
  return front * (f - 1);
}

double nan() { return std::numeric_limits<double>::quiet_NaN(); }

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double var_of(const std::vector<double>& v, double m) {
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}

}  // namespace

double student_t_two_sided_p(double t, double df) {
  if (!(df > 0) || std::isnan(t)) return nan();
  if (std::isinf(t)) return 0;
  return incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

double welch_p_value(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return nan();
  const double ma = mean_of(a), mb = mean_of(b);
  const double va = var_of(a, ma) / static_cast<double>(a.size()), vb = var_of(b, mb) / static_cast<double>(b.size());
  if (va + vb == 0) return ma == mb ? nan() : 0.0;
  const double t = (ma - mb) / std::sqrt(va + vb);
  const double df = (va + vb) * (va + vb) /
                    (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  return student_t_two_sided_p(t, df);
}

double paired_p_value(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return nan();
  std::vector<double> d;
  for (std::size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - b[i]);
  const double m = mean_of(d), v = var_of(d, m);
  if (v == 0) return m == 0 ? nan() : 0.0;
  return student_t_two_sided_p(m / std::sqrt(v / static_cast<double>(d.size())), static_cast<double>(d.size() - 1));
}

// ---- Aggregated table ---------------------------------------------------------

namespace {

bool cache_aware(const std::string& policy) {
  const std::string n = policy_name(policy);
  for (const char* p : {"lpm", "dlpm", "dfs_weight", "preble_local", "cache_aware", "d2lpm", "preble_e2"})
    if (n == p) return true;
  return false;
}

struct Group {
  std::string id, label;
  std::vector<const CompareInput*> runs;
};

std::vector<double> metric_values(const Group& g, const std::string& m) {
  std::vector<double> v;
  for (const CompareInput* r : g.runs) {
    auto it = r->values.find(m);
    double x;
    if (it != r->values.end() && parse_number(it->second, x)) v.push_back(x);
  }
  return v;
}

std::string seeds_of(const Group& g) {
  std::string s;
  for (const CompareInput* r : g.runs) {
    auto it = r->values.find("seed");
    s += (it == r->values.end() ? std::string("?") : it->second) + ",";
  }
  return s;
}

std::string cell(double x) { return std::isnan(x) ? std::string() : fmt::format("{:.6g}", x); }

}  // namespace

std::vector<std::string> default_metrics(const std::vector<CompareInput>& runs) {
  std::vector<std::string> want = {"throughput_rps", "ttft_mean_s", "ttft_p99_s", "tpot_mean_s", "e2e_mean_s",
                                   "e2e_p99_s",      "unfinished",  "cache_hit_rate"};
  bool aware = false;
  for (const auto& r : runs)
    for (const char* c : {"policy_local", "policy_global"})
      if (auto it = r.values.find(c); it != r.values.end() && cache_aware(it->second)) aware = true;
  std::vector<std::string> fair = {"service_diff_max", "service_diff_mean", "extend_service_diff_max",
                                   "extend_service_diff_mean"};
  if (aware) std::rotate(fair.begin(), fair.begin() + 2, fair.end());
  fair.push_back(aware ? "jain_extend_service_rate" : "jain_service_rate");
  fair.push_back(aware ? "jain_service_rate" : "jain_extend_service_rate");
  auto moves = [&](const std::string& m) {
    std::string first;
    bool seen = false;
    for (const auto& r : runs) {
      auto it = r.values.find(m);
      if (it == r.values.end() || it->second.empty()) continue;
      if (!seen) first = it->second, seen = true;
      else if (it->second != first) return true;
    }
    return false;
  };
  std::size_t picked = 0;
  for (const auto& f : fair)
    if (picked < 2 && moves(f)) want.push_back(f), ++picked;
  if (picked == 0) want.push_back(fair.front());
  for (const auto& r : runs)
    for (const auto& c : r.order)
      if ((starts_with(c, "goodput") || c == "slo_attainment") && std::find(want.begin(), want.end(), c) == want.end())
        want.push_back(c);
  std::vector<std::string> out;  // columns some run reports a value in (SLO columns are empty without an SLO)
  for (const auto& m : want)
    for (const auto& r : runs)
      if (auto it = r.values.find(m); it != r.values.end() && !it->second.empty()) {
        out.push_back(m);
        break;
      }
  return out;
}

CompareTable compare_aggregate(const std::vector<CompareInput>& runs, const CompareOptions& o) {
  std::vector<Group> groups;
  for (const auto& r : runs) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.id == r.group; });
    if (it == groups.end()) {
      groups.push_back(Group{r.group, r.config.empty() ? r.label : r.config, {}});
      it = groups.end() - 1;
    }
    it->runs.push_back(&r);
  }
  // Two configurations with one label (two folders of the same policies): say which is which.
  for (auto& g : groups) {
    const std::size_t same = static_cast<std::size_t>(
        std::count_if(groups.begin(), groups.end(), [&](const Group& h) { return h.label == g.label; }));
    if (same > 1 && g.label != g.id) g.label += " [" + g.id + "]";
  }
  // An empty sweep shard (more shards than points) or a sweep not run yet: nothing to aggregate.
  if (groups.empty())
    throw InputError("nothing to compare: no completed runs (a sweep not run yet, or a shard with no points)");
  const std::vector<std::string> metrics = o.metrics.empty() ? default_metrics(runs) : o.metrics;
  for (const auto& m : o.metrics)
    if (std::none_of(runs.begin(), runs.end(), [&](const CompareInput& r) { return r.values.count(m) > 0; }))
      throw InputError(fmt::format("--metrics {}: no run reports that column", m));
  std::size_t base = 0;
  if (!o.baseline.empty()) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.label == o.baseline || g.id == o.baseline; });
    double k;
    if (it != groups.end()) base = static_cast<std::size_t>(it - groups.begin());
    else if (parse_number(o.baseline, k) && k >= 1 && k <= static_cast<double>(groups.size()) && k == std::floor(k))
      base = static_cast<std::size_t>(k) - 1;
    else {
      std::string known;
      for (std::size_t i = 0; i < groups.size(); ++i) known += fmt::format("\n  {}  {}", i + 1, groups[i].label);
      throw InputError(fmt::format("--baseline {}: no such configuration; give its label or its row number:{}",
                                   o.baseline, known));
    }
  }
  CompareTable t;
  t.header = {"config", "runs", "warnings"};
  for (const auto& m : metrics) t.header.insert(t.header.end(), {m + "_mean", m + "_ci95"});
  if (groups.size() > 1)
    for (const auto& m : metrics) t.header.insert(t.header.end(), {m + "_diff", m + "_ratio", m + "_p"});
  t.header.push_back("baseline");
  t.header.push_back("test");
  const bool paired_ok = [&] {
    const std::string s = seeds_of(groups[base]);
    return s.find('?') == std::string::npos;
  }();
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    std::vector<std::string> row = {g.label, std::to_string(g.runs.size())};
    // Warnings: each kind with the number of runs that have it; identical repetitions.
    std::map<std::string, std::size_t> kinds;
    std::vector<std::string> kind_order;
    for (const CompareInput* r : g.runs) {
      auto it = r->values.find("warnings");
      if (it == r->values.end()) continue;
      for (const auto& tag : warning_tags(it->second)) {
        if (!kinds.count(tag)) kind_order.push_back(tag);
        ++kinds[tag];
      }
    }
    // Identical repetitions: every headline metric the runs report is equal across them.
    bool identical = g.runs.size() >= 2, any_headline = false;
    for (const char* m : kHeadlineMetrics) {
      const auto v = metric_values(g, m);
      if (v.empty()) continue;
      any_headline = true;
      if (std::any_of(v.begin(), v.end(), [&](double x) { return x != v.front(); })) identical = false;
    }
    if (!any_headline) identical = false;  // nothing to judge by (an empty window): undefined, not identical
    std::string warn;
    for (const auto& k : kind_order) warn += (warn.empty() ? "" : " ") + fmt::format("{}({}/{})", k, kinds[k], g.runs.size());
    if (identical) warn += (warn.empty() ? "" : " ") + std::string("identical_repetitions");
    row.push_back(warn);
    for (const auto& m : metrics) {
      const auto v = metric_values(g, m);
      const MeanCi s = mean_ci(v);
      const bool constant = std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
      row.push_back(cell(s.mean));
      row.push_back(identical || constant ? std::string() : cell(s.ci95));  // no 0-wide interval
    }
    std::string test;
    if (groups.size() > 1) {
      const Group& b = groups[base];
      const bool paired = paired_ok && gi != base && g.runs.size() == b.runs.size() && seeds_of(g) == seeds_of(b);
      if (gi != base && g.runs.size() >= 2 && b.runs.size() >= 2) test = paired ? "paired t" : "Welch t";
      for (const auto& m : metrics) {
        if (gi == base) {
          row.insert(row.end(), {"", "", ""});
          continue;
        }
        const auto x = metric_values(g, m), y = metric_values(b, m);
        if (x.empty() || y.empty()) {
          row.insert(row.end(), {"", "", ""});
          continue;
        }
        const double mx = mean_of(x), my = mean_of(y);
        row.push_back(cell(mx - my));
        row.push_back(my != 0 ? cell(mx / my) : std::string());
        row.push_back(cell(paired && x.size() == y.size() ? paired_p_value(x, y) : welch_p_value(x, y)));
      }
    }
    row.push_back(gi == base ? "yes" : "");
    row.push_back(test);
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string format_aggregate(const CompareTable& t) {
  // Columns by suffix: <m>_mean with <m>_ci95, and <m>_diff/_ratio/_p.
  std::vector<std::string> metrics;
  for (const auto& h : t.header)
    if (h.size() > 5 && h.compare(h.size() - 5, 5, "_mean") == 0) metrics.push_back(h.substr(0, h.size() - 5));
  auto col = [&](const std::string& name) {
    auto it = std::find(t.header.begin(), t.header.end(), name);
    return it == t.header.end() ? -1 : static_cast<int>(it - t.header.begin());
  };
  auto num4 = [](const std::string& c) {
    double x;
    return parse_number(c, x) ? fmt::format("{:.4g}", x) : c;
  };
  CompareTable a;
  a.header = {"config", "runs"};
  for (const auto& m : metrics) a.header.push_back(m);
  a.header.push_back("warnings");
  const int base = col("baseline");
  std::string base_label;
  for (const auto& r : t.rows) {
    std::vector<std::string> row = {r[0], r[1]};
    for (const auto& m : metrics) {
      const std::string& mean = r[col(m + "_mean")];
      const std::string& ci = r[col(m + "_ci95")];
      row.push_back(mean.empty() ? "" : num4(mean) + (ci.empty() ? "" : " ±" + num4(ci)));
    }
    row.push_back(r[col("warnings")]);
    if (base >= 0 && r[base] == "yes") base_label = r[0];
    a.rows.push_back(std::move(row));
  }
  std::string out = format_table(a);
  if (col(metrics.empty() ? "" : metrics.front() + "_diff") < 0) return out + "(mean ±95% CI half-width over runs)\n";
  CompareTable d;
  d.header = {"vs " + base_label};
  for (const auto& m : metrics) d.header.push_back(m);
  d.header.push_back("test");
  for (const auto& r : t.rows) {
    if (base >= 0 && r[base] == "yes") continue;
    std::vector<std::string> row = {r[0]};
    for (const auto& m : metrics) {
      double ratio, p;
      const bool has_ratio = parse_number(r[col(m + "_ratio")], ratio);
      const bool has_p = parse_number(r[col(m + "_p")], p);
      if (!has_ratio) {
        const std::string& diff = r[col(m + "_diff")];
        double dx;
        row.push_back(diff.empty() ? "" : parse_number(diff, dx) && dx == 0 ? "same" : "diff " + num4(diff));
        continue;
      }
      std::string c = fmt::format("{:+.1f}%", 100 * (ratio - 1));
      if (has_p) c += fmt::format(" p={:.2g}{}", p, p < 0.05 ? "*" : "");
      row.push_back(c);
    }
    row.push_back(r[col("test")]);
    d.rows.push_back(std::move(row));
  }
  return out + "(mean ±95% CI half-width over runs)\n\n" + format_table(d) +
         "(relative difference of the means; p: two-sided test of no difference, * p < 0.05)\n";
}

void print_sweep_comparison(const std::string& sweep_dir) {
  if (!fs::exists(fs::path(sweep_dir) / "sweep.csv")) return;
  const std::vector<CompareInput> inputs = compare_inputs(sweep_dir);
  if (inputs.empty()) return;  // a shard with no points
  CompareTable t = compare_aggregate(inputs);
  if (t.rows.empty()) return;
  const std::size_t all = t.rows.size();
  if (all > 40) t.rows.resize(40);
  fmt::print("\n{}", format_aggregate(t));
  if (all > 40)
    fmt::print("... {} more configurations: `servesim compare {}` shows every one\n", all - 40, sweep_dir);
}

}  // namespace servesim
