// SLO verdicts, attainment and goodput, the measurement window, the run
// warnings and summary.json, on hand-built requests with exact times (what
// the fixed cost backend gives): every expected number below is computed by
// hand from the times in the test.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "reports/csv_reader.h"
#include "reports/run_report.h"
#include "reports/run_warnings.h"
#include "reports/slo.h"
#include "reports/summary_json.h"
#include "reports/window.h"

using namespace servesim;

namespace {

Time s(double x) { return seconds_to_time(x); }

// A fresh folder per test under one per-process root, removed at exit.
std::string temp_dir(const std::string& name) {
  static const struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("servesim_run_metrics_test_" + std::to_string(getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } root;
  const auto p = root.path / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// Hand-built requests: specs live in a deque (stable addresses).
struct Requests {
  std::deque<RequestSpec> specs;
  std::vector<RequestOutcome> outcomes;
  // A finished request: arrival, first token and finish in seconds.
  void finished(ClientId c, double arrival, double first, double finish, std::int64_t out_tokens) {
    RequestSpec& sp = specs.emplace_back();
    sp.id = specs.size();
    sp.client = c;
    sp.prompt_tokens = 100;
    sp.output_tokens = out_tokens;
    RequestOutcome o;
    o.spec = &sp;
    o.status = RequestStatus::kFinished;
    o.routed = true;
    o.arrival = s(arrival);
    o.admitted = s(arrival);
    o.first_token = s(first);
    o.finish = s(finish);
    o.generated_tokens = out_tokens;
    outcomes.push_back(o);
  }
  void unfinished(ClientId c, double arrival, std::int64_t out_tokens = 10) {
    RequestSpec& sp = specs.emplace_back();
    sp.id = specs.size();
    sp.client = c;
    sp.prompt_tokens = 100;
    sp.output_tokens = out_tokens;
    RequestOutcome o;
    o.spec = &sp;
    o.status = RequestStatus::kUnfinished;
    o.reason = "horizon";
    o.arrival = s(arrival);
    outcomes.push_back(o);
  }
};

struct Run {
  RunSummary summary;
  std::string dir;
};

Run run(const Requests& q, ReportOptions opt, ClientTable& clients, Time first_arrival, Time end,
        std::vector<WorkerStats> workers = {WorkerStats{}}) {
  opt.clients = &clients;
  RunReport report(opt);
  std::vector<Time> arrivals;  // the engine reports each arrival (in time order) before anything else of it
  for (const RequestOutcome& o : q.outcomes)
    if (o.arrival) arrivals.push_back(*o.arrival);
  std::sort(arrivals.begin(), arrivals.end());
  for (Time a : arrivals) report.on_arrival(a);
  for (const RequestOutcome& o : q.outcomes) report.on_request(o);
  SimulationTotals t;
  t.first_arrival = first_arrival;
  t.end_time = end;
  t.requests = q.outcomes.size();
  return {report.finish(clients, t, workers, {{"scenario", "t"}, {"policy_global", "round_robin"}}), opt.out_dir};
}

std::string cell(const CsvTable& t, std::size_t row, const char* column) {
  const int c = t.column(column);
  REQUIRE(c >= 0);
  return t.rows.at(row).at(static_cast<std::size_t>(c));
}

}  // namespace

TEST_CASE("an SLO threshold is met at equality, to the nanosecond") {
  Requests q;
  q.finished(0, 1.0, 1.5, 3.5, 5);  // ttft 0.5, tpot (3.5-1.5)/4 = 0.5, e2e 2.5
  const RequestOutcome& r = q.outcomes[0];
  SloVerdict v = evaluate_slo({0.5, 0.5, 2.5}, r);
  CHECK(v.ttft == true);
  CHECK(v.tpot == true);
  CHECK(v.e2e == true);
  CHECK(v.met == true);
  v = evaluate_slo({0.5, 0.499999999, 0}, r);
  CHECK(v.ttft == true);
  CHECK(v.tpot == false);
  CHECK(!v.e2e.has_value());  // not set
  CHECK(v.met == false);
  v = evaluate_slo({0, 0, 0}, r);
  CHECK(!v.counted);
  CHECK(!v.met.has_value());

  q.finished(0, 0, 1, 1, 1);  // one output token: no TPOT, meets any TPOT threshold
  CHECK(evaluate_slo({0, 1e-9, 0}, q.outcomes[1]).tpot == true);
  q.unfinished(0, 0);
  v = evaluate_slo({10, 10, 10}, q.outcomes[2]);
  CHECK(v.counted);
  CHECK(!v.ttft.has_value());
  CHECK(!v.met.has_value());
  CHECK(!v.meets());
}

TEST_CASE("attainment and goodput over hand-built requests, with a per-client override") {
  ClientTable clients;
  clients.intern("chat");
  clients.intern("batch");
  Requests q;
  q.finished(0, 0, 0.5, 2, 4);   // chat: ttft 0.5 <= 1, e2e 2 <= 5: met
  q.finished(0, 1, 1.2, 7, 6);   // chat: e2e 6 > 5: missed
  q.finished(1, 2, 2.8, 4, 8);   // batch: ttft 0.8 > 0.5 (override): missed
  q.finished(1, 3, 3.1, 5, 10);  // batch: ttft 0.1, e2e 2: met
  q.unfinished(0, 9);            // counted, not met
  ReportOptions opt;
  opt.out_dir = temp_dir("slo");
  opt.slo.all = {1.0, 0, 5.0};
  opt.slo.clients["batch"] = {0.5, 0, 5.0};
  const Run r = run(q, opt, clients, 0, s(10));
  const SummaryValues& v = r.summary.values;
  CHECK(v.duration_s == doctest::Approx(10));
  REQUIRE(v.slo_met.has_value());
  CHECK(*v.slo_met == 2);
  CHECK(*v.slo_attainment == doctest::Approx(2.0 / 5));
  CHECK(*v.slo_ttft_attainment == doctest::Approx(3.0 / 5));
  CHECK(*v.slo_e2e_attainment == doctest::Approx(3.0 / 5));
  CHECK(!v.slo_tpot_attainment.has_value());
  CHECK(*v.goodput_rps == doctest::Approx(2.0 / 10));
  CHECK(*v.goodput_output_tokens_per_s == doctest::Approx((4.0 + 10) / 10));
  CHECK(v.window_requests == 5);

  const CsvTable req = read_csv(r.dir + "/requests.csv");
  const std::vector<std::string> met = {"1", "0", "0", "1", ""};
  const std::vector<std::string> names = {"chat", "chat", "batch", "batch", "chat"};
  for (std::size_t i = 0; i < met.size(); ++i) {
    CAPTURE(i);
    CHECK(cell(req, i, "slo_met") == met[i]);
    CHECK(cell(req, i, "client_name") == names[i]);
    CHECK(cell(req, i, "slo_tpot_met") == "");
  }
  CHECK(cell(req, 1, "slo_ttft_met") == "1");
  CHECK(cell(req, 1, "slo_e2e_met") == "0");
  CHECK(cell(req, 2, "slo_ttft_met") == "0");
  const CsvTable cl = read_csv(r.dir + "/clients.csv");
  CHECK(cell(cl, 0, "slo_met") == "1");
  CHECK(std::stod(cell(cl, 0, "slo_attainment")) == doctest::Approx(1.0 / 3));
  CHECK(cell(cl, 1, "slo_met") == "1");
  CHECK(std::stod(cell(cl, 1, "slo_attainment")) == doctest::Approx(0.5));
  // 1 of 5 unfinished = 20% > 5%: the survivorship warning.
  REQUIRE(v.warnings.size() == 1);
  CHECK(v.warnings[0].find("survivorship") != std::string::npos);
}

TEST_CASE("no SLO: the SLO and goodput cells are empty") {
  ClientTable clients;
  clients.intern("a");
  Requests q;
  q.finished(0, 0, 1, 2, 3);
  ReportOptions opt;
  opt.out_dir = temp_dir("noslo");
  const Run r = run(q, opt, clients, 0, s(2));
  CHECK(!r.summary.values.slo_met.has_value());
  CHECK(!r.summary.values.goodput_rps.has_value());
  const CsvTable sum = read_csv(r.dir + "/summary.csv");
  for (const char* c : {"slo_met", "slo_attainment", "goodput_rps", "goodput_output_tokens_per_s", "warnings"})
    CHECK(cell(sum, 0, c) == "");
  CHECK(cell(sum, 0, "window_requests") == "1");
  CHECK(cell(read_csv(r.dir + "/requests.csv"), 0, "slo_met") == "");
}

TEST_CASE("window selection by time and by count") {
  const std::vector<Time> arr = {s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7), s(8), s(9)};
  WindowOptions w;
  WindowSelection sel = select_window(arr, w, s(0), s(12));
  CHECK(sel.first == 0);
  CHECK(sel.last == 10);
  CHECK(sel.start == s(0));
  CHECK(sel.end == s(12));
  w.warmup = s(2);
  w.cooldown = s(4);  // end = 12 - 4 = 8: arrivals 2..8 (inclusive)
  sel = select_window(arr, w, s(0), s(12));
  CHECK(sel.first == 2);
  CHECK(sel.last == 9);
  CHECK(sel.start == s(2));
  CHECK(sel.end == s(8));
  w = WindowOptions{};
  w.warmup_requests = 3;
  w.cooldown_requests = 2;  // requests 3..7; the window ends at the first excluded arrival
  sel = select_window(arr, w, s(0), s(12));
  CHECK(sel.first == 3);
  CHECK(sel.last == 8);
  CHECK(sel.start == s(3));
  CHECK(sel.end == s(8));
  w.warmup_requests = 20;  // more than there are: an empty window
  sel = select_window(arr, w, s(0), s(12));
  CHECK(sel.first == sel.last);
  CHECK(sel.end == sel.start);
}

TEST_CASE("metrics cover the window's requests, counts by status the whole run") {
  ClientTable clients;
  clients.intern("a");
  Requests q;
  // Arrivals 0..9 s; request i's TTFT is i/10 s and it finishes 1 s after arrival.
  for (int i = 0; i < 10; ++i) q.finished(0, i, i + i / 10.0, i + 1, 2);
  ReportOptions opt;
  opt.out_dir = temp_dir("window");
  opt.window.warmup = s(2);
  opt.window.cooldown_requests = 2;  // window: arrivals 2..7, start 2 s, end 8 s (arrival of request 8)
  opt.slo.all = {0.45, 0, 0};        // TTFT 0.2, 0.3, 0.4 meet; 0.5, 0.6, 0.7 do not
  const Run r = run(q, opt, clients, 0, s(10));
  const SummaryValues& v = r.summary.values;
  CHECK(v.requests == 10);
  CHECK(v.finished == 10);
  CHECK(v.duration_s == doctest::Approx(10));
  CHECK(v.window_requests == 6);
  CHECK(v.window_finished == 6);
  CHECK(v.window_start_s == doctest::Approx(2));
  CHECK(v.window_end_s == doctest::Approx(8));
  CHECK(v.throughput_rps == doctest::Approx(6.0 / 6));
  CHECK(v.ttft.mean.value() == doctest::Approx(0.45));
  CHECK(*v.ttft.p50 == doctest::Approx(0.45));
  CHECK(*v.slo_met == 3);
  CHECK(*v.goodput_rps == doctest::Approx(3.0 / 6));
  CHECK(*v.goodput_output_tokens_per_s == doctest::Approx(6.0 / 6));
  const CsvTable sum = read_csv(r.dir + "/summary.csv");
  CHECK(cell(sum, 0, "window_start_s") == "2.000000");
  CHECK(cell(sum, 0, "window_end_s") == "8.000000");
  CHECK(cell(sum, 0, "window_requests") == "6");
  CHECK(read_csv(r.dir + "/requests.csv").rows.size() == 10);  // every request is still listed
}

TEST_CASE("the survivorship warning fires above 5% unfinished or rejected, not at 5%") {
  WarningInputs in;
  in.window_requests = 100;
  in.window_unfinished = 3;
  in.window_rejected = 2;
  CHECK(run_warnings(in, {}).empty());
  in.window_rejected = 3;
  const auto w = run_warnings(in, {});
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("6.0%") != std::string::npos);
  CHECK(w[0].find("3 unfinished") != std::string::npos);
  CHECK(w[0].find("survivorship") != std::string::npos);
}

