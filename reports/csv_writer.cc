#include "reports/csv_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/core/error.h"
#include "sim/core/time.h"

namespace servesim {
namespace {

// Buffered text is written to the file once it would pass this size.
constexpr std::size_t kFlushAt = std::size_t{1} << 20;
constexpr std::size_t kFirstCapacity = 4096;

bool needs_quotes(std::string_view s) {
  for (char c : s)
    if (c == ',' || c == '"' || c == '\n' || c == '\r') return true;
  return false;
}

}  // namespace

CsvWriter::CsvWriter(const std::string& path) : file_(path) {}

char* CsvWriter::make_room(std::size_t n) {
  std::size_t used = static_cast<std::size_t>(pos_ - buf_.get());
  if (used > 0 && used + n > kFlushAt) {
    flush();
    used = 0;
  }
  const auto capacity = static_cast<std::size_t>(end_ - buf_.get());
  if (used + n > capacity) {
    const std::size_t grown = std::max({2 * capacity, used + n, kFirstCapacity});
    auto bigger = std::make_unique_for_overwrite<char[]>(grown);
    if (used) std::memcpy(bigger.get(), buf_.get(), used);
    buf_ = std::move(bigger);
    pos_ = buf_.get() + used;
    end_ = buf_.get() + grown;
  }
  return pos_;
}

void CsvWriter::append(const char* s, std::size_t n) {
  char* p = room(n);
  if (n) std::memcpy(p, s, n);
  pos_ = p + n;
}

void CsvWriter::flush() {
  file_.write(std::string_view(buf_.get(), static_cast<std::size_t>(pos_ - buf_.get())));
  pos_ = buf_.get();
}

CsvWriter& CsvWriter::field(std::string_view s) {
  if (!needs_quotes(s)) {
    char* p = begin_field(s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    pos_ = p + s.size();
    return *this;
  }
  char* p = begin_field(2 * s.size() + 2);  // every character a quote, doubled
  *p++ = '"';
  for (char c : s) {
    if (c == '"') *p++ = '"';
    *p++ = c;
  }
  *p++ = '"';
  pos_ = p;
  return *this;
}

CsvWriter& CsvWriter::field(double v) {
  pos_ = begin_field(0);
  if (!std::isfinite(v)) return *this;  // empty field: not defined
  fmt::memory_buffer text;
  fmt::format_to(std::back_inserter(text), "{:.6g}", v);
  append(text.data(), text.size());
  return *this;
}

CsvWriter& CsvWriter::amount(double v) {
  if (!std::isfinite(v)) return empty();
  if (v == std::floor(v) && std::abs(v) < 0x1p53) return field(static_cast<std::int64_t>(v));
  pos_ = begin_field(0);
  fmt::memory_buffer text;
  fmt::format_to(std::back_inserter(text), "{:.12g}", v);
  append(text.data(), text.size());
  return *this;
}

// Seconds, three ways to the same text:
//  - 0 <= s < 1e6 (not -0.0): p = s * 1e6 rounded to a double is below 2^40,
//    so p's fraction is exact and m + 1/2 (m = floor(p)) is a double. Rounding
//    is monotone, so p < m + 1/2 means the exact product is below m + 1/2 (and
//    at least m - 1/2), p > m + 1/2 that it is above: its nearest integer, no
//    tie, is the number of microseconds of the 6-decimal rounding of s. Only
//    p == m + 1/2 (a tie, or a product rounded onto one) goes on to
//  - std::to_chars with chars_format::fixed and precision 6, which writes the
//    exactly rounded decimal of the double, as fmt's "{:.6f}" does (ties, the
//    odd multiples of 1/128, included: both round them to even);
//  - non-finite values and any value to_chars' buffer cannot hold
//    (|s| >= ~1e56) through fmt.
// csv_writer_test compares all of them with fmt's "{:.6f}" over many values.
CsvWriter& CsvWriter::seconds(double s) {
  if (s < 1e6 && !std::signbit(s)) {  // false for NaN
    const double p = s * 1e6;
    const auto m = static_cast<std::uint64_t>(p);
    const double frac = p - static_cast<double>(m);
    if (frac != 0.5) {
      pos_ = csv_detail::write_micros(begin_field(21), m + (frac > 0.5));
      return *this;
    }
  }
  pos_ = begin_field(0);
  char digits[64];
  if (std::isfinite(s)) {
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, s, std::chars_format::fixed, 6);
    if (ec == std::errc()) {
      append(digits, static_cast<std::size_t>(end - digits));
      return *this;
    }
  }
  fmt::memory_buffer text;
  fmt::format_to(std::back_inserter(text), "{:.6f}", s);
  append(text.data(), text.size());
  return *this;
}

CsvWriter& CsvWriter::seconds_slow(std::int64_t ns) { return seconds(time_to_seconds(ns)); }

void CsvWriter::close() {
  if (closed_) return;
  closed_ = true;
  flush();
  file_.commit();
}

}  // namespace servesim
