// sweep_summary.csv: mean, sample standard deviation and the Student t 95%
// confidence interval per point, on hand-computed numbers; and the
// comparison table of `servesim compare` on two hand-made run folders.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/compare.h"
#include "reports/csv_reader.h"
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
  CHECK(t.header == std::vector<std::string>{"point", "runs", "policy_local", "policy_local_quantum", "scenario", "note",
                                             "throughput_rps_mean", "throughput_rps_std", "throughput_rps_ci95",
                                             "e2e_p99_s_mean", "e2e_p99_s_std", "e2e_p99_s_ci95"});
  REQUIRE(t.rows.size() == 2);
  const auto& p0 = t.rows[0];
  CHECK(p0[1] == "4");
  CHECK(p0[3] == "16");
  CHECK(p0[4] == "s");
  CHECK(p0[5].empty());  // the runs disagree
  CHECK(std::stod(p0[6]) == doctest::Approx(2.5));
  CHECK(std::stod(p0[7]) == doctest::Approx(1.29099).epsilon(1e-5));
  CHECK(std::stod(p0[8]) == doctest::Approx(2.05426).epsilon(1e-5));
  CHECK(std::stod(p0[9]) == doctest::Approx(11));  // empty cells are not counted: n = 2
  CHECK(std::stod(p0[11]) == doctest::Approx(12.7062047 * std::sqrt(2.0) / std::sqrt(2.0)).epsilon(1e-5));
  const auto& p1 = t.rows[1];
  CHECK(p1[1] == "1");
  CHECK(p1[6] == "5");
  CHECK(p1[7].empty());  // one run: no std, no CI
  CHECK(p1[8].empty());
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