TEST_CASE("an empty measurement window is a warning") {
  ClientTable clients;
  clients.intern("a");
  Requests q;
  q.finished(0, 0, 1, 2, 3);
  q.finished(0, 1, 2, 3, 3);
  ReportOptions opt;
  opt.out_dir = temp_dir("empty_window");
  opt.window.warmup_requests = 5;
  const Run r = run(q, opt, clients, 0, s(3));
  CHECK(r.summary.values.window_requests == 0);
  REQUIRE(r.summary.values.warnings.size() == 1);
  CHECK(r.summary.values.warnings[0].find("holds no request") != std::string::npos);
  CHECK(r.summary.values.warnings[0].rfind("error: ", 0) == 0);  // error level: the result is undefined
  CHECK(has_error_warning(r.summary.values.warnings[0]));
  CHECK(warning_tags(r.summary.values.warnings[0]) == std::vector<std::string>{"empty_window"});
  CHECK(!r.summary.values.ttft.mean.has_value());
  // No fairness value and no rate: empty cells, not a perfect Jain's index of 1 and 0 req/s.
  for (const auto& field : r.summary.fields) {
    const std::string& name = field.first;  // no structured binding: CAPTURE is a lambda (clang 14)
    CAPTURE(name);
    if (name == "jain_service_rate" || name == "jain_extend_service_rate" || name == "service_diff_max" ||
        name == "extend_service_diff_mean" || name == "throughput_rps" || name == "output_tokens_per_s")
      CHECK(field.second.empty());
    else if (name == "run_jain_service_rate")
      CHECK(!field.second.empty());  // the whole run still has its value
  }
  opt.window.warmup_requests = 1;  // one request left: no warning
  opt.out_dir = temp_dir("one_left");
  CHECK(run(q, opt, clients, 0, s(3)).summary.values.warnings.empty());
}

