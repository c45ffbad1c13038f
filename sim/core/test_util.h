// Small helpers shared by the test files of every module (header-only, tests
// only): read a whole file, substring search for CHECKs on messages, and an
// empty folder per test.
// Module-specific helpers stay beside their tests (traces/test_files.h,
// configs/config_test_util.h).
#pragma once
#include <filesystem>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace servesim::testing {

// The bytes of the file at `p` ("" if it cannot be opened).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// <temp>/<suite>_<pid>/<name>, emptied and created: the pid keeps test runs of two
// checkouts (or two build folders) at the same time out of each other's folders.
inline std::filesystem::path fresh_temp_dir(const std::string& suite, const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / (suite + "_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The value after "key: " in a doc's text (up to a space, comma, brace, newline or
// '#'), the first occurrence not inside a longer key: the docs checks of the option
// tables (configs/option_tables_test.cc, traces/generators/workload_options_test.cc).
inline std::optional<std::string> doc_value(const std::string& text, const std::string& key) {
  for (std::size_t at = text.find(key + ": "); at != std::string::npos; at = text.find(key + ": ", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) continue;
    const std::size_t from = at + key.size() + 2;
    const std::size_t to = text.find_first_of(" ,}\n#", from);
    return text.substr(from, to - from);
  }
  return std::nullopt;
}

// A documented value and a table's, as text: equal as numbers when both read wholly as
// numbers ("1" and "1.0"), else equal text.
inline bool same_scalar(const std::string& doc, const std::string& table) {
  char* e1 = nullptr;
  char* e2 = nullptr;
  const double a = std::strtod(doc.c_str(), &e1), b = std::strtod(table.c_str(), &e2);
  if (*e1 == '\0' && *e2 == '\0' && !doc.empty() && !table.empty()) return a == b;
  return doc == table;
}

// A markdown table cell without its spaces and backticks ("| `key` |" -> "key").
inline std::string trim_cell(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" `"), b = s.find_last_not_of(" `");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The markdown key table (`| `key` | default | meaning |`) after the first of `lines`
// that starts with `intro`: key -> (default cell, whole row). Empty when there is none.
inline std::map<std::string, std::pair<std::string, std::string>> key_table(const std::vector<std::string>& lines,
                                                                             const std::string& intro) {
  std::map<std::string, std::pair<std::string, std::string>> rows;
  bool in = false;
  for (const std::string& l : lines) {
    if (l.starts_with(intro)) in = true;
    if (!in) continue;
    if (l.starts_with("| `")) {
      const std::size_t a = l.find('|', 1), b = l.find('|', a + 1);
      rows[trim_cell(l.substr(1, a - 1))] = {trim_cell(l.substr(a + 1, b - a - 1)), l};
    } else if (!rows.empty() && !l.starts_with("|")) {
      break;
    }
  }
  return rows;
}

}  // namespace servesim::testing
