// Plot tests: `servesim plot` makes readable PNGs from a run folder and a
// sweep folder (needs gnuplot, which the README's set-up installs).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "reports/csv_writer.h"
#include "reports/plots.h"
#include "sim/core/error.h"
#include "sim/core/test_util.h"

using namespace servesim;
namespace fs = std::filesystem;
using servesim::testing::slurp;

namespace {
bool is_png(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  return in && sig[1] == 'P' && sig[2] == 'N' && sig[3] == 'G' && fs::file_size(p) > 2000;
}

void write_run(const fs::path& d, double scale) {
  fs::create_directories(d);
  CsvWriter r((d / "requests.csv").string());
  for (const char* h : {"id", "client", "finish_s", "ttft_s", "tpot_s", "e2e_s", "prompt_tokens", "generated_tokens",
                        "status"})
    r.field(std::string_view(h));
  r.end_row();
  for (int i = 0; i < 200; ++i) {
    r.field(static_cast<std::int64_t>(i)).field(static_cast<std::int64_t>(i % 2)).seconds(i * 0.1 * scale);
    r.seconds(0.01 + i * 1e-4 * scale).seconds(0.02).seconds(0.5 + i * 0.01 * scale);
    r.field(static_cast<std::int64_t>(100)).field(static_cast<std::int64_t>(20)).field(std::string_view("finished"));
    r.end_row();
  }
  r.close();
  CsvWriter c((d / "clients.csv").string());
  c.field(std::string_view("client")).end_row();
  c.field(std::string_view("a")).end_row();
  c.field(std::string_view("b")).end_row();
  c.close();
  CsvWriter t((d / "timeline.csv").string());
  for (const char* h : {"time_s", "worker", "waiting", "running", "kv_used_pages", "kv_capacity_pages", "kv_fraction"})
    t.field(std::string_view(h));
  t.end_row();
  for (int s = 0; s < 20; ++s)
    for (int w = 0; w < 2; ++w) {
      t.seconds(s).field(static_cast<std::int64_t>(w)).field(static_cast<std::int64_t>(s % 5)).field(std::int64_t{3});
      t.field(std::int64_t{10}).field(std::int64_t{100}).field(0.1);
      t.end_row();
    }
  t.close();
}
}  // namespace

TEST_CASE("plotting a run folder makes latency, service, KV and queue PNGs") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "run");
  write_run(d, 1.0);
  PlotResult r = make_plots(d.string());
  CHECK(r.images.size() == 4);
  for (const char* n : {"latency_cdf", "client_service", "kv_usage", "queue_length"}) {
    CAPTURE(n);
    CHECK(is_png(d / "plots" / (std::string(n) + ".png")));
  }
}

TEST_CASE("the service plot uses the engine's client_service.csv when the run has one") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "service");
  write_run(d, 1.0);
  auto data = [&] {
    std::ifstream in(d / "plots" / "client_service.dat");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  make_plots(d.string());
  CHECK(data().find("19.9 14000") != std::string::npos);  // credited per finished request: 100 * (100 + 2 * 20)
  CsvWriter s((d / "client_service.csv").string());
  for (const char* h : {"time_s", "client", "service", "extend_service", "backlogged"}) s.field(std::string_view(h));
  s.end_row();
  for (int t = 1; t <= 3; ++t)
    for (int c = 0; c < 2; ++c) {
      s.seconds(t).field(static_cast<std::int64_t>(c)).amount(1234.0 * t + c).amount(1000.0 * t).field(std::int64_t{1});
      s.end_row();
    }
  s.close();
  PlotResult r = make_plots(d.string());
  CHECK(r.images.size() == 4);
  CHECK(is_png(d / "plots" / "client_service.png"));
  CHECK(data() == "1 1234\n2 2468\n3 3702\n\n\n1 1235\n2 2469\n3 3703\n\n\n");
}

