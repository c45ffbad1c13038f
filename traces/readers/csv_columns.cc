// Header mapping and shared field checks for the CSV readers; see csv_columns.h.
#include "traces/readers/csv_columns.h"

#include <cctype>

#include "sim/core/error.h"
#include "traces/readers/field_limits.h"
#include "traces/readers/field_parse.h"

namespace servesim {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

bool CsvColumns::parse(std::string_view header) {
  std::vector<std::string_view> f;
  if (!split_csv(header, f)) return false;
  names_.clear();
  for (auto v : f) names_.emplace_back(trim_blank(v));
  return true;
}

int CsvColumns::find(std::initializer_list<std::string_view> names) const {
  for (auto want : names)
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (iequal(names_[i], want)) return static_cast<int>(i);
  return -1;
}

std::string CsvColumns::list() const {
  std::string out;
  for (const auto& n : names_) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void split_row(std::string_view line, std::vector<std::string_view>& fields, const CsvColumns& cols,
               const std::vector<std::string>& names) {
  if (!split_csv(line, fields)) throw RowError{"(line)", "unterminated double quote"};
  if (fields.size() == cols.size()) return;
  if (fields.size() < cols.size()) {
    std::size_t missing = fields.size();
    throw RowError{missing < names.size() ? names[missing] : "(line)",
                   fmt::format("missing: the line has {} fields, the header has {}", fields.size(), cols.size())};
  }
  throw RowError{"(line)", fmt::format("the line has {} fields, the header has {}", fields.size(), cols.size())};
}

std::int64_t check_int_range(std::int64_t x, std::string_view field, std::int64_t min, std::int64_t max) {
  if (x < min || x > max) {
    if (min == 1 && max == INT64_MAX)
      throw RowError{std::string(field), fmt::format("expected a positive integer (>= 1), got {}", x)};
    if (min == 0 && max == INT64_MAX)
      throw RowError{std::string(field), fmt::format("expected a non-negative integer, got {}", x)};
    throw RowError{std::string(field), fmt::format("expected an integer in [{}, {}], got {}", min, max, x)};
  }
  return x;
}

std::int64_t positive_field(std::string_view v, std::string_view field, std::int64_t max) {
  std::int64_t x;
  if (!parse_integral(v, x)) throw RowError{std::string(field), "expected a positive integer, got " + quote_value(v)};
  return check_int_range(x, field, 1, max);
}

std::int64_t nonnegative_field(std::string_view v, std::string_view field, std::int64_t max) {
  std::int64_t x;
  if (!parse_integral(v, x)) throw RowError{std::string(field), "expected a non-negative integer, got " + quote_value(v)};
  return check_int_range(x, field, 0, max);
}

std::int64_t integer_field(std::string_view v, std::string_view field, std::int64_t min, std::int64_t max) {
  std::int64_t x;
  if (!parse_integral(v, x)) throw RowError{std::string(field), "expected an integer, got " + quote_value(v)};
  return check_int_range(x, field, min, max);
}

double nonnegative_decimal_field(std::string_view v, std::string_view field) {
  double x;
  if (!parse_decimal(v, x)) throw RowError{std::string(field), "expected a number, got " + quote_value(v)};
  if (x < 0) throw RowError{std::string(field), fmt::format("expected a non-negative number, got {}", x)};
  return x;
}

Time seconds_field(std::string_view v, std::string_view field) {
  double s = nonnegative_decimal_field(v, field);
  if (s > kMaxTraceTimeS)
    throw RowError{std::string(field), fmt::format("{} s is out of range (at most {:.0f} s)", s, kMaxTraceTimeS)};
  return seconds_to_time(s);
}

}  // namespace servesim
