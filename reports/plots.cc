#include "reports/plots.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "reports/csv_reader.h"
#include "sim/core/error.h"
#include "sim/core/service_weights.h"

namespace servesim {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTerminal = "set terminal pngcairo size 1000,640 enhanced font 'DejaVu Sans,11'\n";

double to_double(const std::string& s, double def = -1) {
  if (s.empty()) return def;
  try {
    return std::stod(s);
  } catch (...) {
    return def;
  }
}

struct Range {
  double lo = 1e300, hi = 0;
  void add(const std::vector<double>& v) {
    for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  // gnuplot's log-scale autoscale can clip the tail: state the range.
  std::string xrange() const { return hi > 0 ? fmt::format("set xrange [{}:{}]\n", lo / 1.5, hi * 1.5) : ""; }
};

// Writes the empirical CDF of `values` as "x y" lines (at most ~1000 points).
void write_cdf(std::ofstream& out, std::vector<double> values, Range* range = nullptr) {
  std::sort(values.begin(), values.end());
  if (range) range->add(values);
  const std::size_t n = values.size(), step = std::max<std::size_t>(1, n / 1000);
  for (std::size_t i = 0; i < n; i += step) out << values[i] << " " << static_cast<double>(i + 1) / n << "\n";
  if (n) out << values.back() << " 1\n";
  out << "\n\n";
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

// "policy.local.quantum" -> "quantum"
std::string short_key(const std::string& k) { return k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1); }

// Text for a gnuplot single-quoted string (keys are set noenhanced, so no escaping of _ ^ { }).
std::string quote(std::string s) {
  std::replace(s.begin(), s.end(), '\'', '"');
  return s;
}

class Plotter {
 public:
  Plotter(fs::path dir, std::string gnuplot) : dir_(std::move(dir)), gnuplot_(std::move(gnuplot)) {
    fs::create_directories(dir_ / "plots");
  }
  // Runs a gnuplot script that writes plots/<name>.png.
  void render(const std::string& name, const std::string& body) {
    fs::path script = dir_ / "plots" / (name + ".gp");
    fs::path png = dir_ / "plots" / (name + ".png");
    std::ofstream(script) << kTerminal << "set output '" << png.string() << "'\n" << body;
    std::string cmd = fmt::format("{} '{}' 2>'{}'", gnuplot_, script.string(), (dir_ / "plots" / (name + ".log")).string());
    if (std::system(cmd.c_str()) != 0)
      throw InputError(fmt::format("gnuplot failed on {} (see {}.log); is gnuplot installed (apt-get install gnuplot-nox)?",
                                   script.string(), name));
    result.images.push_back(png.string());
  }
  fs::path data(const std::string& name) const { return dir_ / "plots" / name; }
  PlotResult result;

