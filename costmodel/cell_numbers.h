// Numbers of profile CSV cells (profile_table.h), read exactly as
// std::from_chars reads them, faster for the plain decimals profiles are made
// of ("96474.9", "20480", "0").
//
// Contracts (s is the whole cell; no blanks are skipped):
//   read_double(s, out)  true iff std::from_chars(double) consumes all of s
//                        without error and the value is finite; out is then
//                        from_chars' value, bit for bit. Otherwise false and
//                        out unspecified.
//   read_int64(s, out)   true iff std::from_chars(int64) consumes all of s
//                        without error; out is then its value. Plain digits
//                        (up to 18) are read by a loop, the rest by from_chars.
//
// read_double's fast path takes a simple decimal -- digits, optionally '.' and
// at least one digit, optionally 'e' or 'E', an optional sign and 1 to 4
// digits ("1.23457e+08") -- whose digits, read as one integer D (leading zeros
// included), satisfy D <= 2^53 with at most 19 digits, and whose value
// D x 10^q has |q| <= 22. Then D and 10^|q| are both exact doubles and the
// value is one IEEE multiplication or division of them, which is correctly
// rounded (to nearest, ties to even), as from_chars' result is (Clinger's fast
// path). Every other cell (signs, more digits, larger exponents, "inf",
// malformed text) goes to std::from_chars.
// cell_numbers_test compares the two on millions of cells.
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace servesim {

// The fast path alone: true (and the value in out) when s is a simple decimal
// in its range (above); false when s is anything else, valid or not.
inline bool read_simple_decimal(std::string_view s, double& out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* c = s.data();
  const char* const end = c + s.size();
  auto is_digit = [](char ch) { return static_cast<unsigned char>(ch - '0') < 10; };
  std::uint64_t digits = 0;  // wraps past 19 digits; such cells are refused below
  const char* const int_start = c;
  for (; c != end && is_digit(*c); ++c) digits = digits * 10 + static_cast<unsigned>(*c - '0');
  const long int_digits = c - int_start;
  long frac_digits = 0;
  if (c != end && *c == '.') {
    const char* const frac_start = ++c;
    for (; c != end && is_digit(*c); ++c) digits = digits * 10 + static_cast<unsigned>(*c - '0');
    frac_digits = c - frac_start;
    if (frac_digits == 0) return false;
  }
  long exponent = 0;
  if (c != end && (*c == 'e' || *c == 'E')) {
    ++c;
    const bool negative = c != end && *c == '-';
    if (c != end && (*c == '-' || *c == '+')) ++c;
    const char* const exp_start = c;
    for (; c != end && is_digit(*c) && c - exp_start < 4; ++c) exponent = exponent * 10 + (*c - '0');
    if (c == exp_start) return false;
    if (negative) exponent = -exponent;
  }
  if (c != end || int_digits == 0 || int_digits + frac_digits > 19 || digits > (std::uint64_t{1} << 53)) return false;
  const long scale = exponent - frac_digits;  // the value is digits * 10^scale
  if (scale < -22 || scale > 22) return false;
  out = scale < 0 ? static_cast<double>(digits) / kPow10[-scale] : static_cast<double>(digits) * kPow10[scale];
  return true;
}

inline bool read_double(std::string_view s, double& out) {
  if (read_simple_decimal(s, out)) return true;
  if (s.empty()) return false;
  const char* const end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && std::isfinite(out);
}

// The fast path of read_int64: true (and the value) when s is 1 to 18 ASCII
// digits (no overflow possible); false otherwise, valid or not.
inline bool read_digits(std::string_view s, std::int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  std::int64_t v = 0;
  for (const char c : s) {
    const unsigned d = static_cast<unsigned char>(c - '0');
    if (d > 9) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

inline bool read_int64(std::string_view s, std::int64_t& out) {
  if (read_digits(s, out)) return true;
  const char* const end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace servesim
