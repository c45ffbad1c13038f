#include "reports/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "reports/csv_reader.h"
#include "reports/output_dir.h"
#include "reports/sweep_summary.h"
#include "sim/core/error.h"
#include "sim/core/service_weights.h"

namespace servesim {
namespace fs = std::filesystem;
namespace {

// Ten colours that stay apart in print, seven filled/open markers: the pair
// (i % 10, i % 7) repeats only after 70 series.
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#4d4d4d", "#bcbd22", "#17becf"};
constexpr int kMarkers[] = {7, 5, 9, 11, 13, 6, 4};

struct PolicyColour {
  const char* name;
  const char* colour;
};
// One colour per policy name, apart in print; routing policies reuse the
// palette (a sweep rarely varies both a local and a global policy).
constexpr PolicyColour kPolicyColours[] = {
    {"fcfs", "#4d4d4d"},        {"sjf", "#8c564b"},          {"ltr", "#e377c2"},
    {"lpm", "#1f77b4"},         {"vtc", "#2ca02c"},          {"dlpm", "#d62728"},
    {"d2lpm", "#ff7f0e"},       {"preble_e2", "#9467bd"},    {"preble_local", "#9467bd"},
    {"dfs_weight", "#17becf"},  {"cache_aware", "#bcbd22"},  {"round_robin", "#7f7f7f"},
    {"least_outstanding", "#17becf"}, {"least_load", "#1f77b4"}, {"random", "#bcbd22"},
};

std::string terminal(const std::string& format) {
  if (format == "pdf") return "set terminal pdfcairo size 10in,6in enhanced font 'DejaVu Sans,9'\n";
  if (format == "svg") return "set terminal svg size 1200,700 dynamic enhanced font 'DejaVu Sans,11'\n";
  return "set terminal pngcairo size 1200,700 enhanced font 'DejaVu Sans,11'\n";
}

double to_double(const std::string& s, double def = -1) {
  double x;
  return parse_number(s, x) ? x : def;
}

std::string plot_num(double x) { return fmt::format("{:.10g}", x); }

struct Range {
  double lo = 1e300, hi = 0;
  void add(const std::vector<double>& v) {
    for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  // gnuplot's log-scale autoscale can clip the tail: state the range.
  std::string xrange() const { return hi > 0 ? fmt::format("set xrange [{}:{}]\n", plot_num(lo / 1.5), plot_num(hi * 1.5)) : ""; }
};

// The empirical CDF of `values` as "x y" lines (at most ~1000 points), then a block separator.
void write_cdf(std::string& out, std::vector<double> values, Range* range = nullptr) {
  std::sort(values.begin(), values.end());
  if (range) range->add(values);
  const std::size_t n = values.size(), step = std::max<std::size_t>(1, n / 1000);
  for (std::size_t i = 0; i < n; i += step)
    out += fmt::format("{} {}\n", plot_num(values[i]), plot_num(static_cast<double>(i + 1) / static_cast<double>(n)));
  if (n) out += plot_num(values.back()) + " 1\n";
  out += "\n\n";
}

std::vector<double> column_values(const CsvTable& t, const std::string& col) {
  std::vector<double> v;
  int c = t.column(col);
  if (c < 0) return v;
  int status = t.column("status");
  for (const auto& r : t.rows) {
    if (status >= 0 && r[status] != "finished") continue;
    double x = to_double(r[c]);
    if (x > 0) v.push_back(x);
  }
  return v;
}

// Text for a gnuplot double-quoted string (titles: "\\n" there is a line break).
std::string dquote(std::string s) {
  std::replace(s.begin(), s.end(), '"', '\'');
  std::replace(s.begin(), s.end(), '\\', '/');
  return s;
}

// Text for a gnuplot single-quoted string (everything is set noenhanced, so no escaping of _ ^ { }).
std::string quote(std::string s) {
  std::replace(s.begin(), s.end(), '\'', '"');
  return s;
}

class Plotter {
 public:
  Plotter(fs::path dir, const PlotOptions& o) : dir_(std::move(dir)), o_(o) {
    ensure_output_dir((dir_ / "plots").string());
  }
  // Writes plots/<name>.gp; flush() runs it: plots/<name>.<format> for every format.
  void render(const std::string& name, const std::string& body) {
    Pending job{name, (dir_ / "plots" / (name + ".gp")).string(), {}};
    // Each script starts from gnuplot's defaults (reset): they run one after
    // another in one gnuplot process, and each stands alone too.
    std::string text = "reset\n";
    for (std::size_t i = 0; i < o_.formats.size(); ++i) {
      job.images.push_back((dir_ / "plots" / (name + "." + o_.formats[i])).string());
      text += terminal(o_.formats[i]) + "set output '" + job.images.back() + ".tmp'\n" + (i == 0 ? body : "replot\n") +
              "set output\n";
    }
    write_file(job.script, text);
    pending_.push_back(std::move(job));
  }
  // Runs every script written since the last flush in ONE gnuplot process
  // (starting gnuplot costs more than drawing a plot), in order; a marker
  // printed before each script splits gnuplot's messages into
  // plots/<name>.log. gnuplot stops at the first failing script: the plots
  // before it are kept, and the error names that script and its log.
  void flush() {
    if (pending_.empty()) return;
    const fs::path plots = dir_ / "plots";
    std::string cmd = o_.gnuplot;
    for (const Pending& job : pending_) {
      for (const auto& img : job.images)
        remove_outputs(fs::path(img).parent_path().string(), {fs::path(img).filename().string()});
      cmd += fmt::format(" -e \"print '{}{}'\" '{}'", kMarker, job.name, job.script);
    }
    const std::string all_log = (plots / "gnuplot.log.tmp").string();
    const int rc = std::system(fmt::format("{} 2>'{}'", cmd, all_log).c_str());
    std::vector<Pending> jobs;
    jobs.swap(pending_);
    std::error_code ec;
    try {
      std::map<std::string, std::string> logs;  // per plot: what gnuplot printed while running it
      std::string current = jobs.front().name, seen;
      {
        std::ifstream in(all_log);
        if (!in && rc == 0) throw InputError(fmt::format("{}: was not written", all_log));
        for (std::string line; std::getline(in, line);) {
          if (line.rfind(kMarker, 0) == 0) {
            current = seen = line.substr(std::string_view(kMarker).size());
            logs[current];
          } else {
            logs[current] += line + "\n";
          }
        }
      }
      fs::remove(all_log, ec);
      for (const Pending& job : jobs) {
        const std::string log = (plots / (job.name + ".log")).string();
        write_file(log, logs[job.name]);
        // The failing plot: the one gnuplot's last marker names or, when its messages
        // are lost (a full disk), the first one with an incomplete image.
        std::string problem;
        for (const auto& img : job.images)
          if (problem.empty()) problem = image_problem(img + ".tmp", img);
        const bool failed = rc != 0 && (job.name == seen || (seen.empty() && !problem.empty()));
        if (failed)
          throw InputError(fmt::format("gnuplot failed on {} (see {}){}", job.script, log,
                                       problem.empty() || !fs::exists(job.images.front() + ".tmp", ec)
                                           ? "; is gnuplot installed (apt-get install gnuplot-nox)?"
                                           : ": " + problem));
        if (!problem.empty()) throw InputError(fmt::format("{} (see {})", problem, log));
        for (const auto& img : job.images) {
          commit_rename(img + ".tmp", img);
          result.images.push_back(img);
        }
      }
      if (rc != 0 && seen.empty())  // every image complete, yet gnuplot failed and its messages are lost
        throw InputError(fmt::format("gnuplot exited with status {} and its messages could not be read ({})", rc, all_log));
    } catch (...) {
      for (const Pending& job : jobs)  // no temporary image outlives a failed flush
        for (const auto& img : job.images) fs::remove(img + ".tmp", ec);
      fs::remove(all_log, ec);
      throw;
    }
  }
  // Writes plots/<name> (data for a script) and returns its path.
  std::string data(const std::string& name, const std::string& content) const {
    const std::string path = (dir_ / "plots" / name).string();
    write_file(path, content);
    return path;
  }
  PlotResult result;

