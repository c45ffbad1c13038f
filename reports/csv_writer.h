// CsvWriter: a buffered CSV file writer (fields written straight into a char
// buffer, flushed in large blocks). Fields are written as given; strings that
// need it are quoted. Numbers: seconds with 6 decimals (µs), ratios with 6
// significant digits.
// The file is an OutputFile (reports/output_dir.h): it is written to
// <path>.tmp and appears under <path> only when close() succeeded; every write
// is checked (a full disk is an InputError naming the file). A writer
// destroyed without close() leaves no file.
// The integer, seconds_ns and empty-field writers are inline (they are most of
// requests.csv's cells, one row per request); each takes room for its widest
// text with one capacity check and writes its digits in place.
#pragma once
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "reports/output_dir.h"

namespace servesim {

namespace csv_detail {

// "00" "01" ... "99": two decimal digits per lookup.
struct DigitPairs {
  char c[200];
  constexpr DigitPairs() : c{} {
    for (int i = 0; i < 100; ++i) {
      c[2 * i] = static_cast<char>('0' + i / 10);
      c[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
  }
};
inline constexpr DigitPairs kDigitPairs{};

inline constexpr std::uint64_t kPow10[20] = {1,
                                             10,
                                             100,
                                             1'000,
                                             10'000,
                                             100'000,
                                             1'000'000,
                                             10'000'000,
                                             100'000'000,
                                             1'000'000'000,
                                             10'000'000'000,
                                             100'000'000'000,
                                             1'000'000'000'000,
                                             10'000'000'000'000,
                                             100'000'000'000'000,
                                             1'000'000'000'000'000,
                                             10'000'000'000'000'000,
                                             100'000'000'000'000'000,
                                             1'000'000'000'000'000'000,
                                             10'000'000'000'000'000'000u};

// The number of decimal digits of v (1 for 0). A b-bit v (b = bit width of
// v | 1) has t or t + 1 digits, t = floor(b log10 2) = (b * 1233) >> 12 for
// b <= 64; t + 1 exactly when v >= 10^t.
inline int decimal_length(std::uint64_t v) {
  v |= 1;  // same length; 0 has one digit
  const int t = (std::bit_width(v) * 1233) >> 12;
  return t + (v >= kPow10[t]);
}

// Writes v in decimal at p (the digits of std::to_chars); returns the end.
// REQUIRES room for 20 bytes.
inline char* write_decimal(char* p, std::uint64_t v) {
  char* const end = p + decimal_length(v);
  char* q = end;
  while (v >= 100) {
    q -= 2;
    std::memcpy(q, kDigitPairs.c + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10)
    std::memcpy(q - 2, kDigitPairs.c + 2 * v, 2);
  else
    q[-1] = static_cast<char>('0' + v);
  return end;
}

// Writes v in decimal at p, '-' first when negative; returns the end.
// REQUIRES room for 20 bytes.
inline char* write_decimal(char* p, std::int64_t v) {
  *p = '-';
  const auto magnitude = static_cast<std::uint64_t>(v);
  return v < 0 ? write_decimal(p + 1, 0 - magnitude) : write_decimal(p, magnitude);
}

// Writes `us` microseconds as seconds with 6 decimals ("<us / 1e6>.<6 digits>")
// at p; returns the end. REQUIRES room for 21 bytes.
inline char* write_micros(char* p, std::uint64_t us) {
  p = write_decimal(p, us / 1'000'000);
  const auto frac = static_cast<std::uint32_t>(us % 1'000'000);
  const std::uint32_t hi = frac / 10'000, rest = frac % 10'000, mid = rest / 100, lo = rest % 100;
  p[0] = '.';
  std::memcpy(p + 1, kDigitPairs.c + 2 * hi, 2);
  std::memcpy(p + 3, kDigitPairs.c + 2 * mid, 2);
  std::memcpy(p + 5, kDigitPairs.c + 2 * lo, 2);
  return p + 7;
}

}  // namespace csv_detail

class CsvWriter {
 public:
  explicit CsvWriter(const std::string& path);  // throws InputError if it cannot be created
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  CsvWriter& field(std::string_view s);  // quoted when it contains , " or newline
  // field(s) for text known to need no quotes (fixed names such as a request
  // status), without looking. REQUIRES: s holds no , " CR or LF.
  CsvWriter& plain(std::string_view s) {
    char* p = begin_field(s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    pos_ = p + s.size();
    return *this;
  }
  CsvWriter& field(std::int64_t v) { return integer(v); }
  CsvWriter& field(std::uint64_t v) { return integer(v); }
  CsvWriter& field(int v) { return field(static_cast<std::int64_t>(v)); }
  CsvWriter& field(double v);            // %.6g-like, shortest round-trip where sensible
  CsvWriter& amount(double v);           // token counts and weighted sums: integers exactly, else 12 digits
  CsvWriter& seconds(double s);          // fixed 6 decimals
  // seconds(time_to_seconds(ns)), byte for byte, without formatting a double
  // where integer arithmetic gives the same digits: ns/1e9 to 6 decimals is
  // round(ns/1000) µs when ns is not a tie (ns % 1000 == 500, where the
  // double's representation decides) and the double ns * 1e-9 is within 1 ns
  // of ns/1e9, which holds below 1e6 s (its error is under 3e-16 relative,
  // 0.3 ns there). Elsewhere the double is formatted (seconds_slow).
  CsvWriter& seconds_ns(std::int64_t ns) {
    constexpr std::uint64_t kExactBelow = 1'000'000'000'000'000;  // 1e6 s in ns
    const auto u = static_cast<std::uint64_t>(ns);                  // negative: huge
    if (u >= kExactBelow || u % 1000 == 500) return seconds_slow(ns);
    pos_ = csv_detail::write_micros(begin_field(21), (u + 500) / 1000);
    return *this;
  }
  CsvWriter& empty() {
    pos_ = begin_field(0);
    return *this;
  }
  void end_row() {
    *room(1) = '\n';
    ++pos_;
    first_in_row_ = true;
  }
  void close();  // flushes and renames into place; throws InputError on a write error

 private:
  // The digits of std::to_chars and of fmt's "{}".
  template <class Int>
  CsvWriter& integer(Int v) {
    pos_ = csv_detail::write_decimal(begin_field(20), v);
    return *this;
  }
  // Where to write n more bytes (pos_): the buffer has room for them.
  char* room(std::size_t n) { return static_cast<std::size_t>(end_ - pos_) >= n ? pos_ : make_room(n); }
  // Writes the separator (none before a row's first field) with room for n
  // bytes after it; returns where the field's text goes. The caller sets pos_
  // to the end of what it wrote.
  char* begin_field(std::size_t n) {
    const bool first = first_in_row_;
    first_in_row_ = false;
    char* p = room(n + 1);
    *p = ',';
    return p + !first;
  }
  char* make_room(std::size_t n);  // flushes (a full buffer) or grows it
  void append(const char* s, std::size_t n);  // a whole field's text (after begin_field(0))
  void flush();                              // writes and empties the buffer
  CsvWriter& seconds_slow(std::int64_t ns);

  OutputFile file_;
  bool closed_ = false;
  std::unique_ptr<char[]> buf_;
  char* pos_ = nullptr;  // end of the buffered text
  char* end_ = nullptr;  // end of the buffer
  bool first_in_row_ = true;
};

}  // namespace servesim