TEST_CASE("without client_service.csv the service plot weighs tokens with the run's report.w_in / w_out") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "weights");
  write_run(d, 1.0);
  std::ofstream(d / "config.resolved.yaml") << "name: t\nreport: {w_in: 0.5, w_out: 3}\n";
  make_plots(d.string());
  std::ifstream in(d / "plots" / "client_service.dat");
  const std::string data(std::istreambuf_iterator<char>(in), {});
  CHECK(data.find("19.9 11000") != std::string::npos);  // 100 requests * (0.5 * 100 + 3 * 20)
  std::ifstream gp(d / "plots" / "client_service.gp");
  const std::string script(std::istreambuf_iterator<char>(gp), {});
  CHECK(script.find("w_in=0.5, w_out=3") != std::string::npos);
}

TEST_CASE("plotting a sweep folder makes per-point CDFs and labelled scatter plots") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "sweep");
  CsvWriter s((d.string() + "/sweep.csv"));
  for (const char* h : {"point", "policy.local.quantum", "scenario", "throughput_rps", "e2e_p99_s", "service_diff_max"})
    s.field(std::string_view(h));
  s.end_row();
  for (int i = 0; i < 3; ++i) {
    std::string id = "p000" + std::to_string(i);
    write_run(d / "points" / id, 1.0 + i);
    s.field(id).field(static_cast<std::int64_t>(16 << (3 * i))).field(std::string_view("x"));
    s.field(1000.0 + 100 * i).field(5.0 - i).field(100.0 * (i + 1));
    s.end_row();
  }
  s.close();
  PlotResult r = make_plots(d.string());
  CHECK(is_png(d / "plots" / "latency_cdf.png"));
  CHECK(is_png(d / "plots" / "throughput_latency.png"));
  CHECK(is_png(d / "plots" / "fairness_throughput.png"));
}

namespace {
// A sweep.csv as `servesim sweep` writes it (point, repetition, seed, run,
// snake_case swept columns, summary columns), with run folders for the CDFs.
void write_sweep_csv(const fs::path& d, const std::vector<std::vector<std::string>>& rows) {
  fs::create_directories(d);
  CsvWriter s((d / "sweep.csv").string());
  for (const char* h : {"point", "repetition", "seed", "run", "policy_local", "policy_local_quantum", "scenario",
                        "throughput_rps", "e2e_p99_s", "service_diff_max"})
    s.field(std::string_view(h));
  s.end_row();
  for (const auto& r : rows) {
    for (const auto& c : r) s.field(c);
    s.end_row();
    if (!fs::exists(d / "points" / r[3])) write_run(d / "points" / r[3], 1.0);
  }
  s.close();
}
}  // namespace

