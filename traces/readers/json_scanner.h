// JsonScanner: a small, fast reader for one JSON Lines record that is a flat
// object whose values are numbers, strings, booleans, null, or arrays of
// those (what Mooncake and the native JSONL format use). Nested objects are
// skipped by skip_value(). It never allocates except into caller buffers.
//
// Errors throw RowError{field, message}: the key being read (or "(json)" for
// syntax outside a value), so readers report "file:line: field 'x': ...".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/readers/trace_reader.h"

namespace servesim {

class JsonScanner {
 public:
  // REQUIRES: `line` outlives the scanner. Throws RowError unless it starts with '{'.
  explicit JsonScanner(std::string_view line);

  // Advances to the next key; false after the closing '}' (then checks that
  // only blanks follow). Each key's value must be consumed by one read_* or
  // skip_value() before the next call.
  bool next_key(std::string_view& key);

  std::int64_t read_int();            // an integer (1000 or 1000.0)
  double read_number();               // any finite number
  void read_string(std::string& out); // a string (escapes decoded, \u to UTF-8)
  void read_int_array(std::vector<std::uint64_t>& out);  // [non-negative integers]
  bool read_null();                   // consumes null and returns true, else false
  void skip_value();

 private:
  [[noreturn]] void fail(const std::string& msg) const;
  void skip_ws();
  char peek();
  void expect(char c);
  std::string_view number_token();

  const char* p_;
  const char* end_;
  std::string key_;  // current key, for messages
  bool first_ = true;
};

}  // namespace servesim
