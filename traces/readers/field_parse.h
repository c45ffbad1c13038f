// Fast, allocation-free parsing of trace fields: integers and decimals via
// std::from_chars, wall-clock timestamps, and splitting of simple CSV lines.
// Every function reports failure by return value; the trace readers turn a
// failure into an InputError naming the file, line and field.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Strips ASCII spaces and tabs at both ends.
std::string_view trim_blank(std::string_view s);

// Whole-field decimal integer (optional '-'); surrounding blanks allowed.
bool parse_int(std::string_view s, std::int64_t& out);
// Whole-field decimal number ("3", "-0.25", "1e-3"); finite only.
bool parse_decimal(std::string_view s, double& out);
// A whole-field number that is an integer value, written either as an
// integer ("120") or as a decimal with a zero fraction ("120.0").
bool parse_integral(std::string_view s, std::int64_t& out);

// "YYYY-MM-DD HH:MM:SS[.f{1,9}][Z|+HH:MM|-HH:MM]" (a 'T' may replace the
// space) as nanoseconds since 1970-01-01 00:00:00. Without a zone the clock is
// taken as UTC: only differences between rows matter to the simulator.
// `cache` speeds up runs of rows on the same day; pass the same object for
// consecutive calls (it starts zero-initialized).
// Years 1700 .. 2200 parse (the int64 ns clock spans 1677 .. 2262); others fail.
inline constexpr int kMinDatetimeYear = 1700;
inline constexpr int kMaxDatetimeYear = 2200;
struct DateCache {
  char date[10] = {};
  std::int64_t day_ns = 0;
  bool valid = false;
};
bool parse_datetime_ns(std::string_view s, std::int64_t& out, DateCache& cache);

// Splits one CSV line on commas into `fields` (views into `line`). A field in
// double quotes may contain commas; its quotes are removed ("" inside a quoted
// field is kept as is). Returns false on an unterminated quote.
bool split_csv(std::string_view line, std::vector<std::string_view>& fields);

// Space-separated list of non-negative integers ("3 17 42"; empty = none).
bool parse_id_list(std::string_view s, std::vector<std::uint64_t>& out);

// Short quoted excerpt of a bad value for error messages ('abc', '' or 'abcdef...').
std::string quote_value(std::string_view s);

}  // namespace servesim
