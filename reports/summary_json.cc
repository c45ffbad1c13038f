#include "reports/summary_json.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace servesim {
namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += ch;
    }
  }
  return out + "\"";
}

// A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

bool is_summary_text_column(std::string_view c) {
  for (const char* t : {"scenario", "model", "hardware", "policy_local", "policy_global", "batching_mode",
                        "cost_model", "warnings"})
    if (c == t) return true;
  return false;
}

std::string summary_json(const SummaryFields& fields) {
  std::string out = "{\n";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& [name, text] = fields[i];
    std::string value;
    if (is_summary_text_column(name)) value = json_string(text);
    else if (text.empty()) value = "null";
    else if ((name == "oracle" || name == "calibrated") && (text == "true" || text == "false")) value = text;
    else if (is_json_number(text)) value = text;
    else value = json_string(text);
    out += fmt::format("  {}: {}{}\n", json_string(name), value, i + 1 < fields.size() ? "," : "");
  }
  return out + "}\n";
}

}  // namespace servesim