TEST_CASE("admissions that dropped their cached prefix are a warning naming the count and the page size") {
  WarningInputs in;
  std::vector<WorkerStats> w(2);
  CHECK(run_warnings(in, w).empty());
  w[1].uncached_admissions = 3;
  w[1].uncached_admission_tokens = 336;
  const auto out = run_warnings(in, w);
  REQUIRE(out.size() == 1);
  CHECK(out[0].find("3 admissions to an empty worker") != std::string::npos);
  CHECK(out[0].find("336 cached tokens") != std::string::npos);
  CHECK(out[0].find("page size") != std::string::npos);
  CHECK(warning_tags(out[0]) == std::vector<std::string>{"uncached_admission"});
  CHECK_FALSE(has_error_warning(out[0]));
}

TEST_CASE("the imbalance warning fires when one worker does > 90% of the work") {
  WarningInputs in;
  in.policy_global = "cache_aware(balance_abs=32)";
  auto busy = [](std::vector<double> b) {
    std::vector<WorkerStats> w(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) w[i].busy_ns = s(b[i]);
    return w;
  };
  CHECK(run_warnings(in, busy({100})).empty());             // one worker: nothing to balance
  CHECK(run_warnings(in, busy({30, 25, 25, 20})).empty());
  CHECK(run_warnings(in, busy({90, 10})).empty());          // exactly 90%
  CHECK(run_warnings(in, busy({0, 0, 0, 0})).empty());      // nothing ran
  auto w = run_warnings(in, busy({0, 100, 0, 0}));
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("worker 1 did 100.0%") != std::string::npos);
  CHECK(w[0].find("prefix blocks") != std::string::npos);   // the cache_aware cause is named
  in.policy_global = "round_robin";
  w = run_warnings(in, busy({95, 5}));
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("prefix blocks") == std::string::npos);
  in.unknown_slo_clients = {"ghost"};
  CHECK(run_warnings(in, busy({1, 1})).at(0).find("'ghost'") != std::string::npos);
}

