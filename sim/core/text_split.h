// Splitting and trimming of simple text records (CSV lines without quoting,
// `key=value;key=value` lists): the readers of measured profiles and tables.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

// The fields of `s` between `sep` characters (an empty string gives one empty field).
inline std::vector<std::string> split_fields(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

// `s` without leading and trailing blanks (space, tab, carriage return).
inline std::string trim_blanks(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// `s` with ASCII letters in lower case (other bytes unchanged).
inline std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// An optional integer cell of a profile CSV row: empty when absent (< 0).
inline std::string optional_cell(std::int64_t v) { return v < 0 ? std::string() : std::to_string(v); }

}  // namespace servesim
