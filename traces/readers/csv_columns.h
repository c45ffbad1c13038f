// CsvColumns: maps a CSV header line to column positions by name, so readers
// accept the columns in any order and name a missing one precisely. Names
// compare case-insensitively, ignoring surrounding blanks and a UTF-8 BOM.
// Also: the field-level checks every CSV reader shares, which throw RowError.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/readers/trace_reader.h"

namespace servesim {

class CsvColumns {
 public:
  // Splits `header`; returns false on a malformed (unterminated quote) header.
  bool parse(std::string_view header);
  // Column index of the first of `names` present, or -1.
  int find(std::initializer_list<std::string_view> names) const;
  std::size_t size() const { return names_.size(); }
  std::string list() const;  // "a, b, c" for messages

 private:
  std::vector<std::string> names_;
};

// Splits a data line and checks its field count against the header's;
// throws RowError naming the first missing column (`names`) on a short row.
void split_row(std::string_view line, std::vector<std::string_view>& fields, const CsvColumns& cols,
               const std::vector<std::string>& names);

// Field checks: each throws RowError{field, "expected ..., got '...'"}. The
// upper bounds are the documented ranges of traces/readers/field_limits.h.
std::int64_t positive_field(std::string_view v, std::string_view field,
                            std::int64_t max = INT64_MAX);                     // 1 .. max
std::int64_t nonnegative_field(std::string_view v, std::string_view field,
                               std::int64_t max = INT64_MAX);                  // 0 .. max
std::int64_t integer_field(std::string_view v, std::string_view field, std::int64_t min,
                           std::int64_t max);                                  // min .. max
double nonnegative_decimal_field(std::string_view v, std::string_view field); // >= 0, finite
// Seconds (decimal, 0 .. kMaxTraceTimeS) to integer ns.
Time seconds_field(std::string_view v, std::string_view field);
// Checks an integer already parsed against [min, max] (JSON readers).
std::int64_t check_int_range(std::int64_t x, std::string_view field, std::int64_t min, std::int64_t max);

}  // namespace servesim