TEST_CASE("summary.json parses back to summary.csv's values, typed") {
  ClientTable clients;
  clients.intern("chat");
  Requests q;
  q.finished(0, 0, 0.5, 2, 4);
  q.unfinished(0, 1);
  ReportOptions opt;
  opt.out_dir = temp_dir("json");
  opt.slo.all = {1.0, 0, 0};
  std::vector<WorkerStats> workers(2);
  workers[0].busy_ns = s(2);  // all work on worker 0: a warning with text to escape
  const Run r = run(q, opt, clients, 0, s(2), workers);
  const CsvTable sum = read_csv(r.dir + "/summary.csv");
  const YAML::Node j = YAML::LoadFile(r.dir + "/summary.json");  // JSON is YAML
  REQUIRE(j.IsMap());
  REQUIRE(j.size() == sum.header.size());
  std::size_t i = 0;
  for (const auto& kv : j) {  // same order as the CSV columns
    const std::string key = kv.first.as<std::string>(), csv = sum.rows[0][i];
    CAPTURE(key);
    CHECK(key == sum.header[i]);
    const YAML::Node& x = kv.second;
    if (is_summary_text_column(key)) {
      CHECK(x.Tag() == "!");  // quoted: a string
      CHECK(x.as<std::string>() == csv);
    } else if (csv.empty()) {
      CHECK(x.IsNull());
    } else if (key == "oracle" || key == "calibrated") {
      CHECK(x.as<bool>() == (csv == "true"));
    } else {
      CHECK(x.Tag() == "?");  // plain: a number
      CHECK(x.as<double>() == std::strtod(csv.c_str(), nullptr));
    }
    ++i;
  }
  CHECK(!j["warnings"].as<std::string>().empty());
  CHECK(j["slo_attainment"].as<double>() == 0.5);
}

