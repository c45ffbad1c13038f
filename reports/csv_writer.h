// CsvWriter: a buffered CSV file writer (fmt into a memory buffer, flushed in
// large blocks). Fields are written as given; strings that need it are quoted.
// Numbers: seconds with 6 decimals (µs), ratios with 6 significant digits.
// The file is an OutputFile (reports/output_dir.h): it is written to
// <path>.tmp and appears under <path> only when close() succeeded; every write
// is checked (a full disk is an InputError naming the file). A writer
// destroyed without close() leaves no file.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "reports/output_dir.h"

namespace servesim {

class CsvWriter {
 public:
  explicit CsvWriter(const std::string& path);  // throws InputError if it cannot be created
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  CsvWriter& field(std::string_view s);  // quoted when it contains , " or newline
  CsvWriter& field(std::int64_t v);
  CsvWriter& field(std::uint64_t v);
  CsvWriter& field(int v) { return field(static_cast<std::int64_t>(v)); }
  CsvWriter& field(double v);            // %.6g-like, shortest round-trip where sensible
  CsvWriter& amount(double v);           // token counts and weighted sums: integers exactly, else 12 digits
  CsvWriter& seconds(double s);          // fixed 6 decimals
  // seconds(time_to_seconds(ns)), byte for byte, without formatting a double
  // where integer arithmetic gives the same digits (csv_writer.cc).
  CsvWriter& seconds_ns(std::int64_t ns);
  CsvWriter& empty();
  void end_row();
  void close();  // flushes and renames into place; throws InputError on a write error

 private:
  void sep();
  void flush_if_large();
  template <class Int>
  void append_int(Int v);

  OutputFile file_;
  bool closed_ = false;
  fmt::memory_buffer buf_;
  bool first_in_row_ = true;
};

}  // namespace servesim
