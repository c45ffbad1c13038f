// Calibration speed: parse, fit and held-out validation of a full-grid
// profile (the synthetic generator's rows, same schema and grid as
// `servesim-kernels bench`), or of a profile file (e.g. an imported public
// table: what every run using it pays at start-up). The bar is
// "seconds, not minutes"; prints min/median/max milliseconds over runs.
//   servesim_fit_bench [runs=5] [PROFILE.csv]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "costmodel/kernel_fits.h"
#include "costmodel/profile_validation.h"
#include "costmodel/synthetic_profile.h"

using namespace servesim;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::string file = argc > 2 ? argv[2] : "synthetic.csv";
  std::string csv;
  if (argc > 2) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return fmt::print(stderr, "{}: cannot open\n", file), 2;
    std::stringstream ss;
    ss << in.rdbuf();
    csv = ss.str();
  } else {
    csv = synthetic_profile_csv(SyntheticOptions{});
  }
  std::vector<double> parse_ms, fit_ms, validate_ms;
  std::size_t rows = 0;
  auto ms_since = [](auto start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  for (int r = 0; r < runs; ++r) {
    auto t = std::chrono::steady_clock::now();
    const ProfileTable table = ProfileTable::parse(csv, file);
    parse_ms.push_back(ms_since(t));
    rows = table.points().size();
    t = std::chrono::steady_clock::now();
    const KernelFits fits = KernelFits::fit(table);
    fit_ms.push_back(ms_since(t));
    t = std::chrono::steady_clock::now();
    const ValidationResult v = validate_profile(table, ValidationOptions{});
    validate_ms.push_back(ms_since(t));
    if (fits.gemm().empty() || v.families.empty()) return 1;
  }
  auto line = [](const char* what, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    fmt::print("{:<10} min {:8.2f} ms  median {:8.2f} ms  max {:8.2f} ms\n", what, v.front(), v[v.size() / 2],
               v.back());
  };
  fmt::print("profile: {} ({} rows), {} runs\n", file, rows, runs);
  line("parse", parse_ms);
  line("fit", fit_ms);
  line("validate", validate_ms);
}