namespace {

// Two clients, a and b (w_in 1, w_out 2), three requests each queued at 0 s,
// both backlogged to the end (10 s); a fourth of b's arrives at 5 s.
// Warm-up: a's first request admitted at 0 s (100 prompt tokens) and 10
// output tokens at 1, 2, 3 s: S_a = 160, S_b = 0. From 4.5 s: a2 and b1
// admitted (100 each), 10 output tokens each at 5 and 6 s (equal service),
// then 50 more for a at 9 s. Whole run: S_a = 400, S_b = 140.
RunSummary fairness_run(ReportOptions opt, ClientTable& clients) {
  opt.clients = &clients;
  std::deque<RequestSpec> specs;
  auto spec = [&](ClientId c, std::int64_t out) -> const RequestSpec& {
    RequestSpec& sp = specs.emplace_back();
    sp.id = specs.size();
    sp.client = c;
    sp.prompt_tokens = 100;
    sp.output_tokens = out;
    return sp;
  };
  const RequestSpec &a1 = spec(0, 30), &a2 = spec(0, 200), &a3 = spec(0, 10);
  const RequestSpec &b1 = spec(1, 200), &b2 = spec(1, 10), &b3 = spec(1, 10), &b4 = spec(1, 10);
  RunReport r(opt);
  for (ClientId c : {0u, 1u})
    for (int i = 0; i < 3; ++i) {
      r.on_arrival(0);
      r.on_queued(c, 0);
    }
  r.on_admitted(a1, 0, 0, true);
  for (int t = 1; t <= 3; ++t) r.on_output_tokens(0, s(t), 10);
  r.on_admitted(a2, s(4.5), 0, true);
  r.on_admitted(b1, s(4.5), 0, true);
  for (int t = 5; t <= 6; ++t) {
    if (t == 5) {
      r.on_arrival(s(5));
      r.on_queued(1, s(5));
    }
    r.on_output_tokens(0, s(t), 10);
    r.on_output_tokens(1, s(t), 10);
  }
  r.on_output_tokens(0, s(9), 50);
  auto outcome = [](const RequestSpec& sp, double arrival, std::optional<double> admitted, std::int64_t generated) {
    RequestOutcome o;
    o.spec = &sp;
    o.status = RequestStatus::kUnfinished;
    o.routed = true;
    o.arrival = s(arrival);
    if (admitted) o.admitted = s(*admitted);
    o.generated_tokens = generated;
    return o;
  };
  RequestOutcome o = outcome(a1, 0, 0.0, 30);
  o.status = RequestStatus::kFinished;
  o.first_token = s(1);
  o.finish = s(3);
  r.on_request(o);
  for (const RequestOutcome& x :
       {outcome(a2, 0, 4.5, 70), outcome(a3, 0, {}, 0), outcome(b1, 0, 4.5, 20), outcome(b2, 0, {}, 0),
        outcome(b3, 0, {}, 0), outcome(b4, 5, {}, 0)})
    r.on_request(x);
  SimulationTotals t;
  t.first_arrival = 0;
  t.end_time = s(10);
  t.requests = 7;
  return r.finish(clients, t, {WorkerStats{}}, {{"scenario", "t"}, {"policy_global", "round_robin"}});
}

double num_cell(const CsvTable& t, std::size_t row, const char* column) { return std::stod(cell(t, row, column)); }

}  // namespace