 private:
  // Empty when `tmp` holds a complete image for `img` (png, svg or pdf by its extension),
  // else what is wrong, naming `img`: not just size > 0, as gnuplot on a full disk exits 0
  // after writing part of a file.
  static std::string image_problem(const std::string& tmp, const std::string& img) {
    std::error_code ec;
    if (!fs::is_regular_file(tmp, ec)) return fmt::format("{}: gnuplot wrote no image", img);
    const auto size = fs::file_size(tmp, ec);
    if (ec || size == 0) return fmt::format("{}: gnuplot wrote an empty image", img);
    std::ifstream in(tmp, std::ios::binary);
    std::string head(std::min<std::uintmax_t>(size, 8), '\0'), tail(std::min<std::uintmax_t>(size, 1024), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    in.seekg(static_cast<std::streamoff>(size - tail.size()));
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    if (!in) return fmt::format("{}: cannot read gnuplot's image back", img);
    const std::string ext = fs::path(img).extension().string();
    bool complete = false;
    if (ext == ".png") {  // signature, and the IEND chunk (length 0, type, CRC) as the last 12 bytes
      static const std::string sig("\x89PNG\r\n\x1a\n", 8), iend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
      complete = head == sig && tail.size() >= 12 && tail.compare(tail.size() - 12, 12, iend) == 0;
    } else if (ext == ".pdf") {  // header, and the %%EOF trailer near the end
      complete = head.rfind("%PDF-", 0) == 0 && tail.find("%%EOF") != std::string::npos;
    } else if (ext == ".svg") {  // the closing tag, followed only by white space
      const auto end = tail.find_last_not_of(" \t\r\n");
      complete = end != std::string::npos && end + 1 >= 6 && tail.compare(end + 1 - 6, 6, "</svg>") == 0;
    } else {
      complete = true;
    }
    if (!complete) return fmt::format("{}: gnuplot wrote an incomplete image ({} bytes; a full disk?)", img, size);
    return {};
  }
  static void commit_rename(const std::string& from, const std::string& to) {
    std::error_code ec;
    if (!fs::exists(from, ec)) throw InputError(fmt::format("{}: was not written (no {})", to, from));
    fs::rename(from, to, ec);
    if (ec) throw InputError(fmt::format("{}: cannot rename {} into place: {}", to, from, ec.message()));
  }
  static constexpr const char* kMarker = "@@@servesim-plot ";
  struct Pending {
    std::string name, script;
    std::vector<std::string> images;
  };
  fs::path dir_;
  const PlotOptions& o_;
  std::vector<Pending> pending_;
};

// The run's service weights: report.w_in / report.w_out of its
// config.resolved.yaml; the defaults when the folder has no such file.
std::pair<double, double> service_weights(const fs::path& dir) {
  double w_in = kDefaultWIn, w_out = kDefaultWOut;
  const fs::path config = dir / "config.resolved.yaml";
  if (!fs::exists(config)) return {w_in, w_out};
  try {
    const YAML::Node report = YAML::LoadFile(config.string())["report"];
    if (report && report["w_in"]) w_in = report["w_in"].as<double>();
    if (report && report["w_out"]) w_out = report["w_out"].as<double>();
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: report.w_in / report.w_out: {}", config.string(), e.what()));
  }
  return {w_in, w_out};
}

// "run <folder>" (and its scenario's name when it differs): every run plot's title names it.
std::string run_name(const fs::path& dir) {
  std::string folder = fs::path(dir).lexically_normal().filename().string();
  if (folder.empty()) folder = fs::path(dir).lexically_normal().parent_path().filename().string();
  std::string name = "run " + folder;
  if (fs::exists(dir / "summary.csv")) {
    const CsvTable s = read_csv((dir / "summary.csv").string());
    const int c = s.column("scenario");
    if (c >= 0 && s.rows.size() == 1 && s.rows[0][c] != folder) name += ", scenario " + s.rows[0][c];
  }
  return name;
}

// A client's display name: client columns may hold an index into clients.csv or a name.
std::string client_name(const std::string& cell, const CsvTable& clients) {
  double x;
  if (parse_number(cell, x) && x >= 0 && x == std::floor(x) && x < static_cast<double>(clients.rows.size()))
    return clients.rows[static_cast<std::size_t>(x)][0];
  return cell;
}

std::string metric_title(const std::string& col) {
  if (col == "ttft_s") return "TTFT";
  if (col == "tpot_s") return "TPOT (per output token)";
  if (col == "e2e_s") return "E2E";
  return col;
}

// The legend never overlaps the data: right of the plot, or below it when
// series names are long (they would squeeze the plot to a sliver).
std::string key_outside(std::size_t longest_title = 0) {
  return longest_title > 40 ? "set key outside below center vertical maxrows 8 noenhanced\n"
                            : "set key outside right top vertical noenhanced\n";
}

std::size_t longest(const std::vector<std::string>& v) {
  std::size_t n = 0;
  for (const auto& x : v) n = std::max(n, x.size());
  return n;
}

void run_plots(const fs::path& dir, Plotter& p, const PlotOptions& o) {
  const std::string name = dquote(run_name(dir));
  CsvTable req = read_csv((dir / "requests.csv").string());
  {
    std::vector<std::string> metrics = o.metrics;
    if (metrics.empty()) metrics = {"ttft_s", "tpot_s", "e2e_s"};
    std::string d, plot = "plot ";
    Range range;
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      if (req.column(metrics[i]) < 0)
        throw InputError(fmt::format("--metric {}: {} has no column '{}'", metrics[i], (dir / "requests.csv").string(),
                                     metrics[i]));
      write_cdf(d, column_values(req, metrics[i]), &range);
    }
    const std::string file = p.data("latency_cdf.dat", d);
    for (std::size_t i = 0; i < metrics.size(); ++i)
      plot += fmt::format("{}'{}' index {} w lp pi 100 ps 1.2 lw 2 {} title '{}'", i ? ", " : "", file, i,
                          series_style(i), quote(metric_title(metrics[i])));
    p.render("latency_cdf", range.xrange() + "set title \"Latency CDF (finished requests)\\n" + name +
                                "\" noenhanced\nset xlabel 'latency (s, log scale)'\n"
                                "set ylabel 'fraction of requests'\nset logscale x\nset grid\n" + key_outside() +
                                "set yrange [0:1.02]\n" + plot + "\n");
  }
  {
    // Cumulative service per client: the engine's exact series (client_service.csv,
    // written with timeline.csv) when the run has it; else credited per finished request.
    CsvTable clients = read_csv((dir / "clients.csv").string());
    std::map<std::string, std::vector<std::pair<double, double>>> per;
    std::vector<std::string> order;  // clients in first-seen order
    auto series = [&](const std::string& client) -> std::vector<std::pair<double, double>>& {
      auto [it, fresh] = per.try_emplace(client);
      if (fresh) order.push_back(client);
      return it->second;
    };
    std::string title;
    if (fs::exists(dir / "client_service.csv")) {
      CsvTable svc = read_csv((dir / "client_service.csv").string());
      int ct = svc.column("time_s"), cc = svc.column("client"), cs = svc.column("service");
      if (ct < 0 || cc < 0 || cs < 0)
        throw InputError(fmt::format("{}: needs columns time_s, client, service", (dir / "client_service.csv").string()));
      for (const auto& r : svc.rows) series(client_name(r[cc], clients)).push_back({to_double(r[ct]), to_double(r[cs])});
      title = "Service per client over time (as the fairness measures count it; client_service.csv)";
    } else {
      const auto [w_in, w_out] = service_weights(dir);
      int cf = req.column("finish_s"), cc = req.column("client"), cp = req.column("prompt_tokens"),
          co = req.column("generated_tokens");
      if (cf < 0 || cc < 0 || cp < 0 || co < 0)
        throw InputError(fmt::format("{}: needs columns finish_s, client, prompt_tokens, generated_tokens",
                                     (dir / "requests.csv").string()));
      for (const auto& r : req.rows) {
        double f = to_double(r[cf]);
        if (f < 0) continue;
        series(client_name(r[cc], clients)).push_back({f, w_in * to_double(r[cp], 0) + w_out * to_double(r[co], 0)});
      }
      for (auto& [client, pts] : per) {
        std::sort(pts.begin(), pts.end());
        double acc = 0;
        for (auto& pt : pts) pt.second = (acc += pt.second);
      }
      title = fmt::format("Service per client over time (w_in={}, w_out={}, credited when a request finishes: the run "
                          "has no timeline)", w_in, w_out);
    }
    // Clients in clients.csv order where known; beyond kMaxSeries the largest by final service.
    std::vector<std::string> shown;
    for (const auto& r : clients.rows)
      if (!r.empty() && per.count(r[0])) shown.push_back(r[0]);
    for (const auto& c : order)
      if (std::find(shown.begin(), shown.end(), c) == shown.end()) shown.push_back(c);
    std::string note;
    if (shown.size() > kMaxSeries) {
      std::vector<std::string> by_service = shown;
      std::stable_sort(by_service.begin(), by_service.end(), [&](const std::string& a, const std::string& b) {
        return per[a].back().second > per[b].back().second;
      });
      by_service.resize(kMaxSeries);
      note = fmt::format(" - the {} clients with the most service of {}", kMaxSeries, shown.size());
      std::vector<std::string> kept;
      for (const auto& c : shown)
        if (std::find(by_service.begin(), by_service.end(), c) != by_service.end()) kept.push_back(c);
      shown = kept;
    }
    std::string d, plot = "plot ";
    for (const auto& c : shown) {
      for (const auto& [t, s] : per[c]) d += plot_num(t) + " " + plot_num(s) + "\n";
      d += "\n\n";
    }
    const std::string file = p.data("client_service.dat", d);
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const std::size_t n = per[shown[i]].size();
      plot += fmt::format("{}'{}' index {} w steps lw 2 {} notitle, '' index {} every {} w p ps 1.2 {} title '{}'",
                          i ? ", " : "", file, i, series_style(i), i, std::max<std::size_t>(1, n / 12),
                          series_style(i), quote(shown[i]));
    }
    if (!shown.empty())
      p.render("client_service", "set title \"" + dquote(title) + note + "\\n" + name +
                                     "\" noenhanced\nset xlabel 'simulated time (s)'\n"
                                     "set ylabel 'cumulative service (weighted tokens)'\nset grid\n" + key_outside() +
                                     plot + "\n");
  }
  if (!fs::exists(dir / "timeline.csv")) {
    p.result.skipped.push_back("kv_usage, queue_length: no timeline.csv (report.timeline_interval_s is 0)");
    return;
  }
  CsvTable tl = read_csv((dir / "timeline.csv").string());
  int ct = tl.column("time_s"), cw = tl.column("worker"), ck = tl.column("kv_fraction"), cq = tl.column("waiting");
  if (ct < 0 || cw < 0 || ck < 0 || cq < 0)
    throw InputError(fmt::format("{}: needs columns time_s, worker, kv_fraction, waiting", (dir / "timeline.csv").string()));
  std::map<int, std::vector<const std::vector<std::string>*>> by_worker;
  for (const auto& r : tl.rows) by_worker[static_cast<int>(to_double(r[cw], 0))].push_back(&r);
  std::string d;
  for (auto& [w, rows] : by_worker) {
    for (const auto* r : rows) d += (*r)[ct] + " " + plot_num(100 * to_double((*r)[ck], 0)) + " " + (*r)[cq] + "\n";
    d += "\n\n";
  }
  const std::string file = p.data("timeline.dat", d);
  const std::size_t drawn = std::min(by_worker.size(), kMaxSeries);
  const std::string note =
      by_worker.size() > kMaxSeries ? fmt::format(" (workers 0-{} of {})", drawn - 1, by_worker.size()) : "";
  auto series = [&](int col) {
    std::string s = "plot ";
    std::size_t i = 0;
    for (auto& [w, rows] : by_worker) {
      if (i >= drawn) break;
      s += fmt::format("{}'{}' index {} using 1:{} w lp pi {} ps 1 {} title 'worker {}'", i ? ", " : "", file, i, col,
                       std::max<std::size_t>(1, rows.size() / 12), series_style(i), w);
      ++i;
    }
    return s + "\n";
  };
  p.render("kv_usage", "set title \"KV cache use per worker" + note + "\\n" + name +
                           "\" noenhanced\nset xlabel 'simulated time (s)'\n"
                           "set ylabel 'KV pages used (% of capacity)'\nset yrange [0:105]\nset grid\n" + key_outside() +
                           series(2));
  p.render("queue_length", "set title \"Waiting requests per worker" + note + "\\n" + name +
                               "\" noenhanced\nset xlabel 'simulated time (s)'\n"
                               "set ylabel 'requests waiting'\nset grid\n" + key_outside() + series(3));
}

// ---- sweeps ----------------------------------------------------------------

// One point of the sweep plots: the rows of sweep.csv with the same swept values.
struct Group {
  std::vector<std::string> swept;  // values of the swept columns
  std::vector<std::size_t> rows;
  std::string series;              // the other swept values, "k=v, k=v"
  std::optional<double> x;         // its value of the x swept column
  std::string x_text;
  std::string category;            // bar charts: its x value (text x) or its series
  bool warned = false;             // some run has a warning (reports/run_warnings.h)
};

struct SweepData {
  CsvTable t;
  int first = 1, end = 1;          // swept columns [first, end)
  int x_col = -1;                  // the numeric swept column on the x axis, or -1
  bool log_x = false;
  std::vector<Group> groups;       // in sweep order
  std::vector<std::string> series; // series names, sorted (numbers numerically)
  std::vector<std::string> styles; // gnuplot style of each series (colour by policy name)
  bool repeated = false;           // some group has several runs
  bool categorical = false;        // no numeric x: bar charts
  std::vector<std::string> categories;  // bar chart categories, in sweep order
  std::string name;                // "sweep <name>" for titles
};

// "dlpm(quantum=16,...)" -> "dlpm".
std::string policy_name(const std::string& v) { return v.substr(0, v.find('(')); }
bool is_policy_column(const std::string& h) { return h == "policy_local" || h == "policy_global"; }

// "policy_local_quantum" -> "quantum"; "workload_rate_scale" -> "rate_scale".
std::string short_key(const std::string& h) {
  for (const char* p : {"policy_local_", "policy_global_", "workload_", "cluster_", "report_"})
    if (h.rfind(p, 0) == 0 && h.size() > std::string(p).size()) return h.substr(std::string(p).size());
  return h;
}

// A column's value as a series or category label part: policies by name alone.
std::string label_part(const std::string& h, const std::string& v) {
  return is_policy_column(h) ? policy_name(v) : short_key(h) + "=" + v;
}

std::string clip_title(const std::string& t) {
  return t.size() <= kMaxTitle ? t : t.substr(0, kMaxTitle - 3) + "...";
}

SweepData read_sweep(const fs::path& dir, const PlotOptions& o) {
  SweepData s;
  s.t = read_csv((dir / "sweep.csv").string());
  std::tie(s.first, s.end) = swept_columns(s.t);
  const std::string csv = (dir / "sweep.csv").string();
  auto need = [&](const std::string& opt, const std::string& col) {
    const int c = s.t.column(col);
    if (c < 0) throw InputError(fmt::format("{} {}: {} has no column '{}'", opt, col, csv, col));
    return c;
  };
  const int group_col = o.group.empty() ? -1 : need("--group", o.group);
  int text_x = -1;  // --x naming a text column: categories of bar charts
  if (!o.x.empty()) {
    const int c = need("--x", o.x);
    bool numeric = true;
    for (const auto& r : s.t.rows) {
      double v;
      if (!r[c].empty() && !parse_number(r[c], v)) numeric = false;
    }
    if (numeric) {
      s.x_col = c;
      double lo = 1e300, hi = -1e300;
      for (const auto& r : s.t.rows) {
        double v;
        if (parse_number(r[c], v)) lo = std::min(lo, v), hi = std::max(hi, v);
      }
      s.log_x = lo > 0 && hi / lo >= 100;
    } else {
      text_x = c;
    }
  }
  // The x column: the last swept column with numbers only and >= 2 distinct values.
  for (int c = s.end - 1; o.x.empty() && c >= s.first && s.x_col < 0; --c) {
    std::vector<double> vals;
    bool numeric = true;
    for (const auto& r : s.t.rows) {
      double x;
      if (r[c].empty()) continue;
      if (!parse_number(r[c], x)) numeric = false;
      else vals.push_back(x);
    }
    std::sort(vals.begin(), vals.end());
    vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
    if (numeric && vals.size() >= 2) {
      s.x_col = c;
      s.log_x = vals.front() > 0 && vals.back() / vals.front() >= 100;
    }
  }
  s.categorical = s.x_col < 0;
  const int warn_col = s.t.column("warnings");
  std::map<std::vector<std::string>, std::size_t> index;
  for (std::size_t i = 0; i < s.t.rows.size(); ++i) {
    const auto& r = s.t.rows[i];
    std::vector<std::string> key(r.begin() + s.first, r.begin() + s.end);
    // A chosen x or group column outside the swept block still tells points apart.
    for (int c : {s.x_col, text_x, group_col})
      if (c >= 0 && (c < s.first || c >= s.end)) key.push_back(r[c]);
    auto [it, fresh] = index.try_emplace(key, s.groups.size());
    if (fresh) {
      Group g;
      g.swept = std::vector<std::string>(r.begin() + s.first, r.begin() + s.end);
      // Series: the --group column's value, else the other swept values (policies by name).
      std::string rest;  // the swept values that are neither x nor the series (bar categories)
      if (group_col >= 0) {
        g.series = label_part(s.t.header[group_col], r[group_col]);
        if (is_policy_column(s.t.header[group_col])) g.series = policy_name(r[group_col]);
      }
      for (int c = s.first; c < s.end; ++c) {
        if (c == s.x_col || c == text_x || c == group_col || r[c].empty() || s.t.header[c] == "seed") continue;
        const std::string part = label_part(s.t.header[c], r[c]);
        // Policies joined as compare labels them ("dlpm/d2lpm"), other values after a space.
        std::string& into = group_col < 0 ? g.series : rest;
        const bool policy = is_policy_column(s.t.header[c]);
        into += (into.empty() ? "" : policy && into.find('=') == std::string::npos ? "/" : " ") + part;
      }
      if (s.x_col >= 0 && !r[s.x_col].empty()) {
        g.x = to_double(r[s.x_col]);
        g.x_text = r[s.x_col];
      }
      if (g.series.empty()) g.series = g.x || s.categorical ? "all points" : (r.empty() ? "" : r[0]);
      g.category = text_x >= 0 ? label_part(s.t.header[text_x], r[text_x]) : (group_col >= 0 ? rest : g.series);
      if (text_x >= 0 && is_policy_column(s.t.header[text_x])) g.category = policy_name(r[text_x]);
      if (g.category.empty()) g.category = "all";
      if (std::find(s.categories.begin(), s.categories.end(), g.category) == s.categories.end())
        s.categories.push_back(g.category);
      s.groups.push_back(g);
    }
    Group& g = s.groups[it->second];
    g.rows.push_back(i);
    if (warn_col >= 0 && !r[warn_col].empty()) g.warned = true;
    if (g.rows.size() > 1) s.repeated = true;
  }
  // Bar charts without a chosen x or group: one bar per configuration, one colour each.
  if (s.categorical && text_x < 0 && group_col < 0)
    for (auto& g : s.groups) g.series = g.category;
  // Series order: by swept values, numbers numerically, text in order of first appearance.
  std::vector<std::size_t> firsts;
  {
    std::map<std::string, std::size_t> seen;
    for (std::size_t g = 0; g < s.groups.size(); ++g)
      if (seen.emplace(s.groups[g].series, g).second) firsts.push_back(g);
  }
  std::map<std::pair<int, std::string>, std::size_t> rank;
  for (const auto& g : s.groups)
    for (int c = s.first; c < s.end; ++c) rank.try_emplace({c, g.swept[c - s.first]}, rank.size());
  auto less = [&](std::size_t a, std::size_t b) {
    const Group &ga = s.groups[a], &gb = s.groups[b];
    if (ga.x.has_value() != gb.x.has_value()) return ga.x.has_value();  // lines first, reference points after
    for (int c = s.first; c < s.end; ++c) {
      if (c == s.x_col) continue;
      const std::string &va = ga.swept[c - s.first], &vb = gb.swept[c - s.first];
      if (va == vb) continue;
      if (va.empty() != vb.empty()) return vb.empty();
      double xa, xb;
      const bool na = parse_number(va, xa), nb = parse_number(vb, xb);
      if (na && nb) return xa < xb;
      if (na != nb) return na;
      return rank.at({c, va}) < rank.at({c, vb});
    }
    return a < b;
  };
  std::stable_sort(firsts.begin(), firsts.end(), less);
  for (std::size_t g : firsts) s.series.push_back(s.groups[g].series);
  // Styles: a policy's colour wherever it appears; other series the palette in order;
  // series sharing a colour told apart by marker and dash.
  std::map<std::string, int> uses;
  std::size_t palette = 0;
  for (const auto& name : s.series) {
    std::string colour = policy_colour(name);
    if (colour.empty()) colour = kColours[palette++ % 10];
    const int k = uses[colour]++;
    s.styles.push_back(fmt::format("lc rgb '{}' pt {} dt {}", colour, kMarkers[k % 7], 1 + k % 3));
  }
  std::string sweep_name = dir.lexically_normal().filename().string();
  if (std::optional<std::string> meta = [&]() -> std::optional<std::string> {
        try {
          if (!fs::exists(dir / "sweep_meta.yaml")) return std::nullopt;
          YAML::Node n = YAML::LoadFile((dir / "sweep_meta.yaml").string());
          return n["sweep"] ? std::optional<std::string>(n["sweep"].as<std::string>()) : std::nullopt;
        } catch (const YAML::Exception&) {
          return std::nullopt;
        }
      }())
    sweep_name = *meta + (*meta == sweep_name ? "" : " in " + sweep_name);
  s.name = "sweep " + sweep_name;
  return s;
}

// Later series are drawn with smaller markers, so a point that coincides with
// an earlier series' point shows inside it instead of covering it.
std::string marker_size(std::size_t drawn_index) {
  return plot_num(2.2 - 0.12 * static_cast<double>(std::min<std::size_t>(drawn_index, 9)));
}

// Whether column `col` (-1: absent) holds a number in some row (SLO columns
// are empty when the scenario sets no SLO).
bool has_number(const CsvTable& t, int col) {
  if (col < 0) return false;
  double x;
  for (const auto& row : t.rows)
    if (static_cast<std::size_t>(col) < row.size() && parse_number(row[col], x)) return true;
  return false;
}

MeanCi group_stat(const SweepData& s, const Group& g, int col) {
  std::vector<double> v;
  for (std::size_t i : g.rows) {
    double x;
    if (parse_number(s.t.rows[i][col], x)) v.push_back(x);
  }
  return mean_ci(v);
}

std::string ci_or_zero(const MeanCi& m) { return plot_num(std::isnan(m.ci95) ? 0.0 : m.ci95); }

std::string ci_note(const SweepData& s) {
  return s.repeated ? "\\nmeans over repetitions/seeds; error bars: 95% Student t confidence interval" : "";
}

// The hollow rings over points whose runs have warnings: one more data block
// "x y" and its plot clause (empty when no point is warned).
std::string warned_clause(const std::string& file, std::size_t block, bool any) {
  return any ? fmt::format(", '{}' index {} using 1:2 w p pt 6 ps 4 lw 2 lc rgb 'black' title 'runs with warnings "
                           "(sweep_summary.csv)'",
                           file, block)
             : "";
}

// y (mean ± CI) against the x swept column; one line per series, sorted by x;
// reference points (no x) as horizontal dashed lines at their mean, labelled
// with their series at the right edge.
void plot_vs_x(const SweepData& s, Plotter& p, const std::string& name, int ycol) {
  std::string d, refs, labels, warned;
  std::vector<std::pair<double, std::string>> ref_labels;  // (value, series) of reference lines
  std::vector<std::size_t> blocks;  // series index of each data block
  for (std::size_t si = 0; si < s.series.size() && si < kMaxSeries; ++si) {
    std::vector<const Group*> gs;
    for (const auto& g : s.groups)
      if (g.series == s.series[si]) gs.push_back(&g);
    if (!gs.front()->x) {
      const MeanCi m = group_stat(s, *gs.front(), ycol);
      if (!std::isnan(m.mean)) {
        refs += fmt::format(", {} w l lw 2 dt 2 {} title '{} (no {})'", plot_num(m.mean),
                            s.styles[si].substr(0, s.styles[si].find(" pt ")),
                            quote(clip_title(s.series[si])), short_key(s.t.header[s.x_col]));
        ref_labels.push_back({m.mean, s.series[si]});
      }
      continue;
    }
    std::stable_sort(gs.begin(), gs.end(), [](const Group* a, const Group* b) { return *a->x < *b->x; });
    for (const Group* g : gs) {
      const MeanCi m = group_stat(s, *g, ycol);
      if (std::isnan(m.mean)) continue;
      d += fmt::format("{} {} {}\n", plot_num(*g->x), plot_num(m.mean), ci_or_zero(m));
      if (g->warned) warned += fmt::format("{} {}\n", plot_num(*g->x), plot_num(m.mean));
    }
    d += "\n\n";
    blocks.push_back(si);
  }
  // Reference lines labelled at the right edge; lines closer than 3% of the largest
  // value share one label ("vtc, lpm") instead of printing over each other.
  std::sort(ref_labels.begin(), ref_labels.end());
  double top = 0;
  for (const auto& r : ref_labels) top = std::max(top, std::fabs(r.first));
  for (std::size_t i = 0; i < ref_labels.size();) {
    std::string text = ref_labels[i].second;
    std::size_t j = i + 1;
    for (; j < ref_labels.size() && ref_labels[j].first - ref_labels[i].first <= 0.03 * top; ++j)
      text += ", " + ref_labels[j].second;
    labels += fmt::format("set label '{}' at graph 0.99, first {} right offset 0,0.7 front noenhanced tc rgb "
                          "'#333333'\n",
                          quote(clip_title(text)), plot_num(ref_labels[i].first));
    i = j;
  }
  const bool any_warned = !warned.empty();
  if (any_warned) d += warned + "\n\n";
  const std::string file = p.data(name + ".dat", d);
  std::string plot = "plot ";
  for (std::size_t b = 0; b < blocks.size(); ++b)
    plot += fmt::format("{}'{}' index {} using 1:2{} w {} lw 2 ps {} {} title '{}'", b ? ", " : "", file, b,
                        s.repeated ? ":3" : "", s.repeated ? "yerrorlines" : "lp", marker_size(b), s.styles[blocks[b]],
                        quote(clip_title(s.series[blocks[b]])));
  if (blocks.empty()) plot = "plot NaN notitle";
  plot += warned_clause(file, blocks.size(), any_warned);
  const std::string& xname = s.t.header[s.x_col];
  const std::string& yname = s.t.header[ycol];
  p.render(name, "set title \"" + dquote(axis_title(yname)) + " vs " + dquote(axis_title(xname)) + "\\n" +
                     dquote(s.name) + ci_note(s) + "\" noenhanced\nset xlabel '" + quote(axis_title(xname)) +
                     (s.log_x ? ", log scale" : "") + "' noenhanced\nset ylabel '" + quote(axis_title(yname)) +
                     "' noenhanced\n" + (s.log_x ? "set logscale x\n" : "") + "set grid\n" + key_outside() +
                     "set offsets graph 0.03, graph 0.03, graph 0.08, 0\nset yrange [0:*]\n" + labels + plot + refs +
                     "\n");
}

// y (mean ± CI) against x (mean ± CI) of two metric columns; points of a
// series joined in order of the x swept value and labelled with it.
// One mean point of a scatter: its data row ("x y xerr yerr"), its x value as
// label text, and where the label is drawn (placed by place_scatter_labels).
struct ScatterPoint {
  double x = 0, y = 0;
  std::string row, label;
  std::string shown;   // the label drawn (coincident points: one lists all their values)
  bool below = false;  // drawn below-right of the point instead of above-right
};

// Label placement: coincident points of a series share one label; a label that
// would overlap one placed before it (in data units scaled to the plotted
// range: ~0.008 of the width per character, ~0.035 of the height per line) goes
// below its point instead of above. Labels of unlabelled blocks stay empty.
void place_scatter_labels(std::vector<std::vector<ScatterPoint>>& blocks, const std::vector<bool>& labelled) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& pts : blocks)
    for (const ScatterPoint& pt : pts) {
      x0 = std::min(x0, pt.x), x1 = std::max(x1, pt.x);
      y0 = std::min(y0, pt.y), y1 = std::max(y1, pt.y);
    }
  const double xs = x1 > x0 ? x1 - x0 : 1, ys = y1 > y0 ? y1 - y0 : 1;
  constexpr double kCharWidth = 0.008, kLineHeight = 0.035, kOffset = 0.03;
  struct Box {
    double left, right, mid;
  };
  std::vector<Box> placed;
  auto collides = [&](const Box& b) {
    for (const Box& o : placed)
      if (b.left < o.right && o.left < b.right && std::abs(b.mid - o.mid) < kLineHeight) return true;
    return false;
  };
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    auto& pts = blocks[b];
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (!labelled[b]) continue;
      bool first = true;
      std::string label = pts[i].label;
      for (std::size_t j = 0; j < pts.size(); ++j)
        if (j != i && pts[j].row == pts[i].row) {
          if (j < i) first = false;
          else label += ", " + pts[j].label;
        }
      if (!first || label.empty()) continue;
      pts[i].shown = label;
      const double xn = (pts[i].x - x0) / xs, yn = (pts[i].y - y0) / ys;
      const double right = xn + kCharWidth * (1.0 + static_cast<double>(label.size()));
      const Box above{xn, right, yn + kOffset}, below{xn, right, yn - kOffset};
      pts[i].below = collides(above) && !collides(below);
      placed.push_back(pts[i].below ? below : above);
    }
  }
}

