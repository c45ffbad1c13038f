#include "reports/csv_writer.h"

#include <charconv>
#include <cmath>

#include "sim/core/error.h"
#include "sim/core/time.h"

namespace servesim {

CsvWriter::CsvWriter(const std::string& path) : file_(path) {}

void CsvWriter::sep() {
  if (!first_in_row_) buf_.push_back(',');
  first_in_row_ = false;
}

CsvWriter& CsvWriter::field(std::string_view s) {
  sep();
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    buf_.append(s);
    return *this;
  }
  buf_.push_back('"');
  for (char c : s) {
    if (c == '"') buf_.push_back('"');
    buf_.push_back(c);
  }
  buf_.push_back('"');
  return *this;
}

// Integers: std::to_chars gives the same decimal digits as fmt's "{}" without
// going through fmt's format-string machinery (one call per field of every row).
template <class Int>
void CsvWriter::append_int(Int v) {
  char digits[24];
  buf_.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
}

CsvWriter& CsvWriter::field(std::int64_t v) {
  sep();
  append_int(v);
  return *this;
}

CsvWriter& CsvWriter::field(std::uint64_t v) {
  sep();
  append_int(v);
  return *this;
}

CsvWriter& CsvWriter::field(double v) {
  sep();
  if (!std::isfinite(v)) return *this;  // empty field: not defined
  fmt::format_to(std::back_inserter(buf_), "{:.6g}", v);
  return *this;
}

CsvWriter& CsvWriter::amount(double v) {
  sep();
  if (!std::isfinite(v)) return *this;
  if (v == std::floor(v) && std::abs(v) < 0x1p53)
    append_int(static_cast<std::int64_t>(v));
  else
    fmt::format_to(std::back_inserter(buf_), "{:.12g}", v);
  return *this;
}

// Seconds: std::to_chars with chars_format::fixed and precision 6 writes the
// exactly rounded decimal of the double, as fmt's "{:.6f}" does (ties, which
// are the odd multiples of 1/128, included: both round them to even);
// output_dir_test compares the two over many values. Non-finite values and
// any value the buffer cannot hold (|s| >= ~1e56) go through fmt as before.
CsvWriter& CsvWriter::seconds(double s) {
  sep();
  char digits[64];
  if (std::isfinite(s)) {
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, s, std::chars_format::fixed, 6);
    if (ec == std::errc()) {
      buf_.append(digits, end);
      return *this;
    }
  }
  fmt::format_to(std::back_inserter(buf_), "{:.6f}", s);
  return *this;
}

// ns/1e9 to 6 decimals is round(ns/1000) µs when ns is not a tie (ns % 1000 ==
// 500, where the double's representation decides) and the double ns * 1e-9
// is within 1 ns of ns/1e9, which holds below 1e6 s (its error is under 3e-16
// relative, 0.3 ns there). Elsewhere the double is formatted as before.
CsvWriter& CsvWriter::seconds_ns(std::int64_t ns) {
  constexpr std::int64_t kExactBelow = 1'000'000'000'000'000;  // 1e6 s in ns
  if (ns < 0 || ns >= kExactBelow || ns % 1000 == 500) return seconds(time_to_seconds(ns));
  sep();
  const std::int64_t us = (ns + 500) / 1000;
  char digits[32];
  auto end = std::to_chars(digits, digits + sizeof digits, us / 1'000'000).ptr;
  *end++ = '.';
  std::int64_t frac = us % 1'000'000;
  for (int i = 5; i >= 0; --i, frac /= 10) end[i] = static_cast<char>('0' + frac % 10);
  buf_.append(digits, end + 6);
  return *this;
}

CsvWriter& CsvWriter::empty() {
  sep();
  return *this;
}

void CsvWriter::end_row() {
  buf_.push_back('\n');
  first_in_row_ = true;
  flush_if_large();
}

void CsvWriter::flush_if_large() {
  if (buf_.size() < (1 << 20)) return;
  file_.write(std::string_view(buf_.data(), buf_.size()));
  buf_.clear();
}

void CsvWriter::close() {
  if (closed_) return;
  closed_ = true;
  file_.write(std::string_view(buf_.data(), buf_.size()));
  buf_.clear();
  file_.commit();
}

}  // namespace servesim
