// CsvWriter's number formatting: the fast paths (std::to_chars) write the same
// bytes as the fmt format strings they replace, over many values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reports/csv_writer.h"
#include "sim/core/test_util.h"

using namespace servesim;
namespace fs = std::filesystem;

namespace {

std::uint64_t next(std::uint64_t& x) {
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

// The rows `write` puts into a CsvWriter, one value per row.
template <class Write>
std::vector<std::string> written(const std::string& name, const std::vector<double>& values, Write write) {
  const fs::path d = testing::fresh_temp_dir("servesim_csv_writer_test", name);
  {
    CsvWriter w((d / "out.csv").string());
    for (double v : values) {
      write(w, v);
      w.end_row();
    }
    w.close();
  }
  std::ifstream in(d / "out.csv");
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(line);
  return rows;
}

}  // namespace

TEST_CASE("seconds(v) writes what fmt's {:.6f} writes: signs, zero, ties, near-ties, huge and non-finite values") {
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-7, 4e-7, 5e-7, 6e-7, -5e-7, 9.9999995, 0.0000005,
                           1e15, 1e16, 1e17, 1e22, 1e40, 1e56, 1e57, 1e100, -1e100, 1e300,
                           std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()};
  // Exact ties at the 7th decimal are the odd multiples of 1/128; and their neighbours.
  for (std::int64_t j = 1; j < 20000; j += 2)
    for (double t : {static_cast<double>(j) / 128, static_cast<double>(j * 1'000'003) / 128}) {
      v.push_back(t);
      v.push_back(-t);
      v.push_back(std::nextafter(t, 0.0));
      v.push_back(std::nextafter(t, 1e300));
    }
  // Decimal halfway points n.5e-6 (not exact doubles) and their neighbours, at many scales.
  std::uint64_t x = 0x243F6A8885A308D3ull;
  for (int i = 0; i < 100000; ++i) {
    const double micros = static_cast<double>(next(x) % (std::uint64_t{1} << (4 + i % 46)));
    const double h = (micros + 0.5) / 1e6;
    v.push_back(h);
    v.push_back(std::nextafter(h, 0.0));
    v.push_back(std::nextafter(h, 1e300));
    v.push_back(-h);
  }
  // Random doubles: every exponent from 2^-60 to 2^200, and random bit patterns (any sign, any exponent).
  for (int i = 0; i < 200000; ++i) {
    const double m = 1.0 + static_cast<double>(next(x) >> 12) / 4503599627370496.0;
    v.push_back(std::ldexp(m, -60 + i % 261) * (i % 3 == 0 ? -1 : 1));
    if (i % 10) continue;  // fmt's 300-digit fixed notation of huge values is slow
    const std::uint64_t bits = next(x);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    v.push_back(d);
  }
  // Latency-like values: a time in ns over an output length, as tpot_s computes them.
  for (int i = 0; i < 100000; ++i) {
    const auto ns = static_cast<std::int64_t>(next(x) % 4'000'000'000'000ull);
    v.push_back(static_cast<double>(ns) * 1e-9 / static_cast<double>(1 + next(x) % 4000));
  }
  const std::vector<std::string> rows = written("seconds", v, [](CsvWriter& w, double d) { w.seconds(d); });
  REQUIRE(rows.size() == v.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string want = fmt::format("{:.6f}", v[i]);
    if (rows[i] != want && differ++ < 5) CHECK_MESSAGE(rows[i] == want, fmt::format("{:a}", v[i]));
  }
  CHECK(differ == 0);
}