TEST_CASE("fairness and per-client service follow the measurement window, run_* columns keep the whole run") {
  ClientTable clients;
  clients.intern("a");
  clients.intern("b");
  ReportOptions opt;
  opt.out_dir = temp_dir("fair_window");
  opt.window.warmup = s(4);    // [4 s, 8 s]: equal service inside, a served alone in the warm-up
  opt.window.cooldown = s(2);  // and in the cool-down (9 s)
  const RunSummary sum = fairness_run(opt, clients);
  const SummaryValues& v = sum.values;
  CHECK(v.window_start_s == doctest::Approx(4));
  CHECK(v.window_end_s == doctest::Approx(8));
  CHECK(v.fairness.diff_max == 0);
  CHECK(v.fairness.diff_mean == 0);
  CHECK(v.fairness.jain == doctest::Approx(1.0));
  // Whole run: D = S_a - S_b goes 0 -> 260; Jain over 40 and 14 tokens/s.
  CHECK(v.fairness_run.diff_max == doctest::Approx(260));
  CHECK(v.fairness_run.jain == doctest::Approx(54.0 * 54 / (2 * (1600.0 + 196))));
  for (const std::string& w : v.warnings) CHECK(w.find("fairness") == std::string::npos);

  const CsvTable summary = read_csv(opt.out_dir + "/summary.csv");
  CHECK(cell(summary, 0, "service_diff_max") == "0");
  CHECK(cell(summary, 0, "jain_service_rate") == "1");
  CHECK(cell(summary, 0, "run_service_diff_max") == "260");
  CHECK(num_cell(summary, 0, "run_jain_service_rate") == doctest::Approx(0.811804));

  const CsvTable cl = read_csv(opt.out_dir + "/clients.csv");
  REQUIRE(cl.rows.size() == 2);
  for (std::size_t c = 0; c < 2; ++c) {
    CAPTURE(c);
    CHECK(num_cell(cl, c, "service") == 140);  // 100 prompt at 4.5 s + 2 x 10 output tokens x 2
    CHECK(num_cell(cl, c, "extend_service") == 140);
    CHECK(num_cell(cl, c, "service_rate_per_s") == doctest::Approx(35));
    CHECK(num_cell(cl, c, "backlogged_s") == doctest::Approx(4));
    CHECK(num_cell(cl, c, "run_backlogged_s") == doctest::Approx(10));
  }
  CHECK(num_cell(cl, 0, "run_service") == 400);
  CHECK(num_cell(cl, 1, "run_service") == 140);
  CHECK(num_cell(cl, 0, "run_service_rate_per_s") == doctest::Approx(40));
  // Per-request columns of a client: its requests in the window (b's fourth, unfinished).
  CHECK(num_cell(cl, 1, "throughput_rps") == 0);
  CHECK(num_cell(cl, 0, "requests") == 3);  // counts: the whole run
}

