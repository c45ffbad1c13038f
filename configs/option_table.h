// OptionTable<S>: the schema of an options struct, one row per YAML key —
// key, member, range, help — and the three things done with it: read a YAML
// map into the struct (type and range checks, errors naming file, line and
// key), write the struct back (config.resolved.yaml) and document it
// (docs/configuration.md is checked against the tables by a test).
//
// A key's default is the member's initializer in the struct, and nowhere
// else: read_options() falls back to the struct's current values (so a
// per-worker override inherits the scenario's), and documentation reads a
// default-constructed S. Tables hold only plain keys (numbers, booleans,
// strings); keys with a derived default or a unit conversion stay hand-read
// next to the table that surrounds them.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_map.h"

namespace servesim {

enum class OptionRange : std::uint8_t {
  kAny,
  kPositive,        // > 0 (integers: a positive integer)
  kNonNegative,     // >= 0
  kFraction,        // (0, 1]
  kFractionOrZero,  // [0, 1]
};

// Every number key is also bounded in magnitude: |value| <= max, 10^9 unless
// the row names a tighter bound (docs/configuration.md, "Ranges"). The bound
// keeps products of keys (bytes = layers x hidden x ..., time = overhead x
// kernels) inside int64 and doubles finite.
inline constexpr double kOptionMax = 1e9;

template <class S>
struct OptionField {
  using Member = std::variant<std::int64_t S::*, int S::*, double S::*, bool S::*, std::string S::*>;
  const char* key;
  Member member;
  OptionRange range = OptionRange::kAny;
  const char* help = "";
  double max = kOptionMax;
};

template <class S>
using OptionTable = std::vector<OptionField<S>>;

namespace option_detail {

inline double check_range(YamlMap& m, const char* key, double x, OptionRange r, double max) {
  if (!(x >= -max && x <= max)) m.fail(key, fmt::format("must be at most {} in magnitude, got {}", max, x));
  switch (r) {
    case OptionRange::kAny: break;
    case OptionRange::kPositive:
      if (!(x > 0)) m.fail(key, fmt::format("must be > 0, got {}", x));
      break;
    case OptionRange::kNonNegative:
      if (!(x >= 0)) m.fail(key, "must be >= 0");
      break;
    case OptionRange::kFraction:
      if (!(x > 0) || x > 1) m.fail(key, fmt::format("must be in (0, 1], got {}", x));
      break;
    case OptionRange::kFractionOrZero:
      if (!(x >= 0) || x > 1) m.fail(key, fmt::format("must be in [0, 1], got {}", x));
      break;
  }
  return x;
}

inline std::int64_t check_range(YamlMap& m, const char* key, std::int64_t x, OptionRange r, double max) {
  if (static_cast<double>(x) > max || static_cast<double>(x) < -max)
    m.fail(key, fmt::format("must be at most {} in magnitude, got {}", max, x));
  if (r == OptionRange::kPositive && x <= 0) m.fail(key, fmt::format("must be a positive integer, got {}", x));
  if (r == OptionRange::kNonNegative && x < 0) m.fail(key, "must be >= 0");
  return x;
}

}  // namespace option_detail

// Reads every key of `table` present in `m` into `s` (absent keys keep s's
// values). Marks the keys as known to m; the caller still calls m.finish().
template <class S>
void read_options(YamlMap& m, const OptionTable<S>& table, S& s) {
  using namespace option_detail;
  for (const OptionField<S>& f : table) {
    std::visit(
        [&](auto member) {
          auto& v = s.*member;
          using T = std::remove_reference_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, int>) {
            v = static_cast<T>(check_range(m, f.key, m.get<std::int64_t>(f.key, v), f.range, f.max));
          } else if constexpr (std::is_same_v<T, double>) {
            v = check_range(m, f.key, m.get<double>(f.key, v), f.range, f.max);
          } else {
            v = m.get<T>(f.key, v);
          }
        },
        f.member);
  }
}

// Writes every key of `table` from `s` into the map `n`, in table order.
template <class S>
void write_options(YAML::Node& n, const OptionTable<S>& table, const S& s) {
  for (const OptionField<S>& f : table) std::visit([&](auto member) { n[f.key] = s.*member; }, f.member);
}

// The default of one key as YAML text (the member of a default-constructed S).
template <class S>
std::string option_default(const OptionField<S>& f) {
  static const S defaults{};
  YAML::Emitter e;
  std::visit([&](auto member) { e << YAML::Node(defaults.*member); }, f.member);
  return e.c_str();
}

}  // namespace servesim
