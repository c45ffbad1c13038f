#include "kernels/bench/profile_csv.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace servesim::kernels {

const std::vector<std::string> kProfileColumns = {
    "kernel", "variant", "batch",  "ctx",   "q_len",  "prefix", "heads",  "kv_heads", "head_dim",
    "page_size", "budget", "m",    "n",     "k",      "params", "reps",   "median_us", "p10_us",
    "p90_us", "min_us",   "max_us", "bytes", "flops", "gbps",   "tflops"};

namespace {

void check_text(const std::string& field, const std::string& value) {
  if (value.find_first_of(",\"\n\r") != std::string::npos)
    throw std::invalid_argument("profile field '" + field + "' may not contain ',', '\"' or newlines: " + value);
}

std::string int_cell(int64_t v) { return v < 0 ? std::string() : std::to_string(v); }

std::string num_cell(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> cells;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, sep)) cells.push_back(cell);
  if (!line.empty() && line.back() == sep) cells.emplace_back();
  return cells;
}

}  // namespace

void ProfileWriter::write_provenance(const Provenance& provenance) {
  for (const auto& [key, value] : provenance) {
    if ((key + value).find_first_of("\n\r") != std::string::npos || key.find('=') != std::string::npos)
      throw std::invalid_argument("provenance key/value may not contain newlines (or '=' in the key): " + key);
    out_ << "# " << key << "=" << value << "\n";
  }
  out_.flush();
}

void ProfileWriter::write_row(const ProfileRow& r) {
  check_text("kernel", r.kernel);
  check_text("variant", r.variant);
  check_text("params", r.params);
  if (!header_written_) {
    for (size_t i = 0; i < kProfileColumns.size(); ++i) out_ << (i ? "," : "") << kProfileColumns[i];
    out_ << "\n";
    header_written_ = true;
  }
  const double gbps = r.median_us > 0 ? r.bytes / (r.median_us * 1e3) : 0.0;
  const double tflops = r.median_us > 0 ? r.flops / (r.median_us * 1e6) : 0.0;
  const std::vector<std::string> cells = {
      r.kernel, r.variant, int_cell(r.batch), int_cell(r.ctx), int_cell(r.q_len), int_cell(r.prefix),
      int_cell(r.heads), int_cell(r.kv_heads), int_cell(r.head_dim), int_cell(r.page_size), int_cell(r.budget),
      int_cell(r.m), int_cell(r.n), int_cell(r.k), r.params, std::to_string(r.reps),
      num_cell(r.median_us, "%.3f"), num_cell(r.p10_us, "%.3f"), num_cell(r.p90_us, "%.3f"),
      num_cell(r.min_us, "%.3f"), num_cell(r.max_us, "%.3f"), num_cell(r.bytes, "%.0f"),
      num_cell(r.flops, "%.0f"), num_cell(gbps, "%.2f"), num_cell(tflops, "%.3f")};
  for (size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << cells[i];
  out_ << "\n";
  out_.flush();
  ++rows_;
}

bool parse_profile(const std::string& text, ParsedProfile* out, std::string* error) {
  *out = ParsedProfile{};
  std::stringstream ss(text);
  std::string line;
  int line_no = 0;
  while (std::getline(ss, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (!out->columns.empty()) {
        *error = "line " + std::to_string(line_no) + ": provenance line after the header";
        return false;
      }
      const std::string body = line.substr(line.find_first_not_of("# "));
      const size_t eq = body.find('=');
      if (eq == std::string::npos) {
        *error = "line " + std::to_string(line_no) + ": provenance line without key=value";
        return false;
      }
      out->provenance.emplace_back(body.substr(0, eq), body.substr(eq + 1));
      continue;
    }
    std::vector<std::string> cells = split(line, ',');
    if (out->columns.empty()) {
      out->columns = std::move(cells);
      continue;
    }
    if (cells.size() != out->columns.size()) {
      *error = "line " + std::to_string(line_no) + ": " + std::to_string(cells.size()) + " cells, header has " +
               std::to_string(out->columns.size());
      return false;
    }
    out->rows.push_back(std::move(cells));
    out->row_lines.push_back(line_no);
  }
  if (out->columns.empty()) {
    *error = "no header row";
    return false;
  }
  return true;
}

bool parse_positive_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !(v > 0)) return false;
  *out = v;
  return true;
}

}  // namespace servesim::kernels
