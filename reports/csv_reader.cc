#include "reports/csv_reader.h"

#include <fstream>

#include "sim/core/error.h"

namespace servesim {

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  out.push_back(std::move(cur));
  return out;
}

int CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  CsvTable t;
  std::string line;
  long n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    auto fields = split_csv_line(line);
    if (t.header.empty()) {
      t.header = std::move(fields);
      continue;
    }
    if (fields.size() != t.header.size())
      throw InputError(located(path, n, fmt::format("{} fields, the header has {}", fields.size(), t.header.size())));
    t.rows.push_back(std::move(fields));
  }
  if (t.header.empty()) throw InputError(fmt::format("{}: empty file (no header row)", path));
  return t;
}

}  // namespace servesim
