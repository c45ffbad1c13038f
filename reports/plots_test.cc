// Plot tests: `servesim plot` makes readable PNGs from a run folder and a
// sweep folder (needs gnuplot, which the README's set-up installs).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "reports/csv_writer.h"
#include "reports/plots.h"
#include "sim/core/error.h"

using namespace servesim;
namespace fs = std::filesystem;

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
  fs::path d = fs::temp_directory_path() / "servesim_plot_run";
  fs::remove_all(d);
  write_run(d, 1.0);
  PlotResult r = make_plots(d.string());
  CHECK(r.images.size() == 4);
  for (const char* n : {"latency_cdf", "client_service", "kv_usage", "queue_length"}) {
    CAPTURE(n);
    CHECK(is_png(d / "plots" / (std::string(n) + ".png")));
  }
}

TEST_CASE("the service plot uses the engine's client_service.csv when the run has one") {
  fs::path d = fs::temp_directory_path() / "servesim_plot_service";
  fs::remove_all(d);
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
  fs::path d = fs::temp_directory_path() / "servesim_plot_weights";
  fs::remove_all(d);
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
  fs::path d = fs::temp_directory_path() / "servesim_plot_sweep";
  fs::remove_all(d);
  fs::create_directories(d);
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

TEST_CASE("plotting a folder that is neither a run nor a sweep is an error") {
  fs::path d = fs::temp_directory_path() / "servesim_plot_empty";
  fs::create_directories(d);
  CHECK_THROWS_AS(make_plots(d.string()), InputError);
}