TEST_CASE("sweep plots: numeric x sorted numerically on a log axis, labels from the value, repetitions as mean + CI") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "servesim_plot_qu");
  std::vector<std::vector<std::string>> rows;
  int k = 0;
  // Quanta in the string order that used to be drawn (1024 < 128 < 16 < 524288), two seeds each.
  for (const char* q : {"1024", "128", "16", "524288"})
    for (int r = 0; r < 2; ++r, ++k)
      rows.push_back({"p" + std::to_string(k / 2), std::to_string(r), std::to_string(1 + 10 * r),
                      "p" + std::to_string(k / 2) + "-r00" + std::to_string(r), "dlpm", q, "x",
                      std::to_string(100 + 3 * k), std::to_string(1.0 + r), std::to_string(50 + r)});
  rows.push_back({"p8", "0", "1", "p8-r000", "vtc", "", "x", "90", "3", "10"});
  rows.push_back({"p9", "0", "1", "p9-r000", "lpm", "", "x", "120", "4", "900"});
  write_sweep_csv(d, rows);
  PlotResult r = make_plots(d.string());
  for (const char* n : {"latency_cdf", "throughput_latency", "fairness_throughput", "e2e_p99_s_vs_policy_local_quantum",
                        "throughput_rps_vs_policy_local_quantum", "service_diff_max_vs_policy_local_quantum"}) {
    CAPTURE(n);
    CHECK(is_png(d / "plots" / (std::string(n) + ".png")));
  }
  // One line through the DLPM means, sorted by quantum, each labelled with it; then VTC, LPM alone.
  const std::string scatter = slurp(d / "plots" / "throughput_latency.dat");
  CHECK(scatter.find("\"16\"") < scatter.find("\"128\""));
  CHECK(scatter.find("\"128\"") < scatter.find("\"1024\""));
  CHECK(scatter.find("\"1024\"") < scatter.find("\"524288\""));
  CHECK(scatter.find("{") == std::string::npos);
  CHECK(scatter.find(" 1.5 ") != std::string::npos);  // mean of the two seeds' p99 (1 and 2)
  const std::string gp = slurp(d / "plots" / "throughput_latency.gp");
  // Series by policy name: one DLPM line across the quanta (the parameters are on the axis).
  CHECK(gp.find("title 'dlpm'") != std::string::npos);
  CHECK(gp.find("title 'vtc'") != std::string::npos);
  CHECK(gp.find("title 'lpm'") != std::string::npos);
  CHECK(gp.find("policy_local=") == std::string::npos);
  CHECK(gp.find("points labelled with DLPM quantum Q^u (tokens)") != std::string::npos);  // labels drawn
  CHECK(gp.find("set xlabel 'throughput (finished requests/s)'") != std::string::npos);
  CHECK(gp.find("lc rgb '#d62728'") != std::string::npos);  // DLPM's colour in every plot
  CHECK(gp.find("xyerrorlines") != std::string::npos);  // means with CI bars, never a line through seeds
  CHECK(gp.find("set key outside") != std::string::npos);
  CHECK(gp.find("opaque") == std::string::npos);
  CHECK(gp.find("sweep servesim_plot_qu") != std::string::npos);  // the sweep is named in the title
  const std::string vs = slurp(d / "plots" / "e2e_p99_s_vs_policy_local_quantum.gp");
  CHECK(vs.find("set logscale x") != std::string::npos);  // 16 .. 524288 spans decades
  CHECK(vs.find("yerrorlines") != std::string::npos);
  CHECK(vs.find("title 'vtc (no quantum)'") != std::string::npos);  // reference line, in the legend
  CHECK(vs.find("set label 'vtc' at graph 0.99") != std::string::npos);  // and labelled on the plot
  CHECK(vs.find("set yrange [0:*]") != std::string::npos);               // a non-negative measure starts at 0
  CHECK(vs.find("set xlabel 'DLPM quantum Q^u (tokens), log scale'") != std::string::npos);
  CHECK(vs.find("set ylabel 'p99 end-to-end latency (s)'") != std::string::npos);
  CHECK(slurp(d / "plots" / "e2e_p99_s_vs_policy_local_quantum.dat").rfind("16 1.5 ", 0) == 0);
}

TEST_CASE("with an SLO, a load sweep gets SLO attainment and goodput against the load, without one it does not") {
  for (const bool with_slo : {true, false}) {
    CAPTURE(with_slo);
    fs::path d = testing::fresh_temp_dir("servesim_plots_test", with_slo ? "slo" : "noslo");
    CsvWriter w((d / "sweep.csv").string());
    for (const char* h : {"point", "repetition", "seed", "run", "workload_rate_scale", "scenario", "throughput_rps",
                          "e2e_p99_s", "service_diff_max", "slo_attainment", "goodput_rps"})
      w.field(std::string_view(h));
    w.end_row();
    const char* rates[] = {"0.5", "1", "2"};
    const char* attained[] = {"0.99", "0.9", "0.4"};
    for (int i = 0; i < 3; ++i) {
      const std::string run = "p" + std::to_string(i);
      for (const std::string& c : {run, std::string("0"), std::string("1"), run, std::string(rates[i]),
                                   std::string("x"), std::to_string(10 * (i + 1)), std::string("2"), std::string("5"),
                                   std::string(with_slo ? attained[i] : ""), std::string(with_slo ? "7" : "")})
        w.field(c);
      w.end_row();
      write_run(d / "points" / run, 1.0);
    }
    w.close();
    make_plots(d.string());
    CHECK(is_png(d / "plots" / "e2e_p99_s_vs_workload_rate_scale.png"));
    CHECK(fs::exists(d / "plots" / "slo_attainment_vs_workload_rate_scale.png") == with_slo);
    CHECK(fs::exists(d / "plots" / "goodput_rps_vs_workload_rate_scale.png") == with_slo);
    if (with_slo)  // one point per load, in load order, at its attainment
      CHECK(slurp(d / "plots" / "slo_attainment_vs_workload_rate_scale.dat").rfind("0.5 0.99 0\n1 0.9 0\n2 0.4 0\n", 0) == 0);
  }
}

