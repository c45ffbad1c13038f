// Number text shared by the resolved config and the report labels.
#pragma once
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace servesim {

// The shortest text that reads back as the same double ("0.6" for
// "0.59999999999999998"), when `s` is all of one decimal floating-point number
// (std::from_chars syntax) that is finite; nullopt otherwise.
inline std::optional<std::string> shortest_double_text(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  std::string t = fmt::format("{}", v);
  double back = 0;
  const auto [tend, tec] = std::from_chars(t.data(), t.data() + t.size(), back);
  if (tec != std::errc() || tend != t.data() + t.size() || back != v) return std::nullopt;
  return t;
}

}  // namespace servesim
