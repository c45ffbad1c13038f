// Tests of the profile cell number readers (cell_numbers.h): on every cell,
// read_double and read_int64 agree with std::from_chars bit for bit, and
// reject what it rejects.
#include <doctest/doctest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "costmodel/cell_numbers.h"

using namespace servesim;

namespace {

// The contract, spelled with std::from_chars alone.
bool reference_double(std::string_view s, double& out) {
  const char* const end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return !s.empty() && ec == std::errc() && p == end && std::isfinite(out);
}

bool reference_int64(std::string_view s, std::int64_t& out) {
  const char* const end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

// Counts the cells checked; fails (naming the cell) on the first disagreement.
struct Checker {
  std::size_t cells = 0, fast = 0;
  void operator()(const std::string& s) {
    ++cells;
    double want = 0, got = 0, fast_value = 0;
    const bool ok_want = reference_double(s, want), ok_got = read_double(s, got);
    if (read_simple_decimal(s, fast_value)) {
      ++fast;
      REQUIRE_MESSAGE(ok_want, "fast path accepted '", s, "'");
      REQUIRE_MESSAGE(std::bit_cast<std::uint64_t>(fast_value) == std::bit_cast<std::uint64_t>(want), "'", s, "'");
    }
    REQUIRE_MESSAGE(ok_got == ok_want, "'", s, "'");
    if (ok_want) REQUIRE_MESSAGE(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want), "'", s, "'");
    std::int64_t iw = 0, ig = 0;
    const bool ok_iw = reference_int64(s, iw), ok_ig = read_int64(s, ig);
    REQUIRE_MESSAGE(ok_ig == ok_iw, "'", s, "'");
    if (ok_iw) REQUIRE_MESSAGE(ig == iw, "'", s, "'");
  }
};

}  // namespace

TEST_CASE("cell numbers: special and malformed cells read as std::from_chars reads them") {
  Checker check;
  for (const char* s :
       {"", " ", "\t", "-", "+", ".", "e", "E", "0", "00", "-0", "+0", "0.", ".5", "5.", "0.0", "1e", "1e+", "1e-",
        "1e5", "1E5", "1e+05", "1e-05", "1.5e3", "1.e3", ".5e3", "1e0001", "1e00001", "1e22", "1e23", "1e-22", "1e-23",
        "9007199254740992", "9007199254740993", "9007199254740991.5", "900719925474099.3", "12345678901234567890",
        "123456789012345678", "1234567890123456789", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "0000000000000000000000001", "0.0000000000000000000001", "0.00000000000000000000001",
        "inf", "-inf", "nan", "infinity", "0x1p3", "1e400", "1e-400", "4.9e-324", "2.2250738585072014e-308",
        "1.7976931348623157e308", "1.7976931348623159e308", " 7", "7 ", "7,", "1_0", "１", "96474.9", "1.23457e+08",
        "20480", "12.5", "abc", "1..2", "1.2.3", "1e5e5", "--1", "+-1", "1-", "0e0", "0.000e-99", "1e-0"})
    check(s);
  CHECK(check.cells > 70);
}

TEST_CASE("cell numbers: millions of decimals, integers and exponent forms agree with std::from_chars bit for bit") {
  Checker check;
  std::mt19937_64 rng(20261127);
  auto below = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
  // Digit strings D with a decimal point somewhere and an optional exponent,
  // around the fast path's limits: D up to 2^53 and beyond, |scale| up to 22 and beyond.
  for (int i = 0; i < 1'500'000; ++i) {
    const int bits = static_cast<int>(below(64)) + 1;
    const std::uint64_t d = bits == 64 ? rng() : rng() >> (64 - bits);
    std::string digits = std::to_string(d);
    if (below(8) == 0) digits.insert(0, std::string(below(4), '0'));  // leading zeros
    std::string s = digits;
    const std::size_t point = below(digits.size() + 2);
    if (point > 0 && point <= digits.size() && below(3) != 0) s.insert(point, ".");
    if (below(3) == 0) {
      const char* signs[] = {"", "+", "-"};
      s += fmt::format("{}{}{:0{}d}", below(2) ? "e" : "E", signs[below(3)], below(40), below(4) + 1);
    }
    check(s);
  }
  // Doubles as programs write them: fixed, scientific and shortest forms.
  for (int i = 0; i < 500'000; ++i) {
    const double v = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(below(200)) - 130);
    check(fmt::format("{:.{}f}", v, below(12)));
    check(fmt::format("{:.{}e}", v, below(17)));
    check(fmt::format("{}", v));
  }
  // Integer cells, and every double exactly halfway between two neighbours' decimal forms near 2^53.
  for (std::uint64_t n = (std::uint64_t{1} << 53) - 1000; n < (std::uint64_t{1} << 53) + 1000; ++n) {
    check(std::to_string(n));
    check(std::to_string(n) + ".5");
    check(std::to_string(n / 10) + "." + std::to_string(n % 10));
  }
  CHECK(check.cells > 3'000'000);
  CHECK(check.fast > check.cells / 4);  // the fast path is exercised, not bypassed
}