TEST_CASE("a seven-policy comparison draws every point: own series, colour and marker each, legend outside") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "seven");
  std::vector<std::vector<std::string>> rows;
  const char* policies[] = {"fcfs", "sjf", "ltr", "lpm", "vtc", "dlpm", "dlpm2"};
  for (int i = 0; i < 7; ++i)  // the two DLPM points sit top left, where the legend box used to be
    rows.push_back({"p" + std::to_string(i), "0", "1", "p" + std::to_string(i), policies[i], "", "x",
                    i >= 5 ? "10" : std::to_string(50 + i), i >= 5 ? std::to_string(9.0 + (i - 5) * 0.1) : "1", "5"});
  write_sweep_csv(d, rows);
  make_plots(d.string());
  const std::string gp = slurp(d / "plots" / "throughput_latency.gp");
  CHECK(gp.find("set key outside") != std::string::npos);
  CHECK(gp.find("opaque") == std::string::npos);
  std::vector<std::string> styles;
  for (int i = 0; i < 7; ++i) {
    const std::string title = "title '" + std::string(policies[i]) + "'";
    REQUIRE(gp.find(title) != std::string::npos);
    // Each series its own colour + marker: the style clause just before its title.
    const std::size_t at = gp.find(title), from = gp.rfind("lc rgb", at);
    styles.push_back(gp.substr(from, at - from));
    for (std::size_t j = 0; j < styles.size() - 1; ++j) CHECK(styles[j] != styles.back());
  }
  // No numeric x: a categorical comparison is a grouped bar chart with error bars, y from 0.
  const std::string bars = slurp(d / "plots" / "e2e_p99_s_bars.gp");
  CHECK(bars.find("with boxes lc rgb variable") != std::string::npos);  // one bar per policy, in its colour
  CHECK(bars.find("with yerrorbars") != std::string::npos);
  CHECK(bars.find("set yrange [0:*]") != std::string::npos);
  CHECK(is_png(d / "plots" / "e2e_p99_s_bars.png"));
  CHECK(slurp(d / "plots" / "e2e_p99_s_bars.dat").find("\"fcfs\" 1 0 5066061") == 0);  // #4d4d4d
  CHECK(slurp(d / "plots" / "throughput_latency.dat").find("10 9.1") != std::string::npos);
  // Coincident points of one series share one label listing their x values.
  fs::path c = testing::fresh_temp_dir("servesim_plots_test", "coincident");
  write_sweep_csv(c, {{"p0", "0", "1", "p0", "dlpm", "512", "x", "5", "1", "2"},
                      {"p1", "0", "1", "p1", "dlpm", "8192", "x", "7", "1", "2"},
                      {"p2", "0", "1", "p2", "dlpm", "131072", "x", "7", "1", "2"}});
  make_plots(c.string());
  const std::string data = slurp(c / "plots" / "throughput_latency.dat");
  CHECK(data.find("\"8192, 131072\"") != std::string::npos);
  CHECK(data.find("\"131072\"") == std::string::npos);
  // Nearly coincident points (Q^u 128 and 1024 in the shipped sweep): the second label goes below its point.
  fs::path n = testing::fresh_temp_dir("servesim_plots_test", "near");
  write_sweep_csv(n, {{"p0", "0", "1", "p0", "dlpm", "16", "x", "5", "40", "2"},
                      {"p1", "0", "1", "p1", "dlpm", "128", "x", "99.9", "50", "2"},
                      {"p2", "0", "1", "p2", "dlpm", "1024", "x", "100", "50.1", "2"}});
  make_plots(n.string());
  const std::string near = slurp(n / "plots" / "throughput_latency.dat");
  CHECK(near.find("\"16\" \"\"") != std::string::npos);    // above
  CHECK(near.find("\"128\" \"\"") != std::string::npos);   // above
  CHECK(near.find("\"\" \"1024\"") != std::string::npos);  // below: above would overlap 128's label
  CHECK(slurp(n / "plots" / "throughput_latency.gp").find("using 1:2:6 with labels offset char 0.8,char -0.8") !=
        std::string::npos);
  for (std::size_t i = 0; i < kMaxSeries; ++i)
    for (std::size_t j = 0; j < i; ++j) CHECK(series_style(i) != series_style(j));
}

