#include "reports/csv_writer.h"

#include <cmath>

#include "sim/core/error.h"

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

CsvWriter& CsvWriter::field(std::int64_t v) {
  sep();
  fmt::format_to(std::back_inserter(buf_), "{}", v);
  return *this;
}

CsvWriter& CsvWriter::field(std::uint64_t v) {
  sep();
  fmt::format_to(std::back_inserter(buf_), "{}", v);
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
    fmt::format_to(std::back_inserter(buf_), "{}", static_cast<std::int64_t>(v));
  else
    fmt::format_to(std::back_inserter(buf_), "{:.12g}", v);
  return *this;
}

CsvWriter& CsvWriter::seconds(double s) {
  sep();
  fmt::format_to(std::back_inserter(buf_), "{:.6f}", s);
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
