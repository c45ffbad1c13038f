// JsonRecord: one JSON Lines record (a JSON object) read with simdjson's On
// Demand API (Debian's libsimdjson-dev): the Mooncake and native JSONL readers
// visit its keys in order and read each value as the type they expect. Values
// are numbers, strings, booleans, null, arrays of those, or anything else for
// keys a reader skips. The whole line is validated as UTF-8; numbers and
// strings are parsed by simdjson.
//
// Errors throw RowError{field, message}: the key being read (or "(json)" for
// syntax outside a value), so readers report "file:line: field 'x': ...".
//
// A JsonParser (simdjson's parser and a padded copy of the line) belongs to
// one reader and is reused for every line; a JsonRecord is valid until the
// next record is made from the same parser. simdjson runs the kernels of the
// instruction set json_record.cc is compiled for (traces/CMakeLists.txt,
// SERVESIM_SIMDJSON_AVX2).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "traces/readers/trace_reader.h"

namespace servesim {

class JsonRecordImpl;

class JsonParser {
 public:
  JsonParser();
  ~JsonParser();
  JsonParser(const JsonParser&) = delete;
  JsonParser& operator=(const JsonParser&) = delete;

 private:
  friend class JsonRecord;
  std::unique_ptr<JsonRecordImpl> impl_;
};

class JsonRecord {
 public:
  // Parses `line`; throws RowError unless it is a JSON object.
  JsonRecord(JsonParser& parser, std::string_view line);

  // Advances to the next key; false after the closing '}' (then checks that
  // nothing but blanks follows). A key's value is read by at most one read_*
  // call; one not read is skipped.
  bool next_key(std::string_view& key);

  std::int64_t read_int();            // an integer (1000, or 1000.0: a decimal with a zero fraction)
  double read_number();               // any finite number
  void read_string(std::string& out); // a string (escapes decoded)
  void read_int_array(std::vector<std::uint64_t>& out);  // [non-negative integers]
  bool read_null();                   // consumes null and returns true, else false
  void skip_value() {}                // a value not read is skipped by next_key()

 private:
  JsonRecordImpl& impl_;
};

// The simdjson kernels this build reads JSON with ("fallback", "haswell", "arm64", ...).
const char* simdjson_kernels();

}  // namespace servesim