TEST_CASE("plot formats: png, pdf and svg side by side, and a bad format or metric is an input error") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "formats");
  write_run(d, 1.0);
  PlotOptions o;
  o.formats = parse_plot_formats("png,pdf,svg");
  o.metrics = {"e2e_s"};
  PlotResult r = make_plots(d.string(), o);
  CHECK(r.images.size() == 12);
  CHECK(slurp(d / "plots" / "latency_cdf.pdf").rfind("%PDF", 0) == 0);
  CHECK(slurp(d / "plots" / "latency_cdf.svg").find("<svg") != std::string::npos);
  CHECK(slurp(d / "plots" / "latency_cdf.gp").find("title 'TTFT'") == std::string::npos);  // --metric e2e_s only
  CHECK_FALSE(fs::exists(d / "plots" / "latency_cdf.png.tmp"));
  CHECK_THROWS_AS(parse_plot_formats("png,jpg"), InputError);
  o.metrics = {"no_such_column"};
  CHECK_THROWS_WITH_AS(make_plots(d.string(), o), doctest::Contains("no_such_column"), InputError);
}

TEST_CASE("plot files go through the checked writer: an unwritable plots folder or file is an input error") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "unwritable");
  write_run(d, 1.0);
  std::ofstream(d / "plots") << "a file where the plots folder goes";
  CHECK_THROWS_WITH_AS(make_plots(d.string()), doctest::Contains((d / "plots").string().c_str()), InputError);
  fs::remove(d / "plots");
  fs::create_directories(d / "plots" / "latency_cdf.dat");  // a folder where a data file goes
  CHECK_THROWS_WITH_AS(make_plots(d.string()), doctest::Contains("latency_cdf.dat"), InputError);
}

TEST_CASE("plotting a folder that is neither a run nor a sweep is an error") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "empty");
  CHECK_THROWS_AS(make_plots(d.string()), InputError);
}