void plot_scatter(const SweepData& s, Plotter& p, const std::string& name, int xcol, int ycol,
                  const std::string& title, const std::string& xlabel, const std::string& ylabel) {
  std::string d, warned;
  std::vector<std::pair<std::size_t, bool>> blocks;  // (series index, joined)
  std::vector<std::string> label_sets;               // each block's x values, for labelling once
  std::vector<std::vector<ScatterPoint>> block_pts;
  for (std::size_t si = 0; si < s.series.size() && si < kMaxSeries; ++si) {
    std::vector<const Group*> gs;
    for (const auto& g : s.groups)
      if (g.series == s.series[si]) gs.push_back(&g);
    const bool has_x = gs.front()->x.has_value();
    if (has_x) std::stable_sort(gs.begin(), gs.end(), [](const Group* a, const Group* b) { return *a->x < *b->x; });
    std::vector<ScatterPoint> pts;
    for (const Group* g : gs) {
      const MeanCi mx = group_stat(s, *g, xcol), my = group_stat(s, *g, ycol);
      if (std::isnan(mx.mean) || std::isnan(my.mean)) continue;
      ScatterPoint pt;
      pt.x = mx.mean, pt.y = my.mean;
      pt.row = fmt::format("{} {} {} {}", plot_num(mx.mean), plot_num(my.mean), ci_or_zero(mx), ci_or_zero(my));
      pt.label = has_x ? g->x_text : "";
      pts.push_back(std::move(pt));
      if (g->warned) warned += fmt::format("{} {}\n", plot_num(mx.mean), plot_num(my.mean));
    }
    std::string set;
    for (const auto& pt : pts) set += pt.label + ";";
    label_sets.push_back(set);
    blocks.push_back({si, has_x && pts.size() >= 2});
    block_pts.push_back(std::move(pts));
  }
  // Labels once per set of x values: series swept over the same values share them (no overprinting).
  std::vector<bool> labelled_block(blocks.size());
  for (std::size_t b = 0; b < blocks.size(); ++b)
    labelled_block[b] = blocks[b].second && std::find(label_sets.begin(), label_sets.begin() + static_cast<std::ptrdiff_t>(b),
                                                      label_sets[b]) == label_sets.begin() + static_cast<std::ptrdiff_t>(b);
  place_scatter_labels(block_pts, labelled_block);
  for (const auto& pts : block_pts) {
    for (const ScatterPoint& pt : pts)
      d += fmt::format("{} \"{}\" \"{}\"\n", pt.row, pt.below ? "" : pt.shown, pt.below ? pt.shown : "");
    d += "\n\n";
  }
  const bool any_warned = !warned.empty();
  if (any_warned) d += warned + "\n\n";
  const std::string file = p.data(name + ".dat", d);
  std::string plot = "plot ";
  bool labelled = false;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto& [si, joined] = blocks[b];
    const char* with = s.repeated ? (joined ? "xyerrorlines" : "xyerrorbars") : (joined ? "lp" : "p");
    plot += fmt::format("{}'{}' index {} using 1:2{} w {} lw 2 ps {} {} title '{}'", b ? ", " : "", file, b,
                        s.repeated ? ":3:4" : "", with, marker_size(b), s.styles[si], quote(clip_title(s.series[si])));
    if (labelled_block[b]) {  // above the point (column 5) or, where that would collide, below it (column 6)
      plot += fmt::format(", '' index {0} using 1:2:5 with labels offset char 0.8,char 0.8 left font ',9' noenhanced "
                          "notitle, '' index {0} using 1:2:6 with labels offset char 0.8,char -0.8 left font ',9' "
                          "noenhanced notitle",
                          b);
      labelled = true;
    }
  }
  if (blocks.empty()) plot = "plot NaN notitle";
  plot += warned_clause(file, blocks.size(), any_warned);
  // The title promises labels only when some are drawn.
  const std::string xnote = labelled ? "\\npoints labelled with " + axis_title(s.t.header[s.x_col]) : "";
  p.render(name, "set title \"" + dquote(title) + "\\n" + dquote(s.name) + xnote + ci_note(s) +
                     "\" noenhanced\nset xlabel '" + quote(xlabel) + "' noenhanced\nset ylabel '" + quote(ylabel) +
                     "' noenhanced\nset grid\n" + key_outside() +
                     "set offsets graph 0.08, graph 0.15, graph 0.1, 0\nset yrange [0:*]\n" + plot + "\n");
}

