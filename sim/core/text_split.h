// Splitting and trimming of simple text records (CSV lines without quoting,
// `key=value;key=value` lists): the readers of measured profiles and tables.
#pragma once
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

}  // namespace servesim