TEST_CASE("all plots of a folder render in one gnuplot run, and a failure names the failing plot and keeps the ones before") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "fail");
  write_run(d, 1.0);
  PlotOptions o;
  o.gnuplot = (d / "no_such_gnuplot").string();  // not installed: the first plot names the cause
  auto error_of = [&] {
    try {
      make_plots(d.string(), o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e = error_of();
  CHECK(e.find("latency_cdf.gp") != std::string::npos);
  CHECK(e.find("is gnuplot installed") != std::string::npos);
  // A gnuplot that draws the first script, then fails on the second (as gnuplot
  // stops at the first failing script, printing the marker before each).
  const fs::path fake = d / "fake_gnuplot.sh";
  std::ofstream(fake) << "#!/bin/sh\nn=0\nwhile [ $# -gt 0 ]; do\n"
                         "  if [ \"$1\" = -e ]; then n=$((n+1)); echo \"$2\" | sed \"s/^print '\\(.*\\)'$/\\1/\" >&2\n"
                         "    if [ $n -eq 2 ]; then echo 'boom: second script' >&2; exit 1; fi; shift 2\n"
                         "  else gnuplot \"$1\" || exit 1; shift; fi\ndone\n";
  fs::permissions(fake, fs::perms::owner_all);
  o.gnuplot = fake.string();
  e = error_of();
  CHECK(e.find("client_service.gp") != std::string::npos);
  CHECK(e.find("client_service.log") != std::string::npos);
  CHECK(is_png(d / "plots" / "latency_cdf.png"));  // drawn before the failure: kept
  CHECK_FALSE(fs::exists(d / "plots" / "client_service.png"));
  CHECK(slurp(d / "plots" / "client_service.log").find("boom: second script") != std::string::npos);
  CHECK(slurp(d / "plots" / "latency_cdf.log").find("boom") == std::string::npos);
  CHECK_FALSE(fs::exists(d / "plots" / "gnuplot.log.tmp"));
  // Every script resets gnuplot's settings, so each also runs alone.
  CHECK(slurp(d / "plots" / "kv_usage.gp").rfind("reset\n", 0) == 0);
}

TEST_CASE("a truncated image (gnuplot on a full disk exits 0) is an error naming that plot, with no .tmp left and none renamed") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "truncated");
  write_run(d, 1.0);
  PlotOptions o;
  // Draws everything, then cuts the second plot's image short, as a full disk does.
  const fs::path fake = d / "short_gnuplot.sh";
  std::ofstream(fake) << "#!/bin/sh\ngnuplot \"$@\" || exit 1\ntruncate -s 3000 '" << (d / "plots").string()
                      << "/client_service.png.tmp'\nexit 0\n";
  fs::permissions(fake, fs::perms::owner_all);
  o.gnuplot = fake.string();
  std::string e = "no error";
  try {
    make_plots(d.string(), o);
  } catch (const InputError& x) {
    e = x.what();
  }
  CHECK(e.find("client_service.png: gnuplot wrote an incomplete image (3000 bytes") != std::string::npos);
  CHECK(is_png(d / "plots" / "latency_cdf.png"));  // complete, before it: kept
  CHECK_FALSE(fs::exists(d / "plots" / "client_service.png"));
  for (const auto& f : fs::directory_iterator(d / "plots")) CHECK(f.path().extension() != ".tmp");
  // The same for svg and pdf: a file cut anywhere is refused.
  o.formats = {"svg", "pdf"};
  std::ofstream(fake) << "#!/bin/sh\ngnuplot \"$@\" || exit 1\ntruncate -s 2000 '" << (d / "plots").string()
                      << "/latency_cdf.pdf.tmp'\nexit 0\n";
  e = "no error";
  try {
    make_plots(d.string(), o);
  } catch (const InputError& x) {
    e = x.what();
  }
  CHECK(e.find("latency_cdf.pdf: gnuplot wrote an incomplete image") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "plots" / "latency_cdf.pdf"));
  for (const auto& f : fs::directory_iterator(d / "plots")) CHECK(f.path().extension() != ".tmp");
}

