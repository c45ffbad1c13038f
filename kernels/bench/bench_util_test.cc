// Tests of the CPU side of the bench binary: profile CSV, CLI, timing statistics, registry.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

#include "kernels/bench/cli_args.h"
#include "kernels/bench/gpu_timer_stats.h"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"

using namespace servesim::kernels;

TEST_CASE("profile CSV has provenance comments, one header and rows that parse back") {
  std::ostringstream os;
  ProfileWriter w(os);
  w.write_provenance({{"format", "servesim-kernel-profile"}, {"gpu", "NVIDIA H100 80GB HBM3"}});
  ProfileRow r;
  r.kernel = "decode";
  r.variant = "splitkv";
  r.batch = 8;
  r.ctx = 4096;
  r.heads = 32;
  r.params = "ragged=0;splits=4";
  r.reps = 3;
  r.median_us = 100;
  r.bytes = 2e8;   // 2e8 B in 100 us = 2000 GB/s
  r.flops = 5e9;   // 5e9 in 100 us = 50 TFLOP/s
  w.write_row(r);
  w.write_row(r);
  ParsedProfile p;
  std::string err;
  REQUIRE(parse_profile(os.str(), &p, &err));
  CHECK(p.provenance.size() == 2);
  CHECK(p.provenance[1].second == "NVIDIA H100 80GB HBM3");
  CHECK(p.columns == kProfileColumns);
  REQUIRE(p.rows.size() == 2);
  auto cell = [&](const std::string& col) {
    for (size_t i = 0; i < p.columns.size(); ++i)
      if (p.columns[i] == col) return p.rows[0][i];
    return std::string("<missing>");
  };
  CHECK(cell("kernel") == "decode");
  CHECK(cell("m") == "");  // not applicable: empty
  CHECK(cell("params") == "ragged=0;splits=4");
  CHECK(cell("gbps") == "2000.00");
  CHECK(cell("tflops") == "50.000");
  CHECK(w.rows_written() == 2);
}

TEST_CASE("profile writer rejects text fields that would break the CSV") {
  std::ostringstream os;
  ProfileWriter w(os);
  ProfileRow r;
  r.kernel = "gemm";
  r.params = "a=1,b=2";
  CHECK_THROWS_AS(w.write_row(r), std::invalid_argument);
}

TEST_CASE("profile parser reports the line of a malformed row") {
  ParsedProfile p;
  std::string err;
  CHECK_FALSE(parse_profile("# a=1\nkernel,variant\ndecode\n", &p, &err));
  CHECK(err.find("line 3") != std::string::npos);
}

TEST_CASE("command line accepts check and bench options and rejects unknown ones") {
  KernelsCli cli;
  std::string err;
  const char* bench[] = {"servesim-kernels", "bench", "--quick", "-o", "p.csv", "--family", "decode,gemm", "--seed", "9"};
  REQUIRE(parse_kernels_cli(9, bench, &cli, &err));
  CHECK(cli.command == "bench");
  CHECK(cli.quick);
  CHECK(cli.output == "p.csv");
  CHECK(cli.families == "decode,gemm");
  CHECK(cli.seed == 9);
  const char* no_output[] = {"servesim-kernels", "bench"};
  CHECK_FALSE(parse_kernels_cli(2, no_output, &cli, &err));
  const char* unknown[] = {"servesim-kernels", "check", "--fast"};
  CHECK_FALSE(parse_kernels_cli(3, unknown, &cli, &err));
  CHECK(err.find("--fast") != std::string::npos);
  const char* missing[] = {"servesim-kernels", "check", "--seed"};
  CHECK_FALSE(parse_kernels_cli(3, missing, &cli, &err));
  const char* none[] = {"servesim-kernels"};
  CHECK_FALSE(parse_kernels_cli(1, none, &cli, &err));
}

TEST_CASE("timing statistics are order statistics of the samples") {
  const TimingStats s = summarize_samples({5, 1, 4, 2, 3});
  CHECK(s.reps == 5);
  CHECK(s.median_us == 3);
  CHECK(s.min_us == 1);
  CHECK(s.max_us == 5);
  CHECK(s.p10_us == doctest::Approx(1.4));
  CHECK(s.p90_us == doctest::Approx(4.6));
  CHECK(adaptive_reps(1000, 40, 5, 50) == 40);   // 1 ms per run, 40 ms budget
  CHECK(adaptive_reps(100000, 40, 5, 50) == 5);  // long runs: at least min_reps
  CHECK(adaptive_reps(1, 40, 5, 50) == 50);      // short runs: at most max_reps
}

namespace {
int fake_check(const CheckOptions&) { return 0; }
}  // namespace
SERVESIM_REGISTER_KERNEL_FAMILY(test_zeta, {.name = "zz_test_zeta", .description = "test", .check = fake_check, .order = 1000});
SERVESIM_REGISTER_KERNEL_FAMILY(test_alpha, {.name = "zz_test_alpha", .description = "test", .order = 999});

TEST_CASE("kernel families are listed by order then name and selected by a comma list") {
  const auto all = kernel_families();
  REQUIRE(all.size() >= 2);
  CHECK(all[all.size() - 2].name == "zz_test_alpha");
  CHECK(all.back().name == "zz_test_zeta");
  CHECK((all.back().check != nullptr));
  std::vector<std::string> unknown;
  const auto picked = select_kernel_families("zz_test_zeta,nope", &unknown);
  REQUIRE(picked.size() == 1);
  CHECK(picked[0].name == "zz_test_zeta");
  CHECK(unknown == std::vector<std::string>{"nope"});
}
