// sweep_summary.csv: mean, sample standard deviation and the Student t 95%
// confidence interval per point, on hand-computed numbers; and the
// comparison table of `servesim compare` on two hand-made run folders.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "reports/compare.h"
#include "reports/csv_reader.h"
#include "reports/html_report.h"
#include "reports/sweep_summary.h"
#include "sim/core/error.h"
#include "sim/core/test_util.h"

using namespace servesim;
namespace fs = std::filesystem;
using servesim::testing::slurp;

namespace {
fs::path temp_dir(const std::string& name) { return testing::fresh_temp_dir("servesim_sweep_summary_test", name); }
}  // namespace

TEST_CASE("Student t quantiles: the table up to 30 degrees of freedom, the expansion above") {
  CHECK(std::isnan(student_t_975(0)));
  CHECK(student_t_975(1) == doctest::Approx(12.7062).epsilon(1e-5));
  CHECK(student_t_975(4) == doctest::Approx(2.7764).epsilon(1e-4));
  CHECK(student_t_975(30) == doctest::Approx(2.0423).epsilon(1e-4));
  CHECK(student_t_975(40) == doctest::Approx(2.0211).epsilon(1e-4));
  CHECK(student_t_975(120) == doctest::Approx(1.9799).epsilon(1e-4));
  CHECK(student_t_975(100000) == doctest::Approx(1.96).epsilon(1e-4));
}

TEST_CASE("mean, sample std and 95% CI half-width of known numbers") {
  MeanCi m = mean_ci({1, 2, 3, 4});
  CHECK(m.n == 4);
  CHECK(m.mean == doctest::Approx(2.5));
  CHECK(m.std == doctest::Approx(1.2909944487));        // sqrt(5/3)
  CHECK(m.ci95 == doctest::Approx(2.0542602598));       // t(3) * std / 2
  MeanCi one = mean_ci({7});
  CHECK(one.mean == 7);
  CHECK(std::isnan(one.std));
  CHECK(std::isnan(one.ci95));
  CHECK(std::isnan(mean_ci({}).mean));
}

TEST_CASE("sweep_summary.csv: one row per point, swept values, text kept when constant, numbers summarized") {
  fs::path d = temp_dir("summary");
  std::ofstream(d / "sweep.csv") << "point,repetition,seed,run,policy_local,policy_local_quantum,scenario,"
                                    "throughput_rps,e2e_p99_s,note\n"
                                    "p0,0,1,p0-r000,dlpm,16,s,1,10,a\n"
                                    "p0,1,9,p0-r001,dlpm,16,s,2,12,b\n"
                                    "p0,2,8,p0-r002,dlpm,16,s,3,,a\n"
                                    "p0,3,7,p0-r003,dlpm,16,s,4,,a\n"
                                    "p1,0,1,p1-r000,vtc,,s,5,1,c\n";
  CHECK(write_sweep_summary((d / "sweep.csv").string(), summary_path_for((d / "sweep.csv").string())) == 2);
  CHECK(summary_path_for((d / "sweep.csv").string()) == (d / "sweep_summary.csv").string());
  CsvTable t = read_csv((d / "sweep_summary.csv").string());
  CHECK(t.header == std::vector<std::string>{"point", "runs", "runs_with_warnings", "warning_tags", "policy_local",
                                             "policy_local_quantum", "scenario", "note",
                                             "throughput_rps_mean", "throughput_rps_std", "throughput_rps_ci95",
                                             "e2e_p99_s_mean", "e2e_p99_s_std", "e2e_p99_s_ci95"});
  REQUIRE(t.rows.size() == 2);
  const auto& p0 = t.rows[0];
  CHECK(p0[1] == "4");
  CHECK(p0[2] == "0");  // no run warned
  CHECK(p0[3].empty());
  CHECK(p0[5] == "16");
  CHECK(p0[6] == "s");
  CHECK(p0[7].empty());  // the runs disagree
  CHECK(std::stod(p0[8]) == doctest::Approx(2.5));
  CHECK(std::stod(p0[9]) == doctest::Approx(1.29099).epsilon(1e-5));
  CHECK(std::stod(p0[10]) == doctest::Approx(2.05426).epsilon(1e-5));
  CHECK(std::stod(p0[11]) == doctest::Approx(11));  // empty cells are not counted: n = 2
  CHECK(std::stod(p0[13]) == doctest::Approx(12.7062047 * std::sqrt(2.0) / std::sqrt(2.0)).epsilon(1e-5));
  const auto& p1 = t.rows[1];
  CHECK(p1[1] == "1");
  CHECK(p1[8] == "5");
  CHECK(p1[9].empty());  // one run: no std, no CI
  CHECK(p1[10].empty());
}