TEST_CASE("without a window the fairness columns are the whole run's, and equal their run_* copies") {
  ClientTable clients;
  clients.intern("a");
  clients.intern("b");
  ReportOptions opt;
  opt.out_dir = temp_dir("fair_no_window");
  const RunSummary sum = fairness_run(opt, clients);
  const SummaryValues& v = sum.values;
  CHECK(v.fairness.diff_max == doctest::Approx(260));
  CHECK(v.fairness.diff_max == v.fairness_run.diff_max);
  CHECK(v.fairness.diff_mean == v.fairness_run.diff_mean);
  CHECK(v.fairness.extend_diff_max == v.fairness_run.extend_diff_max);
  CHECK(v.fairness.jain == v.fairness_run.jain);
  CHECK(v.fairness.jain_extend == v.fairness_run.jain_extend);
  const CsvTable summary = read_csv(opt.out_dir + "/summary.csv");
  for (const char* m : {"service_diff_max", "service_diff_mean", "extend_service_diff_max", "extend_service_diff_mean",
                        "jain_service_rate", "jain_extend_service_rate"})
    CHECK(cell(summary, 0, m) == cell(summary, 0, (std::string("run_") + m).c_str()));
  const CsvTable cl = read_csv(opt.out_dir + "/clients.csv");
  for (std::size_t c = 0; c < 2; ++c)
    for (const char* m : {"service", "service_rate_per_s", "extend_service", "backlogged_s"})
      CHECK(cell(cl, c, m) == cell(cl, c, (std::string("run_") + m).c_str()));
  CHECK(num_cell(cl, 0, "service") == 400);
  CHECK(num_cell(cl, 0, "throughput_rps") == doctest::Approx(0.1));  // 1 finished / 10 s
}

TEST_CASE("a report that sees no arrivals says its fairness columns cover the whole run") {
  ClientTable clients;
  clients.intern("a");
  ReportOptions opt;
  opt.out_dir = temp_dir("fair_no_arrivals");
  opt.window.warmup = s(1);
  opt.clients = &clients;
  RunReport r(opt);
  r.on_queued(0, 0);  // service hooks, but no on_arrival
  RequestSpec sp;
  sp.client = 0;
  sp.prompt_tokens = 10;
  r.on_admitted(sp, s(1), 0, true);
  RequestOutcome o;
  o.spec = &sp;
  o.status = RequestStatus::kUnfinished;
  o.arrival = s(0);
  o.admitted = s(1);
  r.on_request(o);
  SimulationTotals t;
  t.end_time = s(3);
  const RunSummary sum = r.finish(clients, t, {WorkerStats{}}, {{"scenario", "t"}});
  bool said = false;
  for (const std::string& w : sum.values.warnings) said = said || w.find("cover the whole run") != std::string::npos;
  CHECK(said);
  CHECK(sum.values.fairness.jain == sum.values.fairness_run.jain);
}