// Grouped bar chart: one group of bars per category, one bar per series, the
// mean with its 95% interval as an error bar; runs with warnings hatched.
void plot_bars(const SweepData& s, Plotter& p, const std::string& name, int ycol) {
  const std::string yname = s.t.header[ycol];
  const std::string title = "set title \"" + dquote(axis_title(yname)) + "\\n" + dquote(s.name) +
                            (s.repeated ? "\\nbars: mean over repetitions; error bars: 95% Student t confidence interval"
                                        : "") +
                            "\" noenhanced\nset ylabel '" + quote(axis_title(yname)) + "' noenhanced\n";
  auto clip_category = [](const std::string& c) { return c.size() <= 28 ? c : c.substr(0, 25) + "..."; };
  // One bar per configuration (a categorical comparison without --x/--group): each bar
  // in its policy's colour, the category under it, no legend needed.
  if (std::all_of(s.groups.begin(), s.groups.end(), [](const Group& g) { return g.series == g.category; })) {
    std::string d, warned;
    std::size_t i = 0;
    for (const auto& cat : s.categories) {
      const Group* g = nullptr;
      for (const auto& x : s.groups)
        if (x.category == cat) g = &x;
      const MeanCi m = group_stat(s, *g, ycol);
      const std::size_t si =
          static_cast<std::size_t>(std::find(s.series.begin(), s.series.end(), g->series) - s.series.begin());
      const std::string& style = s.styles[si];
      const std::size_t hash = style.find('#');
      const long colour = hash == std::string::npos ? 0 : std::strtol(style.substr(hash + 1, 6).c_str(), nullptr, 16);
      d += fmt::format("\"{}\" {} {} {}\n", dquote(clip_category(cat)), std::isnan(m.mean) ? "NaN" : plot_num(m.mean),
                       ci_or_zero(m), colour);
      if (g->warned && !std::isnan(m.mean))
        warned += fmt::format("{} {}\n", i, plot_num(m.mean + (std::isnan(m.ci95) ? 0 : m.ci95)));
      ++i;
    }
    if (!warned.empty()) d += "\n\n" + warned;
    const std::string file = p.data(name + ".dat", d);
    std::string plot = fmt::format("plot '{}' index 0 using 0:2:4:xtic(1) with boxes lc rgb variable fs solid 0.75 "
                                   "border -1 notitle, '' index 0 using 0:2:3 with yerrorbars lc rgb 'black' pt 0 lw 1.5 "
                                   "notitle",
                                   file);
    if (!warned.empty())
      plot += fmt::format(", '{}' index 1 using 1:2 with points pt 6 ps 3 lw 2 lc rgb 'black' title 'runs with "
                          "warnings (sweep_summary.csv)'",
                          file);
    const bool rotate = longest(s.categories) > 10 || s.categories.size() > 5;
    p.render(name, title + "set boxwidth 0.7\nset yrange [0:*]\nset xrange [-0.6:" +
                       plot_num(static_cast<double>(s.categories.size()) - 0.4) + "]\nset grid ytics\nset xtics nomirror" +
                       (rotate ? " rotate by -30 left" : "") + " noenhanced\n" +
                       (warned.empty() ? std::string("set key off\n") : key_outside()) + plot + "\n");
    return;
  }
  std::vector<std::size_t> shown;
  for (std::size_t si = 0; si < s.series.size() && si < kMaxSeries; ++si) shown.push_back(si);
  std::string d;  // no header row: every data block's first line is data (titles are given in the plot)
  bool any_warned = false;
  for (const auto& cat : s.categories) {
    d += "\"" + dquote(clip_category(cat)) + "\"";
    for (std::size_t si : shown) {
      const Group* g = nullptr;
      for (const auto& x : s.groups)
        if (x.category == cat && x.series == s.series[si]) g = &x;
      const MeanCi m = g ? group_stat(s, *g, ycol) : MeanCi{};
      if (!g || std::isnan(m.mean)) {
        d += " NaN NaN";
        continue;
      }
      d += " " + plot_num(m.mean) + " " + ci_or_zero(m);
      any_warned |= g->warned;
    }
    d += "\n";
  }
  // Warned bars: a ring above the bar (x = category index + the bar's offset).
  std::string warned;
  const double n = static_cast<double>(shown.size()), width = 1.0 / (n + 1.5);
  for (std::size_t ci = 0; ci < s.categories.size(); ++ci)
    for (std::size_t k = 0; k < shown.size(); ++k)
      for (const auto& g : s.groups)
        if (g.category == s.categories[ci] && g.series == s.series[shown[k]] && g.warned) {
          const MeanCi m = group_stat(s, g, ycol);
          if (!std::isnan(m.mean))
            warned += fmt::format("{} {}\n", plot_num(static_cast<double>(ci) + (static_cast<double>(k) - (n - 1) / 2) * width),
                                  plot_num(m.mean + (std::isnan(m.ci95) ? 0 : m.ci95)));
        }
  if (!warned.empty()) d += "\n\n" + warned;
  const std::string file = p.data(name + ".dat", d);
  std::string plot = "plot ";
  for (std::size_t k = 0; k < shown.size(); ++k)
    plot += fmt::format("{}'{}' index 0 using {}:{}{} {} fs solid 0.75 border -1 title '{}'", k ? ", " : "", file,
                        2 + 2 * k, 3 + 2 * k, k == 0 ? ":xtic(1)" : "",
                        s.styles[shown[k]].substr(0, s.styles[shown[k]].find(" pt ")),
                        quote(clip_title(s.series[shown[k]])));
  if (!warned.empty())
    plot += fmt::format(", '{}' index 1 using 1:2 with points pt 6 ps 3 lw 2 lc rgb 'black' title 'runs with "
                        "warnings (sweep_summary.csv)'",
                        file);
  (void)any_warned;
  const bool rotate = longest(s.categories) > 12 || s.categories.size() > 6;
  p.render(name, title + "set style data histogram\nset style histogram errorbars gap 1.5 lw 1.5\n"
                     "set boxwidth 1\nset yrange [0:*]\nset grid ytics\nset xtics nomirror" +
                     (rotate ? " rotate by -30 left" : "") + " noenhanced\n" +
                     key_outside() + plot + "\n");
}