TEST_CASE("compare: headline metrics of two run folders side by side, by column name, as text and CSV") {
  fs::path d = temp_dir("compare");
  fs::create_directories(d / "a");
  fs::create_directories(d / "b");
  // b has an extra (future) column and lacks jain_service_rate; a has an SLO column.
  std::ofstream(d / "a" / "summary.csv") << "scenario,finished,unfinished,throughput_rps,ttft_mean_s,e2e_p99_s,"
                                            "jain_service_rate,slo_attainment\n"
                                            "x,100,0,12.3456789,0.010000,1.500000,0.99,0.95\n";
  std::ofstream(d / "b" / "summary.csv") << "scenario,unfinished,finished,new_column,throughput_rps,ttft_mean_s,e2e_p99_s\n"
                                            "y,7,93,zzz,11,0.020000,2.250000\n";
  std::vector<CompareInput> in = compare_inputs((d / "a").string());
  auto more = compare_inputs((d / "b").string());
  in.insert(in.end(), more.begin(), more.end());
  CompareTable t = compare_table(in);
  CHECK(t.header == std::vector<std::string>{"run", "finished", "unfinished", "throughput_rps", "ttft_mean_s",
                                             "e2e_p99_s", "jain_service_rate", "slo_attainment"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[1] == std::vector<std::string>{(d / "b").string(), "93", "7", "11", "0.020000", "2.250000", "", ""});
  const std::string text = format_table(t);
  CHECK(text.find("12.35") != std::string::npos);  // 4 significant digits on screen
  std::istringstream lines(text);
  std::string h, r1, r2;
  std::getline(lines, h);
  std::getline(lines, r1);
  std::getline(lines, r2);
  CHECK(h.find("e2e_p99_s") + std::string("e2e_p99_s").size() == r1.find("1.5") + 3);  // right-aligned under its header
  CHECK(r2.find("2.25") + 4 == r1.find("1.5") + 3);
  write_compare_csv(t, (d / "cmp.csv").string());
  CHECK(slurp(d / "cmp.csv").find("12.3456789") != std::string::npos);  // the CSV keeps the values as written
  CHECK_THROWS_AS(compare_inputs(d.string()), InputError);                // neither a run nor a sweep
}

TEST_CASE("sweep_summary.csv carries every run's warnings with counts and tags, and gives identical repetitions no interval") {
  fs::path d = temp_dir("warnings");
  const std::string lost = "12.0% of the requests in the measurement window did not finish (x)";
  std::ofstream(d / "sweep.csv") << "point,repetition,seed,run,policy_local,scenario,throughput_rps,warnings\n"
                                    "p0,0,1,p0-r000,dlpm,s,1,\"" << lost << "\"\n"
                                    "p0,1,9,p0-r001,dlpm,s,2,\n"
                                    "p1,0,1,p1-r000,vtc,s,5,\n"
                                    "p1,1,9,p1-r001,vtc,s,5,\n";
  write_sweep_summary((d / "sweep.csv").string(), (d / "sweep_summary.csv").string());
  CsvTable t = read_csv((d / "sweep_summary.csv").string());
  REQUIRE(t.rows.size() == 2);
  const int w = t.column("warnings"), tags = t.column("warning_tags"), n = t.column("runs_with_warnings");
  const int ci = t.column("throughput_rps_ci95"), sd = t.column("throughput_rps_std");
  REQUIRE(w >= 0);
  REQUIRE(ci >= 0);
  CHECK(t.rows[0][n] == "1");
  CHECK(t.rows[0][tags] == "unfinished>5%");
  CHECK(t.rows[0][w] == "[1 of 2 runs] " + lost);
  CHECK(!t.rows[0][ci].empty());
  // p1: both runs report the same numbers: no std, no interval, and a warning that says why.
  CHECK(t.rows[1][n] == "0");
  CHECK(t.rows[1][tags] == "identical_repetitions");
  CHECK(t.rows[1][w].find("repetitions are identical") != std::string::npos);
  CHECK(t.rows[1][ci].empty());
  CHECK(t.rows[1][sd].empty());
  CHECK(t.rows[1][t.column("throughput_rps_mean")] == "5");
  // Runs with no headline value (an empty measurement window) are not "identical": their
  // metrics are undefined; the other columns decide, and here the events differ.
  std::ofstream(d / "empty.csv") << "point,repetition,seed,run,scenario,throughput_rps,e2e_p99_s,events,warnings\n"
                                    "p0,0,1,r0,s,,,100,error: x\np0,1,2,r1,s,,,120,error: x\n";
  write_sweep_summary((d / "empty.csv").string(), (d / "empty_summary.csv").string());
  CHECK(slurp(d / "empty_summary.csv").find("identical") == std::string::npos);
}

TEST_CASE("Student t p-values match tabulated values") {
  CHECK(student_t_two_sided_p(2.0, 10) == doctest::Approx(0.07339).epsilon(1e-3));
  CHECK(student_t_two_sided_p(2.228139, 10) == doctest::Approx(0.05).epsilon(1e-4));
  CHECK(student_t_two_sided_p(0, 5) == doctest::Approx(1.0));
  // Welch: equal variances 2.5, n = 5 each: t = -2, df = 8.
  CHECK(welch_p_value({1, 2, 3, 4, 5}, {3, 4, 5, 6, 7}) == doctest::Approx(0.0805).epsilon(1e-3));
  // Paired: differences -1, -1.5, -1.5: t = -8, df = 2, p = 1 - 8 / sqrt(66).
  CHECK(paired_p_value({1, 2, 3}, {2, 3.5, 4.5}) == doctest::Approx(1 - 8 / std::sqrt(66.0)).epsilon(1e-6));
  CHECK(std::isnan(welch_p_value({1}, {2, 3})));
}

TEST_CASE("compare aggregates repetitions per configuration and tests each against the baseline") {
  auto run = [](const std::string& point, const std::string& local, int seed, double e2e, const std::string& warn) {
    CompareInput in;
    in.group = "sweep#" + point;
    in.config = local + "/round_robin";
    in.label = point;
    in.values = {{"seed", std::to_string(seed)}, {"policy_local", local + "(x=1)"}, {"e2e_p99_s", fmt::format("{}", e2e)},
                 {"throughput_rps", "10"}, {"warnings", warn}, {"service_diff_max", fmt::format("{}", e2e)}};
    in.order = {"seed", "policy_local", "e2e_p99_s", "throughput_rps", "warnings", "service_diff_max"};
    return in;
  };
  const std::string lost = "9.0% of the requests in the measurement window did not finish (y)";
  std::vector<CompareInput> in = {run("p0", "fcfs", 1, 1.0, ""), run("p0", "fcfs", 2, 2.0, ""),
                                  run("p0", "fcfs", 3, 3.0, ""), run("p1", "sjf", 1, 2.0, lost),
                                  run("p1", "sjf", 2, 3.5, ""),  run("p1", "sjf", 3, 4.5, "")};
  const CompareTable t = compare_aggregate(in);
  REQUIRE(t.rows.size() == 2);  // two configurations, not six runs
  auto at = [&](std::size_t r, const std::string& c) {
    auto it = std::find(t.header.begin(), t.header.end(), c);
    REQUIRE(it != t.header.end());
    return t.rows[r][static_cast<std::size_t>(it - t.header.begin())];
  };
  CHECK(at(0, "config") == "fcfs/round_robin");
  CHECK(at(0, "runs") == "3");
  CHECK(at(0, "baseline") == "yes");
  CHECK(std::stod(at(0, "e2e_p99_s_mean")) == doctest::Approx(2.0));
  CHECK(std::stod(at(0, "e2e_p99_s_ci95")) == doctest::Approx(4.30265273 / std::sqrt(3.0)).epsilon(1e-5));
  CHECK(at(1, "warnings") == "unfinished>5%(1/3)");
  CHECK(at(1, "test") == "paired t");  // same seeds in the same order
  CHECK(std::stod(at(1, "e2e_p99_s_diff")) == doctest::Approx(1.3333333));
  CHECK(std::stod(at(1, "e2e_p99_s_ratio")) == doctest::Approx(10.0 / 3.0 / 2.0).epsilon(1e-5));
  CHECK(std::stod(at(1, "e2e_p99_s_p")) == doctest::Approx(1 - 8 / std::sqrt(66.0)).epsilon(1e-5));
  // throughput is identical in every run: a mean, no interval, no p-value.
  CHECK(at(0, "throughput_rps_ci95").empty());
  CHECK(at(1, "throughput_rps_p").empty());
  const std::string text = format_aggregate(t);
  CHECK(text.find("vs fcfs/round_robin") != std::string::npos);
  CHECK(text.find("+66.7% p=0.015*") != std::string::npos);
  // A baseline by row number, and an unknown one named with the choices.
  CHECK(at(0, "baseline") == "yes");
  const CompareTable t2 = compare_aggregate(in, CompareOptions{{"e2e_p99_s"}, "2"});
  CHECK(t2.rows[1].back() == "");                 // the baseline has no test
  CHECK(t2.rows[1][t2.header.size() - 2] == "yes");
  CHECK_THROWS_WITH_AS(compare_aggregate(in, CompareOptions{{}, "lpm"}), doctest::Contains("fcfs/round_robin"),
                       InputError);
  // Identical repetitions: no interval, and a warning.
  std::vector<CompareInput> same = {run("p0", "fcfs", 1, 1.0, ""), run("p0", "fcfs", 2, 1.0, "")};
  const CompareTable t3 = compare_aggregate(same);
  CHECK(t3.rows[0][2] == "identical_repetitions");
  CHECK(t3.rows[0][4].empty());
}

TEST_CASE("compare_aggregate of no runs is an input error, not a crash (an empty sweep shard)") {
  CHECK_THROWS_WITH_AS(compare_aggregate({}), doctest::Contains("no completed runs"), InputError);
}

TEST_CASE("the HTML report of a run folder is one self-contained page with the summary, warnings and configuration") {
  fs::path d = temp_dir("html");
  fs::create_directories(d / "run");
  std::ofstream(d / "run" / "summary.csv")
      << "scenario,seed,policy_local,policy_global,cost_model,calibrated,finished,unfinished,throughput_rps,e2e_p99_s,"
         "warnings\n"
         "demo,1,fcfs,round_robin,\"calibrated: profile x\",true,90,10,9.5,2.5,\"11.0% of the requests in the "
         "measurement window did not finish (10 unfinished); <b>x</b>\"\n";
  std::ofstream(d / "run" / "config.resolved.yaml") << "name: demo\nseed: 1\n";
  HtmlReportOptions o;
  o.plots = false;
  const HtmlReportResult r = write_html_report((d / "run").string(), (d / "r.html").string(), o);
  CHECK(r.tables == 1);
  const std::string page = slurp(d / "r.html");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("<table id=\"summary\"") != std::string::npos);
  CHECK(page.find("fcfs/round_robin") == std::string::npos);  // a run folder is labelled by its folder
  CHECK(page.find("unfinished&gt;5%(1/1)") != std::string::npos);
  CHECK(page.find("&lt;b&gt;x&lt;/b&gt;") != std::string::npos);  // warnings escaped, in full
  CHECK(page.find("name: demo") != std::string::npos);
  CHECK(page.find("calibrated: profile x") != std::string::npos);
  CHECK(page.find("http") == std::string::npos);  // nothing from the network
  CHECK(page.find("<script") == std::string::npos);
  CHECK(html_escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&#39;");
  CHECK_THROWS_AS(write_html_report(d.string(), (d / "x.html").string(), o), InputError);
}