 private:
  fs::path dir_;
  std::string gnuplot_;
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

void run_plots(const fs::path& dir, Plotter& p) {
  CsvTable req = read_csv((dir / "requests.csv").string());
  {
    std::ofstream d(p.data("latency_cdf.dat"));
    const char* cols[] = {"ttft_s", "tpot_s", "e2e_s"};
    Range range;
    for (const char* c : cols) write_cdf(d, column_values(req, c), &range);
    d.close();  // gnuplot must see the whole file
    p.render("latency_cdf",
             range.xrange() + "set title 'Latency CDF (finished requests)'\nset xlabel 'latency (s, log scale)'\n"
             "set ylabel 'fraction of requests'\nset logscale x\nset grid\nset key bottom right noenhanced\nset yrange [0:1]\n"
             "plot '" + p.data("latency_cdf.dat").string() + "' index 0 w l lw 2 title 'TTFT', '' index 1 w l lw 2 "
             "title 'TPOT (per output token)', '' index 2 w l lw 2 title 'E2E'\n");
  }
  {
    // Cumulative service per client: the engine's exact series (client_service.csv,
    // written with timeline.csv) when the run has it; else credited per finished request.
    CsvTable clients = read_csv((dir / "clients.csv").string());
    std::map<int, std::vector<std::pair<double, double>>> per;
    std::string title;
    if (fs::exists(dir / "client_service.csv")) {
      CsvTable svc = read_csv((dir / "client_service.csv").string());
      int ct = svc.column("time_s"), cc = svc.column("client"), cs = svc.column("service");
      for (const auto& r : svc.rows) per[std::stoi(r[cc])].push_back({to_double(r[ct]), to_double(r[cs])});
      title = "Service per client over time (as the fairness measures count it; client_service.csv)";
    } else {
      const auto [w_in, w_out] = service_weights(dir);
      int cf = req.column("finish_s"), cc = req.column("client"), cp = req.column("prompt_tokens"),
          co = req.column("generated_tokens");
      for (const auto& r : req.rows) {
        double f = to_double(r[cf]);
        if (f < 0) continue;
        per[std::stoi(r[cc])].push_back({f, w_in * to_double(r[cp], 0) + w_out * to_double(r[co], 0)});
      }
      for (auto& [client, pts] : per) {
        std::sort(pts.begin(), pts.end());
        double acc = 0;
        for (auto& pt : pts) pt.second = (acc += pt.second);
      }
      title = fmt::format("Service per client over time (w_in={}, w_out={}, credited when a request finishes: the run has "
                          "no timeline)", w_in, w_out);
    }
    std::ofstream d(p.data("client_service.dat"));
    std::string plot = "plot ";
    int idx = 0;
    for (const auto& [client, pts] : per) {
      for (const auto& [t, s] : pts) d << t << " " << s << "\n";
      d << "\n\n";
      std::string name = client < static_cast<int>(clients.rows.size()) ? clients.rows[client][0] : std::to_string(client);
      plot += fmt::format("{}'{}' index {} w steps lw 2 title '{}'", idx ? ", " : "",
                          p.data("client_service.dat").string(), idx, quote(name));
      ++idx;
    }
    d.close();
    if (idx > 0)
      p.render("client_service", "set title '" + title + "' noenhanced\nset xlabel 'simulated time (s)'\n"
               "set ylabel 'cumulative service (weighted tokens)'\nset grid\nset key top left noenhanced\n" + plot + "\n");
  }
  if (!fs::exists(dir / "timeline.csv")) {
    p.result.skipped.push_back("kv_usage, queue_length: no timeline.csv (report.timeline_interval_s is 0)");
    return;
  }
  CsvTable tl = read_csv((dir / "timeline.csv").string());
  int ct = tl.column("time_s"), cw = tl.column("worker"), ck = tl.column("kv_fraction"), cq = tl.column("waiting"),
      cr = tl.column("running");
  std::map<int, std::vector<const std::vector<std::string>*>> by_worker;
  for (const auto& r : tl.rows) by_worker[std::stoi(r[cw])].push_back(&r);
  std::ofstream d(p.data("timeline.dat"));
  for (auto& [w, rows] : by_worker) {
    for (const auto* r : rows) d << (*r)[ct] << " " << 100 * to_double((*r)[ck], 0) << " " << (*r)[cq] << " " << (*r)[cr] << "\n";
    d << "\n\n";
  }
  d.close();
  auto series = [&](int col) {
    std::string s = "plot ";
    int i = 0;
    for (auto& [w, rows] : by_worker) {
      s += fmt::format("{}'{}' index {} using 1:{} w l title 'worker {}'", i ? ", " : "",
                       p.data("timeline.dat").string(), i, col, w);
      ++i;
    }
    return s + "\n";
  };
  std::string key = by_worker.size() > 8 ? "set key off\n" : "set key outside right noenhanced\n";
  p.render("kv_usage", "set title 'KV cache use per worker'\nset xlabel 'simulated time (s)'\n"
                       "set ylabel 'KV pages used (% of capacity)'\nset yrange [0:105]\nset grid\n" + key + series(2));
  p.render("queue_length", "set title 'Waiting requests per worker'\nset xlabel 'simulated time (s)'\n"
                           "set ylabel 'requests waiting'\nset grid\n" + key + series(3));
}

void sweep_plots(const fs::path& dir, Plotter& p) {
  CsvTable s = read_csv((dir / "sweep.csv").string());
  // Label of a point: its swept values (columns between `point` and `scenario`).
  int first_summary = s.column("scenario");
  auto label = [&](const std::vector<std::string>& r) {
    std::string l;
    for (int i = 1; i < (first_summary < 0 ? 1 : first_summary); ++i) {
      std::string k = s.header[i];
      k = k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1);
      l += (l.empty() ? "" : " ") + k + "=" + r[i];
    }
    return l.empty() ? r[0] : l;
  };
  {
    std::ofstream d(p.data("latency_cdf.dat"));
    std::string plot = "plot ";
    int idx = 0;
    Range range;
    for (const auto& r : s.rows) {
      if (idx >= 16) break;  // beyond 16 lines a CDF plot is unreadable
      fs::path rq = dir / "points" / r[0] / "requests.csv";
      if (!fs::exists(rq)) continue;
      write_cdf(d, column_values(read_csv(rq.string()), "e2e_s"), &range);
      plot += fmt::format("{}'{}' index {} w l lw 2 title '{}'", idx ? ", " : "", p.data("latency_cdf.dat").string(),
                          idx, quote(label(r)));
      ++idx;
    }
    d.close();
    if (s.rows.size() > 16) p.result.skipped.push_back("latency_cdf: only the first 16 points are drawn");
    if (idx)
      p.render("latency_cdf", range.xrange() + "set title 'End-to-end latency CDF per sweep point'\nset xlabel 'E2E latency (s, log scale)'\n"
                              "set ylabel 'fraction of requests'\nset logscale x\nset grid\nset yrange [0:1]\n"
                              "set key bottom right font ',9' noenhanced\n" + plot + "\n");
  }
  int thr = s.column("throughput_rps"), p99 = s.column("e2e_p99_s");
  // One series per combination of all swept values but the last, plus the name
  // of the last swept key (so explicit reference rows, which sweep another key,
  // form their own series). Each point is labelled with its last swept value.
  auto split = [&](const std::vector<std::string>& r) {
    const int end = first_summary < 0 ? 1 : first_summary;
    int last = -1;
    for (int i = 1; i < end; ++i)
      if (!r[i].empty()) last = i;
    std::string series, point = last > 0 ? r[last] : r[0];
    for (int i = 1; i < end; ++i)
      if (i != last && !r[i].empty()) series += (series.empty() ? "" : " ") + short_key(s.header[i]) + "=" + r[i];
    if (last > 0) series += (series.empty() ? "by " : ", by ") + short_key(s.header[last]);
    return std::pair{series.empty() ? std::string("points") : series, point};
  };
  auto scatter = [&](const std::string& name, int ycol, const std::string& title, const std::string& ylabel) {
    std::map<std::string, std::vector<std::tuple<double, double, std::string>>> series;
    for (const auto& r : s.rows) {
      auto [ser, pt] = split(r);
      series[ser].emplace_back(to_double(r[thr]), to_double(r[ycol]), pt);
    }
    std::ofstream d(p.data(name + ".dat"));
    std::string plot = "plot ";
    int idx = 0, labelled = -1;
    for (auto& [ser, pts] : series) {
      // Points stay in sweep order, so a line follows the swept value (e.g. growing Q^u).
      for (const auto& [x, y, l] : pts) d << x << " " << y << " \"" << l << "\"\n";
      d << "\n\n";
      std::string series_title = ser;
      std::replace(series_title.begin(), series_title.end(), '\'', '"');
      // Lines only through a real sweep dimension; two or fewer points (reference rows) stand alone.
      plot += fmt::format("{}'{}' index {} using 1:2 {} pt {} ps 1.4 lw 2 title '{}'", idx ? ", " : "",
                          p.data(name + ".dat").string(), idx, pts.size() > 2 ? "w lp" : "w p", 7 + 2 * (idx % 3), series_title);
      // Label one series per distinct set of labels, alternating above/below to limit overlap.
      bool distinct = labelled < 0 || pts.size() <= 2;
      if (distinct) {
        for (const char* every : {"every 2", "every 2::1"})  // alternate labels above and below the points
          plot += fmt::format(", '' index {} {} using 1:2:3 with labels offset 0.6,{} left font ',9' noenhanced notitle",
                              idx, every, every[7] ? "-1.1" : "0.9");
        if (pts.size() > 2) labelled = idx;
      }
      ++idx;
    }
    d.close();
    p.render(name, "set title '" + title + "'\nset xlabel 'throughput (finished requests/s)'\nset ylabel '" + ylabel +
                       "'\nset grid\nset key top left noenhanced box opaque\n"
                       "set offsets graph 0.05, graph 0.2, graph 0.1, 0\nset yrange [0:*]\n" + plot + "\n");
  };
  if (thr >= 0 && p99 >= 0) scatter("throughput_latency", p99, "p99 end-to-end latency vs throughput", "p99 E2E latency (s)");
  int fair = s.column("service_diff_max"), fair_ext = s.column("extend_service_diff_max");
  if (fair >= 0 && thr >= 0)
    scatter("fairness_throughput", fair, "Fairness vs throughput (service = w_{in} x all prompt tokens + w_{out} x output tokens)",
            "max service difference, backlogged clients (weighted tokens)");
  else
    p.result.skipped.push_back("fairness_throughput: sweep.csv has no service_diff_max column");
  if (fair_ext >= 0 && thr >= 0)
    scatter("fairness_extend_throughput", fair_ext,
            "Fairness vs throughput (service = w_{in} x uncached prompt tokens + w_{out} x output tokens)",
            "max extend-service difference, backlogged clients (weighted tokens)");
}

}  // namespace

PlotResult make_plots(const std::string& dir_s, const std::string& gnuplot) {
  fs::path dir(dir_s);
  Plotter p(dir, gnuplot);
  if (fs::exists(dir / "sweep.csv"))
    sweep_plots(dir, p);
  else if (fs::exists(dir / "requests.csv"))
    run_plots(dir, p);
  else
    throw InputError(fmt::format("{}: neither a run folder (requests.csv) nor a sweep folder (sweep.csv)", dir_s));
  return p.result;
}

}  // namespace servesim