TEST_CASE("sweep plots: --x, --y and --group choose axes and series, and points with warnings are ringed") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "choose");
  fs::create_directories(d);
  CsvWriter w((d / "sweep.csv").string());
  for (const char* h : {"point", "repetition", "seed", "run", "policy_local", "workload_rate_scale", "scenario",
                        "throughput_rps", "e2e_p99_s", "warnings"})
    w.field(std::string_view(h));
  w.end_row();
  int k = 0;
  for (const char* pol : {"fcfs", "sjf"})
    for (const char* rate : {"1", "2"})
      for (int r = 0; r < 2; ++r, ++k) {
        const std::string run = "p" + std::to_string(k / 2) + "-r00" + std::to_string(r);
        const bool lost = std::string(rate) == "2" && std::string(pol) == "fcfs" && r == 1;
        for (const std::string& c :
             {"p" + std::to_string(k / 2), std::to_string(r), std::to_string(1 + r), run, std::string(pol),
              std::string(rate), std::string("x"), std::to_string(10 + k), std::to_string(1.0 + 0.1 * k),
              std::string(lost ? "12.0% of the requests in the measurement window did not finish (z)" : "")})
          w.field(c);
        w.end_row();
        write_run(d / "points" / run, 1.0);
      }
  w.close();
  // Default: x = the load, one line per policy, the warned point ringed.
  make_plots(d.string());
  const std::string vs = slurp(d / "plots" / "e2e_p99_s_vs_workload_rate_scale.gp");
  CHECK(vs.find("title 'fcfs'") != std::string::npos);
  CHECK(vs.find("title 'sjf'") != std::string::npos);
  CHECK(vs.find("runs with warnings") != std::string::npos);
  CHECK(vs.find("set xlabel 'load (x the base arrival rate)'") != std::string::npos);
  // --x policy_local --group workload_rate_scale --y e2e_p99_s: bars per policy, one bar per load.
  PlotOptions o;
  o.x = "policy_local";
  o.group = "workload_rate_scale";
  o.y = {"e2e_p99_s"};
  make_plots(d.string(), o);
  const std::string bars = slurp(d / "plots" / "e2e_p99_s_bars.gp");
  CHECK(bars.find("title 'rate_scale=1'") != std::string::npos);
  CHECK(bars.find("title 'rate_scale=2'") != std::string::npos);
  CHECK(bars.find("runs with warnings") != std::string::npos);
  CHECK(is_png(d / "plots" / "e2e_p99_s_bars.png"));
  // gnuplot drew every series and the ring: no skipped data block, no style it ignored.
  const std::string log = slurp(d / "plots" / "e2e_p99_s_bars.log");
  CHECK(log.find("no valid points") == std::string::npos);
  CHECK(log.find("warning") == std::string::npos);
  const std::string data = slurp(d / "plots" / "e2e_p99_s_bars.dat");
  CHECK(data.find("\"fcfs\"") != std::string::npos);
  CHECK(data.find("\"sjf\"") != std::string::npos);
  PlotOptions bad;
  bad.x = "nope";
  CHECK_THROWS_WITH_AS(make_plots(d.string(), bad), doctest::Contains("--x nope"), InputError);
}

TEST_CASE("a sweep whose every measurement window is empty plots what it can and says what it skipped") {
  fs::path d = testing::fresh_temp_dir("servesim_plots_test", "empty_windows");
  fs::create_directories(d);
  CsvWriter w((d / "sweep.csv").string());
  for (const char* h : {"point", "repetition", "seed", "run", "workload_rate_scale", "scenario", "throughput_rps",
                        "e2e_p99_s", "service_diff_max", "cache_hit_rate", "warnings"})
    w.field(std::string_view(h));
  w.end_row();
  for (int i = 0; i < 2; ++i) {
    const std::string run = "p" + std::to_string(i);
    for (const std::string& c : {run, std::string("0"), std::string("1"), run, std::to_string(1 + i), std::string("x"),
                                 std::string(), std::string(), std::string(), std::string("0.5"),
                                 std::string("error: the measurement window [1, 1] s holds no request: report.window "
                                             "excludes every arrival")})
      w.field(c);
    w.end_row();
    write_run(d / "points" / run, 1.0);
  }
  w.close();
  PlotResult r = make_plots(d.string());
  CHECK(is_png(d / "plots" / "cache_hit_rate_vs_workload_rate_scale.png"));
  CHECK(!fs::exists(d / "plots" / "e2e_p99_s_vs_workload_rate_scale.png"));
  bool said = false;
  for (const auto& s : r.skipped) said |= s.rfind("e2e_p99_s: no run has a value", 0) == 0;
  CHECK(said);
  // The ring marks the warned points of the plot that is drawn.
  CHECK(slurp(d / "plots" / "cache_hit_rate_vs_workload_rate_scale.gp").find("runs with warnings") != std::string::npos);
}