// The fairness measures worth drawing for these runs: the extend-service
// ones first when a cache-aware policy is swept, then the others, keeping
// only measures that move between points (reports/compare.h).
std::vector<std::string> fairness_metrics(const CsvTable& t) {
  bool aware = false;
  for (const char* c : {"policy_local", "policy_global"}) {
    const int col = t.column(c);
    if (col < 0) continue;
    for (const auto& r : t.rows) {
      const std::string n = policy_name(r[col]);
      for (const char* a : {"lpm", "dlpm", "dfs_weight", "preble_local", "cache_aware", "d2lpm", "preble_e2"})
        if (n == a) aware = true;
    }
  }
  std::vector<std::string> order = aware ? std::vector<std::string>{"extend_service_diff_max", "service_diff_max",
                                                                   "jain_extend_service_rate", "jain_service_rate"}
                                         : std::vector<std::string>{"service_diff_max", "extend_service_diff_max",
                                                                   "jain_service_rate", "jain_extend_service_rate"};
  std::vector<std::string> out;
  for (const auto& m : order) {
    const int c = t.column(m);
    if (c < 0 || out.size() >= 2) continue;
    bool moves = false;
    for (const auto& r : t.rows)
      if (!r[c].empty() && r[c] != t.rows.front()[c]) moves = true;
    if (moves) out.push_back(m);
  }
  return out;
}

