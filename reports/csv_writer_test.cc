// CsvWriter's formatting: the fast paths (std::to_chars, integer micros, the
// in-place buffer) write the same bytes as the fmt format strings and the
// quoting they replace, over many values, and across buffer growth and flushes.
#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reports/csv_writer.h"
#include "sim/core/test_util.h"
#include "sim/core/time.h"
#include "sim/run_observer.h"

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

// The whole file that `write` puts into a CsvWriter.
template <class Write>
std::string file_text(const std::string& name, Write write) {
  const fs::path d = testing::fresh_temp_dir("servesim_csv_writer_test", name);
  {
    CsvWriter w((d / "out.csv").string());
    write(w);
    w.close();
  }
  std::ifstream in(d / "out.csv", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The quoting CsvWriter::field(string_view) has always done: quoted when the
// text holds , " CR or LF, quotes doubled.
std::string reference_cell(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// Random int64s of every magnitude, both signs, and the limits.
std::vector<std::int64_t> many_integers() {
  std::vector<std::int64_t> v = {0, 1, -1, 9, 10, 99, 100, std::numeric_limits<std::int64_t>::max(),
                                 std::numeric_limits<std::int64_t>::min()};
  std::int64_t p = 1;
  for (int i = 0; i < 18; ++i, p *= 10)
    for (std::int64_t d : {p - 1, p, p + 1}) {
      v.push_back(d);
      v.push_back(-d);
    }
  std::uint64_t x = 0x5851F42D4C957F2Dull;
  for (int i = 0; i < 200000; ++i) {
    const auto r = static_cast<std::int64_t>(next(x) >> (i % 64));
    v.push_back(i % 2 ? r : -r);
  }
  return v;
}

}  // namespace

TEST_CASE("write_decimal writes std::to_chars's digits at every power of ten and power of two") {
  std::vector<std::uint64_t> v = {0, std::numeric_limits<std::uint64_t>::max()};
  for (int t = 0; t < 20; ++t)
    for (std::uint64_t d : {csv_detail::kPow10[t] - 1, csv_detail::kPow10[t], csv_detail::kPow10[t] + 1}) v.push_back(d);
  for (int b = 1; b < 64; ++b)
    for (std::uint64_t d : {(std::uint64_t{1} << b) - 1, std::uint64_t{1} << b, (std::uint64_t{1} << b) + 1}) v.push_back(d);
  std::size_t differ = 0;
  for (std::uint64_t u : v)
    for (bool negative : {false, true}) {
      char want[24], got[24];
      const std::string_view w = negative ? std::string_view(want, std::to_chars(want, want + 24, static_cast<std::int64_t>(0 - u)).ptr - want)
                                          : std::string_view(want, std::to_chars(want, want + 24, u).ptr - want);
      const std::string_view g = negative ? std::string_view(got, csv_detail::write_decimal(got, static_cast<std::int64_t>(0 - u)) - got)
                                          : std::string_view(got, csv_detail::write_decimal(got, u) - got);
      if (w != g && differ++ < 5) CHECK_MESSAGE(w == g, u);
    }
  CHECK(differ == 0);
}

TEST_CASE("field(int64) and field(uint64) write what fmt's {} writes") {
  const std::vector<std::int64_t> v = many_integers();
  std::string want;
  for (std::int64_t i : v) want += fmt::format("{},{}\n", i, static_cast<std::uint64_t>(i));
  const std::string got = file_text("integers", [&v](CsvWriter& w) {
    for (std::int64_t i : v) {
      w.field(i).field(static_cast<std::uint64_t>(i));
      w.end_row();
    }
  });
  CHECK(got == want);
}

TEST_CASE("seconds_ns(ns) writes what fmt's {:.6f} writes of time_to_seconds(ns)") {
  std::vector<std::int64_t> v = many_integers();
  // Every ns up to 3 ms (ties at 500 ns included), and around the exact path's bound (1e6 s).
  for (std::int64_t ns = 0; ns < 3'000'000; ++ns) v.push_back(ns);
  for (std::int64_t ns = 1'000'000'000'000'000 - 3000; ns < 1'000'000'000'000'000 + 3000; ++ns) v.push_back(ns);
  // Latency-like times (up to a day) and their ties.
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  for (int i = 0; i < 300000; ++i) {
    const auto ns = static_cast<std::int64_t>(next(x) % 86'400'000'000'000ull);
    v.push_back(ns);
    v.push_back(ns / 1000 * 1000 + 500);
  }
  std::string want;
  for (std::int64_t ns : v) want += fmt::format("{:.6f}\n", time_to_seconds(ns));
  const std::string got = file_text("seconds_ns", [&v](CsvWriter& w) {
    for (std::int64_t ns : v) {
      w.seconds_ns(ns);
      w.end_row();
    }
  });
  REQUIRE(got.size() == want.size());
  CHECK(got == want);
}

TEST_CASE("field(string_view) quotes as before, and rows of every cell kind survive buffer growth and flushes") {
  // Random rows: strings (plain, with , \" CR LF, empty, long), integers, seconds, empties, amounts.
  std::uint64_t x = 0x6A09E667F3BCC908ull;
  const char alphabet[] = "abcXYZ019 _-.;:'\",\n\r";
  std::string want;
  std::vector<std::vector<std::string>> strings;
  for (int row = 0; row < 40000; ++row) {
    std::vector<std::string> cells;
    const int n = 1 + static_cast<int>(next(x) % 6);
    for (int k = 0; k < n; ++k) {
      const std::size_t len = next(x) % 50 == 0 ? next(x) % 70000 : next(x) % 12;
      std::string s;
      const bool plain = next(x) % 2;
      for (std::size_t i = 0; i < len; ++i) s += alphabet[next(x) % (plain ? 14 : sizeof alphabet - 1)];
      cells.push_back(s);
    }
    strings.push_back(cells);
  }
  for (std::size_t row = 0; row < strings.size(); ++row) {
    for (const std::string& s : strings[row]) want += reference_cell(s) + ',';
    const double amount = static_cast<double>(row) / 3;  // amount(): integers as such, else 12 digits
    want += fmt::format("{},,{:.6f},", row, time_to_seconds(static_cast<std::int64_t>(row * 7919)));
    want += row % 3 ? fmt::format("{:.12g}", amount) : fmt::format("{}", row / 3);
    want += '\n';
  }
  const std::string got = file_text("strings", [&strings](CsvWriter& w) {
    for (std::size_t row = 0; row < strings.size(); ++row) {
      for (const std::string& s : strings[row]) w.field(std::string_view(s));
      w.field(static_cast<std::uint64_t>(row)).empty();
      w.seconds_ns(static_cast<std::int64_t>(row * 7919)).amount(static_cast<double>(row) / 3);
      w.end_row();
    }
  });
  REQUIRE(want.size() > (std::size_t{3} << 20));  // several flushes
  REQUIRE(got.size() == want.size());
  CHECK(got == want);
  // A row with no field, and an empty file.
  CHECK(file_text("empty_row", [](CsvWriter& w) { w.end_row(); }) == "\n");
  CHECK(file_text("empty_file", [](CsvWriter&) {}).empty());
}

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
  // Up to 1e6 s (the integer-micros path), 16 doubles either side of decimal halfway
  // points, where s * 1e6's rounding can land either side of the half.
  for (int i = 0; i < 20000; ++i) {
    const double micros = static_cast<double>(next(x) % (std::uint64_t{1} << (20 + i % 20)));
    double up = (micros + 0.5) / 1e6, down = up;
    for (int k = 0; k < 16; ++k, up = std::nextafter(up, 1e300), down = std::nextafter(down, 0.0)) {
      v.push_back(up);
      v.push_back(down);
    }
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

TEST_CASE("plain(s) writes what field(s) writes for every request status name (requests.csv's status)") {
  for (RequestStatus s : {RequestStatus::kFinished, RequestStatus::kRejected, RequestStatus::kUnfinished,
                          RequestStatus::kNotArrived, static_cast<RequestStatus>(99)}) {
    const std::string_view name = status_name(s);
    CHECK(file_text("plain", [name](CsvWriter& w) { w.field(1).plain(name).end_row(); }) ==
          file_text("quoted", [name](CsvWriter& w) { w.field(1).field(name).end_row(); }));
  }
}
