#include "reports/csv_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "sim/core/error.h"

namespace servesim {

CsvWriter::CsvWriter(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw InputError(fmt::format("{}: cannot create file: {}", path, std::strerror(errno)));
}

CsvWriter::~CsvWriter() {
  if (f_) {
    std::fwrite(buf_.data(), 1, buf_.size(), f_);
    std::fclose(f_);
  }
}

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
  if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
    throw InputError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  buf_.clear();
}

void CsvWriter::close() {
  if (!f_) return;
  bool ok = std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size();
  buf_.clear();
  ok = (std::fclose(f_) == 0) && ok;
  f_ = nullptr;
  if (!ok) throw InputError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
}

}  // namespace servesim