void sweep_plots(const fs::path& dir, Plotter& p, const PlotOptions& o) {
  const SweepData s = read_sweep(dir, o);
  const CsvTable& t = s.t;
  const int run_col = t.column("run") >= 0 ? t.column("run") : 0;
  {
    std::string d, plot = "plot ";
    std::size_t idx = 0;
    Range range;
    std::vector<std::size_t> order;  // groups in series order
    for (const auto& ser : s.series)
      for (std::size_t g = 0; g < s.groups.size(); ++g)
        if (s.groups[g].series == ser) order.push_back(g);
    std::vector<std::string> titles, styles;
    std::map<std::string, int> uses;  // points of one series: same colour, another marker
    for (std::size_t g : order) {
      if (idx >= kMaxSeries) break;
      const Group& grp = s.groups[g];
      fs::path rq = dir / "points" / t.rows[grp.rows.front()][run_col] / "requests.csv";
      if (!fs::exists(rq)) continue;
      write_cdf(d, column_values(read_csv(rq.string()), "e2e_s"), &range);
      std::string title = grp.series;
      if (grp.x) title += (title.empty() ? "" : " ") + short_key(t.header[s.x_col]) + "=" + grp.x_text;
      titles.push_back(title);
      const std::size_t si = static_cast<std::size_t>(std::find(s.series.begin(), s.series.end(), grp.series) -
                                                      s.series.begin());
      const int k = uses[grp.series]++;
      std::string style = s.styles[si];
      style = style.substr(0, style.find(" pt ")) + fmt::format(" pt {} dt {}", kMarkers[k % 7], 1 + k % 3);
      styles.push_back(style);
      ++idx;
    }
    if (order.size() > kMaxSeries)
      p.result.skipped.push_back(fmt::format("latency_cdf: only the first {} points are drawn", kMaxSeries));
    if (idx) {
      const std::string file = p.data("latency_cdf.dat", d);
      for (std::size_t i = 0; i < titles.size(); ++i)
        plot += fmt::format("{}'{}' index {} w lp pi 100 ps 1 lw 2 {} title '{}'", i ? ", " : "", file, i, styles[i],
                            quote(clip_title(titles[i])));
      p.render("latency_cdf", range.xrange() + "set title \"End-to-end latency CDF per sweep point (finished requests" +
                                  std::string(s.repeated ? ", repetition 0" : "") + ")\\n" + dquote(s.name) +
                                  "\" noenhanced\nset xlabel 'end-to-end latency (s), log scale'\n"
                                  "set ylabel 'fraction of finished requests'\nset logscale x\nset grid\n"
                                  "set yrange [0:1.02]\n" +
                                  key_outside() + plot + "\n");
    }
  }
  // The measures drawn: --y, else latency, throughput, the fairness that moves, cache hits, SLOs.
  std::vector<std::string> ys = o.y;
  for (const auto& y : ys)
    if (t.column(y) < 0) throw InputError(fmt::format("--y {}: {} has no column '{}'", y, (dir / "sweep.csv").string(), y));
  if (ys.empty()) {
    for (const char* m : {"e2e_p99_s", "ttft_mean_s", "throughput_rps"})
      if (t.column(m) >= 0) ys.push_back(m);
    for (const auto& m : fairness_metrics(t)) ys.push_back(m);
    if (has_number(t, t.column("cache_hit_rate"))) ys.push_back("cache_hit_rate");
    // With an SLO (scenario `slo:`), attainment and goodput: the SLO-attainment-vs-load plot.
    for (const char* m : {"slo_attainment", "goodput_rps"})
      if (has_number(t, t.column(m))) ys.push_back(m);
  }
  for (const auto& m : ys) {
    if (!has_number(t, t.column(m))) {  // e.g. every measurement window empty: nothing to draw, and says so
      p.result.skipped.push_back(m + ": no run has a value (an empty measurement window leaves the rates, latencies "
                                     "and fairness undefined; see the warnings)");
      continue;
    }
    if (s.x_col >= 0) plot_vs_x(s, p, m + "_vs_" + t.header[s.x_col], t.column(m));
    else plot_bars(s, p, m + "_bars", t.column(m));
  }
  const int thr = has_number(t, t.column("throughput_rps")) ? t.column("throughput_rps") : -1;
  const int p99 = has_number(t, t.column("e2e_p99_s")) ? t.column("e2e_p99_s") : -1;
  if (thr >= 0 && p99 >= 0)
    plot_scatter(s, p, "throughput_latency", thr, p99, "p99 end-to-end latency vs throughput", axis_title("throughput_rps"),
                 axis_title("e2e_p99_s"));
  const int fair = has_number(t, t.column("service_diff_max")) ? t.column("service_diff_max") : -1;
  const int fair_ext = has_number(t, t.column("extend_service_diff_max")) ? t.column("extend_service_diff_max") : -1;
  if (fair >= 0 && thr >= 0)
    plot_scatter(s, p, "fairness_throughput", thr, fair,
                 "Fairness vs throughput (service = w_in x all prompt tokens + w_out x output tokens; lower is fairer)",
                 axis_title("throughput_rps"), axis_title("service_diff_max"));
  else if (fair < 0)
    p.result.skipped.push_back("fairness_throughput: sweep.csv has no service_diff_max value");
  if (fair_ext >= 0 && thr >= 0)
    plot_scatter(s, p, "fairness_extend_throughput", thr, fair_ext,
                 "Fairness vs throughput (service = w_in x uncached prompt tokens + w_out x output tokens; lower is "
                 "fairer)",
                 axis_title("throughput_rps"), axis_title("extend_service_diff_max"));
  for (const auto& m : o.metrics) {
    const auto colon = m.find(':');
    std::string xs = colon == std::string::npos ? "" : m.substr(0, colon);
    const std::string ys1 = colon == std::string::npos ? m : m.substr(colon + 1);
    if (xs.empty()) xs = s.x_col >= 0 ? t.header[s.x_col] : "throughput_rps";
    for (const auto& c : {xs, ys1})
      if (t.column(c) < 0)
        throw InputError(fmt::format("--metric {}: {} has no column '{}'", m, (dir / "sweep.csv").string(), c));
    const std::string name = "custom_" + ys1 + "_vs_" + xs;
    if (t.column(xs) == s.x_col)
      plot_vs_x(s, p, name, t.column(ys1));
    else
      plot_scatter(s, p, name, t.column(xs), t.column(ys1), axis_title(ys1) + " vs " + axis_title(xs), axis_title(xs),
                   axis_title(ys1));
  }
}

}  // namespace

std::string axis_title(const std::string& col) {
  static const std::map<std::string, std::string> known = {
      {"throughput_rps", "throughput (finished requests/s)"},
      {"input_tokens_per_s", "input tokens/s"},
      {"output_tokens_per_s", "output tokens/s"},
      {"cache_hit_rate", "prefix cache hit rate (cached / prompt tokens)"},
      {"service_diff_max", "max service difference, backlogged clients (weighted tokens)"},
      {"service_diff_mean", "mean service difference, backlogged clients (weighted tokens)"},
      {"extend_service_diff_max", "max extend-service difference, backlogged clients (weighted uncached tokens)"},
      {"extend_service_diff_mean", "mean extend-service difference, backlogged clients (weighted uncached tokens)"},
      {"jain_service_rate", "Jain's index of service rates (1 = equal)"},
      {"jain_extend_service_rate", "Jain's index of extend-service rates (1 = equal)"},
      {"slo_attainment", "SLO attainment (share of requests)"},
      {"goodput_rps", "goodput (requests within SLO/s)"},
      {"goodput_output_tokens_per_s", "goodput (output tokens within SLO/s)"},
      {"policy_local_quantum", "DLPM quantum Q^u (tokens)"},
      {"policy_global_quantum", "D2LPM quantum Q^u (tokens)"},
      {"workload_rate_scale", "load (x the base arrival rate)"},
      {"cluster_workers", "workers"},
      {"unfinished", "unfinished requests"},
      {"preemptions", "preemptions"},
      {"normalized_latency_mean_s_per_token", "mean normalized latency (s/token)"},
  };
  if (auto it = known.find(col); it != known.end()) return it->second;
  // {ttft,tpot,e2e,queue}_{mean,p50,p90,p99}_s
  static const std::map<std::string, std::string> lat = {
      {"ttft", "time to first token"}, {"tpot", "time per output token"}, {"e2e", "end-to-end latency"},
      {"queue", "queueing delay"}};
  for (const auto& [k, words] : lat)
    for (const char* stat : {"mean", "p50", "p90", "p99"})
      if (col == k + "_" + stat + "_s") return std::string(stat) + " " + words + " (s)";
  // Fallback: words from the name, its unit suffix as a unit.
  std::string w = short_key(col), unit;
  for (const auto& [suffix, u] : std::vector<std::pair<std::string, std::string>>{
           {"_per_s", "/s"}, {"_rps", "requests/s"}, {"_tokens", "tokens"}, {"_s", "s"}, {"_ms", "ms"}})
    if (w.size() > suffix.size() && w.compare(w.size() - suffix.size(), suffix.size(), suffix) == 0) {
      w = w.substr(0, w.size() - suffix.size());
      unit = u;
      break;
    }
  std::replace(w.begin(), w.end(), '_', ' ');
  return unit.empty() ? w : w + " (" + unit + ")";
}

std::string policy_colour(const std::string& series) {
  // The policy that names the configuration: a router that brings its own local
  // policy (d2lpm, preble_e2) first, else the first policy named ("dlpm/cache_aware" is DLPM's).
  const std::string head = series.substr(0, series.find_first_of(" ,("));  // "dlpm/d2lpm"
  std::vector<std::string> words;
  for (std::size_t from = 0; from <= head.size();) {
    const std::size_t end = std::min(head.find('/', from), head.size());
    words.push_back(head.substr(from, end - from));
    from = end + 1;
  }
  auto colour = [](const std::string& w) -> std::string {
    for (const auto& pc : kPolicyColours)
      if (w == pc.name) return pc.colour;
    return {};
  };
  for (const auto& w : words)
    if (w == "d2lpm" || w == "preble_e2") return colour(w);
  return words.empty() ? std::string() : colour(words.front());
}

std::string series_style(std::size_t i) {
  return fmt::format("lc rgb '{}' pt {} dt {}", kColours[i % 10], kMarkers[i % 7], 1 + (i / 10) % 3);
}

std::vector<std::string> parse_plot_formats(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const std::string f = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (f != "png" && f != "pdf" && f != "svg")
      throw InputError(fmt::format("--format {}: '{}' is not one of png, pdf, svg", list, f));
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

PlotResult make_plots(const std::string& dir_s, const PlotOptions& o) {
  fs::path dir(dir_s);
  if (o.formats.empty()) throw InputError("plot: no output format (expected png, pdf and/or svg)");
  if (!fs::exists(dir / "sweep.csv") && !fs::exists(dir / "requests.csv"))
    throw InputError(fmt::format("{}: neither a run folder (requests.csv) nor a sweep folder (sweep.csv)", dir_s));
  Plotter p(dir, o);
  if (fs::exists(dir / "sweep.csv")) {
    sweep_plots(dir, p, o);
  } else {
    if (!o.x.empty() || !o.y.empty() || !o.group.empty())
      throw InputError(fmt::format("{}: --x, --y and --group choose the axes of a sweep's plots; this is a run folder",
                                   dir_s));
    run_plots(dir, p, o);
  }
  p.flush();
  return p.result;
}

}  // namespace servesim
