// OptionTable<S>: the schema of an options struct, one row per YAML key —
// key, member, range, help — and the three things done with it: read a YAML
// map into the struct (type and range checks, errors naming file, line and
// key), write the struct back (config.resolved.yaml, the policy registry's
// parameter echo) and document it (docs/configuration.md and
// docs/policies.md are checked against the tables by a test).
//
// A key's default is the member's initializer in the struct, and nowhere
// else: read_options() falls back to the struct's current values (so a
// per-worker override inherits the scenario's), and documentation reads a
// default-constructed S. A row's member is a plain value (integer, double,
// boolean, string), a duration (`seconds(&S::m)`, `millis`, `micros`: a Time
// member, the key in s, ms or us), a choice between two names stored as a
// boolean (`choice(&S::m, "if_true", "if_false")`), an N-way choice stored as
// an enum (`one_of(&S::m, "noun", {"name0", "name1", ...})`: the enum's values
// are 0..N-1 in the order of the names; errors say "unknown <noun> 'x';
// expected name0 or name1", with the nearest name for a typo), or a nested map
// read and written by another table (`nested(&S::sub, sub_table)`, or
// `nested_same(sub_table)` for a map whose keys are members of S itself; its
// errors name the dotted path, "hardware.interconnect.nvlink_gbps"), or one of N
// names or a number (`one_of_or_number(&S::e, &S::x, "noun", {"auto", ...}, lo, hi)`:
// a name sets the enum; a number in [lo, hi] sets x and the enum to its value N, the one
// after the names; written back as the name, or as the number). A row may
// carry `written`: a predicate on S that keeps the key out of the write-back
// when false (a key that only some settings read).
// An optional number (`std::optional<std::int64_t> S::*`, `std::optional<double>
// S::*`) is unset when its key is absent and written back only when set (a
// stop rule's `requests` / `duration_s`). A key whose value has a shape the
// columns cannot state (a number or a `{dist: ...}` map, a name or a path or an
// inline map, a list) is a `custom` row: the caller's read and write functions,
// kept in the table so that parse, write-back and docs follow one list;
// `section(read, write)` is the custom row of a map whose keys the caller reads
// (unknown keys are errors, null is an empty map), `section_of(table)` that of a
// map of S's own table. A custom row with `read_first` is read before the
// table's other rows and written in its place (a key the rows above it default
// to). `lift(&S::sub, sub_table)` makes a
// sub-struct's rows rows of S read at S's own level (not a nested map), so a
// struct shared by several tables (a stop rule, an arrival process) is
// declared once and each table's default is the enclosing struct's.
// A key with a derived default is a custom row after the keys it derives from.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/core/time.h"
#include "sim/core/yaml_map.h"

namespace servesim {

// Every number key is also bounded in magnitude: |value| <= max, 10^9 unless
// the row names a tighter bound (docs/configuration.md, "Ranges"). The bound
// keeps products of keys (bytes = layers x hidden x ..., time = overhead x
// kernels) inside int64 and doubles finite.
inline constexpr double kOptionMax = 1e9;

enum class OptionRange : std::uint8_t {
  kAny,
  kPositive,        // > 0 (integers: a positive integer)
  kNonNegative,     // >= 0
  kFraction,        // (0, 1]
  kFractionOrZero,  // [0, 1]
  kAtLeastOne,      // >= 1
  kAboveOne,        // > 1
};

// A Time member whose key is stated in seconds, or in another unit: the key's
// value is `per_second` of its unit per second (1 for s, 1e3 for ms, 1e6 for us).
template <class S>
struct OptionSeconds {
  Time S::* member;
  double per_second = 1;
};

// A boolean member whose key is one of two names.
template <class S>
struct OptionChoice {
  bool S::* member;
  const char* if_true;
  const char* if_false;
};

// An enum member whose key is one of N names (the enum's values 0..N-1, in order).
template <class S>
struct OptionEnum {
  std::function<int(const S&)> get;
  std::function<void(S&, int)> set;
  const char* noun;                  // "link", "batching mode": named in errors
  std::vector<std::string> names;
};

// An enum member whose key is one of N names, or a number in [lo, hi] that sets a
// double member and the enum to its value N (the one after the names).
template <class S>
struct OptionEnumOrNumber {
  OptionEnum<S> names;  // the named choices (enum values 0..N-1)
  double S::* number;
  double lo;
  double hi;
};

// A key whose value is a map of another table's keys.
template <class S>
struct OptionNested {
  std::function<void(YamlMap&, S&)> read;         // reads the sub-map into s (absent keys keep s's values)
  std::function<YAML::Node(const S&)> write;      // the sub-map of s
};

// A key read and written by the caller's functions (see the header comment).
template <class S>
struct OptionCustom {
  // Reads the key `key` of m into s; absent keeps s's value (and must still mark the key known).
  std::function<void(YamlMap& m, const char* key, S& s)> read;
  std::function<YAML::Node(const S&)> write;  // the key's value
  std::function<bool(const S&)> written;      // when set and false, write_options() leaves the key out
  std::vector<std::string> names;             // the names the key accepts, if any (documented)
  // Read before the table's other rows (written in its place): a key other keys default to,
  // stated after them in the file (the scenario's kv_cache, inherited by pools and overrides).
  bool read_first = false;
};

template <class S>
OptionCustom<S> custom(std::function<void(YamlMap&, const char*, S&)> read, std::function<YAML::Node(const S&)> write) {
  return {std::move(read), std::move(write), nullptr, {}};
}

// A list of names or numbers (`after: [plan]`, `weights: [1, 2]`; a single
// value is a one-element list; absent keeps s's list), written back as a list,
// an empty one too. Element ranges are the caller's to check.
template <class S, class T>
OptionCustom<S> list_of(std::vector<T> S::* member) {
  return custom<S>(
      [member](YamlMap& m, const char* key, S& s) {
        const bool present = m.has(key);
        std::vector<T> v = m.list<T>(key);  // marks the key known; null is an error
        if (present) s.*member = std::move(v);
      },
      [member](const S& s) {
        YAML::Node n(YAML::NodeType::Sequence);
        for (const T& x : s.*member) n.push_back(x);
        return n;
      });
}

template <class S>
OptionSeconds<S> seconds(Time S::* member) {
  return {member, 1};
}
template <class S>
OptionSeconds<S> millis(Time S::* member) {  // the key in milliseconds
  return {member, 1e3};
}
template <class S>
OptionSeconds<S> micros(Time S::* member) {  // the key in microseconds
  return {member, 1e6};
}

// An enum member over `names` (its values 0..N-1 in that order); the overloads below
// take the names as a list literal or as a registry's constexpr array.
template <class S, class E>
OptionEnum<S> one_of_names(E S::* member, const char* noun, std::vector<std::string> names) {
  static_assert(std::is_enum_v<E>, "one_of needs an enum member");
  return {[member](const S& s) { return static_cast<int>(s.*member); },
          [member](S& s, int i) { s.*member = static_cast<E>(i); }, noun, std::move(names)};
}

template <class S, class E>
OptionEnum<S> one_of(E S::* member, const char* noun, std::initializer_list<const char*> names) {
  return one_of_names(member, noun, std::vector<std::string>(names.begin(), names.end()));
}

template <class S, class E>
OptionEnumOrNumber<S> one_of_or_number(E S::* member, double S::* number, const char* noun,
                                       std::initializer_list<const char*> names, double lo, double hi) {
  return {one_of(member, noun, names), number, lo, hi};
}

// The same over a registry's constexpr list of names (attention methods, backends).
template <class S, class E, std::size_t N>
OptionEnum<S> one_of(E S::* member, const char* noun, const std::array<std::string_view, N>& names) {
  return one_of_names(member, noun, std::vector<std::string>(names.begin(), names.end()));
}

template <class S>
OptionChoice<S> choice(bool S::* member, const char* if_true, const char* if_false) {
  return {member, if_true, if_false};
}

template <class S>
struct OptionField {
  using Member = std::variant<std::int64_t S::*, int S::*, double S::*, bool S::*, std::string S::*, OptionSeconds<S>,
                              OptionChoice<S>, OptionEnum<S>, OptionEnumOrNumber<S>, OptionNested<S>,
                              std::optional<std::int64_t> S::*, std::optional<double> S::*, OptionCustom<S>>;
  const char* key;
  Member member;
  OptionRange range = OptionRange::kAny;
  const char* help = "";
  double max = kOptionMax;
  // Smallest accepted value for a > 0 range, where a tiny positive number
  // would overflow what is divided by it (hardware peaks, efficiencies);
  // 0: no floor beyond the range.
  double min = 0;
  // When set and false for the struct being written, write_options() leaves the key out.
  bool (*written)(const S&) = nullptr;
};

template <class S>
using OptionTable = std::vector<OptionField<S>>;

namespace option_detail {

inline double check_range(YamlMap& m, const char* key, double x, OptionRange r, double max, double min = 0) {
  if (!(x >= -max && x <= max)) m.fail(key, fmt::format("must be at most {} in magnitude, got {}", max, x));
  if (min > 0 && x > 0 && x < min)
    m.fail(key, fmt::format("must be at least {}{}, got {}", min,
                            r == OptionRange::kNonNegative || r == OptionRange::kFractionOrZero ? " (or 0)" : "", x));
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
    case OptionRange::kAtLeastOne:
      if (!(x >= 1)) m.fail(key, fmt::format("must be >= 1, got {}", x));
      break;
    case OptionRange::kAboveOne:
      if (!(x > 1)) m.fail(key, fmt::format("must be > 1, got {}", x));
      break;
  }
  return x;
}

inline std::int64_t check_range(YamlMap& m, const char* key, std::int64_t x, OptionRange r, double max) {
  if (static_cast<double>(x) > max || static_cast<double>(x) < -max)
    m.fail(key, fmt::format("must be at most {} in magnitude, got {}", max, x));
  if (r == OptionRange::kPositive && x <= 0) m.fail(key, fmt::format("must be a positive integer, got {}", x));
  if (r == OptionRange::kNonNegative && x < 0) m.fail(key, "must be >= 0");
  if (r == OptionRange::kAtLeastOne && x < 1) m.fail(key, fmt::format("must be >= 1, got {}", x));
  if (r == OptionRange::kAboveOne && x <= 1) m.fail(key, fmt::format("must be > 1, got {}", x));
  return x;
}

// "a", "a or b", "a, b or c".
inline std::string or_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// Edits (insert, delete, replace one character, swap two adjacent ones) from a to b.
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// "unknown link 'rmda'; expected rdma or nvlink (did you mean 'rdma'?)": the names
// in order, and a suggestion: the one name that begins with the given one ('h100' ->
// 'h100-sxm'), else the nearest when it is within a third of its length in edits (a
// typo, not another word).
inline std::string unknown_name_message(const std::string& noun, const std::string& name,
                                        const std::vector<std::string>& names) {
  std::string msg = fmt::format("unknown {} '{}'; expected {}", noun, name, or_list(names));
  const std::string* best = nullptr;
  std::size_t prefixed = 0;
  for (const std::string& n : names)
    if (!name.empty() && n.starts_with(name)) best = &n, ++prefixed;
  if (prefixed == 1) return msg + fmt::format(" (did you mean '{}'?)", *best);
  best = nullptr;
  std::size_t best_d = 0;
  for (const std::string& n : names)
    if (const std::size_t d = edit_distance(name, n); !best || d < best_d) best = &n, best_d = d;
  if (best && best_d > 0 && best_d <= std::max<std::size_t>(1, best->size() / 3))
    msg += fmt::format(" (did you mean '{}'?)", *best);
  return msg;
}

template <class S, class M>
constexpr bool is_seconds = std::is_same_v<M, OptionSeconds<S>>;
template <class S, class M>
constexpr bool is_choice = std::is_same_v<M, OptionChoice<S>>;
template <class S, class M>
constexpr bool is_enum = std::is_same_v<M, OptionEnum<S>>;
template <class S, class M>
constexpr bool is_enum_or_number = std::is_same_v<M, OptionEnumOrNumber<S>>;
template <class S, class M>
constexpr bool is_nested = std::is_same_v<M, OptionNested<S>>;
template <class S, class M>
constexpr bool is_custom = std::is_same_v<M, OptionCustom<S>>;
template <class S, class M>
constexpr bool is_optional =
    std::is_same_v<M, std::optional<std::int64_t> S::*> || std::is_same_v<M, std::optional<double> S::*>;

// False when the row has nothing to write for s: an unset optional number, a
// custom row whose `written` says so.
template <class S>
bool has_value(const OptionField<S>& f, const S& s) {
  if (const auto* c = std::get_if<OptionCustom<S>>(&f.member)) return !c->written || c->written(s);
  if (const auto* o = std::get_if<std::optional<std::int64_t> S::*>(&f.member)) return (s.**o).has_value();
  if (const auto* o = std::get_if<std::optional<double> S::*>(&f.member)) return (s.**o).has_value();
  return true;
}

}  // namespace option_detail

// The same message for the names of a registry or a folder (policies, workload types,
// model and hardware files), so every unknown name reads alike and suggests the nearest;
// the same distance for the CLI's commands and options (sim/cli/main.cc).
using option_detail::edit_distance;
using option_detail::unknown_name_message;

// GCC's -Warray-bounds follows every alternative of the variant into the
// visitors below, even those a small struct cannot hold (a struct of one
// bool): a false positive there.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"

// Reads every key of `table` present in `m` into `s` (absent keys keep s's
// values). Marks the keys as known to m; the caller still calls m.finish().
template <class S>
void read_options(YamlMap& m, const OptionTable<S>& table, S& s) {
  using namespace option_detail;
  auto first = [](const OptionField<S>& f) {
    const auto* c = std::get_if<OptionCustom<S>>(&f.member);
    return c && c->read_first;
  };
  for (int pass = 0; pass < 2; ++pass)
  for (const OptionField<S>& f : table) {
    if (first(f) != (pass == 0)) continue;
    std::visit(
        [&](auto member) {
          using M = decltype(member);
          if constexpr (is_seconds<S, M>) {
            if (m.has(f.key))
              s.*member.member = seconds_to_time(
                  check_range(m, f.key, m.get<double>(f.key, 0), f.range, f.max, f.min) * (1.0 / member.per_second));
            else
              m.get<double>(f.key, 0);  // a known key when absent too (errors list it); null is an error
          } else if constexpr (is_enum<S, M>) {
            const std::string name = m.get<std::string>(f.key, member.names.at(static_cast<std::size_t>(member.get(s))));
            std::size_t i = 0;
            while (i < member.names.size() && member.names[i] != name) ++i;
            if (i == member.names.size()) m.fail(f.key, unknown_name_message(member.noun, name, member.names));
            member.set(s, static_cast<int>(i));
          } else if constexpr (is_enum_or_number<S, M>) {
            const std::vector<std::string>& names = member.names.names;
            if (!m.has(f.key)) {
              m.get<std::string>(f.key, "");  // a known key when absent too
              return;
            }
            const std::string text = m.get<std::string>(f.key, "");
            std::size_t i = 0;
            while (i < names.size() && names[i] != text) ++i;
            if (i < names.size()) {
              member.names.set(s, static_cast<int>(i));
              return;
            }
            double x = 0;
            if (!YAML::convert<double>::decode(m.raw(f.key), x)) {
              std::vector<std::string> with_number = names;
              with_number.push_back(fmt::format("a number in [{}, {}]", member.lo, member.hi));
              m.fail(f.key, unknown_name_message(member.names.noun, text, with_number));
            }
            if (!(x >= member.lo && x <= member.hi))
              m.fail(f.key, fmt::format("must be {} or a number in [{}, {}], got {}", or_list(names), member.lo,
                                        member.hi, x));
            s.*member.number = x;
            member.names.set(s, static_cast<int>(names.size()));
          } else if constexpr (is_nested<S, M>) {
            if (m.null_value(f.key)) m.fail(f.key, "expected a map of keys, got null");
            YamlMap sub = m.map(f.key);
            member.read(sub, s);
            sub.finish();
          } else if constexpr (is_custom<S, M>) {
            member.read(m, f.key, s);
          } else if constexpr (is_optional<S, M>) {
            auto& v = s.*member;
            using T = typename std::remove_reference_t<decltype(v)>::value_type;
            if (const std::optional<T> x = m.optional<T>(f.key)) {
              if constexpr (std::is_same_v<T, double>)
                v = check_range(m, f.key, *x, f.range, f.max, f.min);
              else
                v = check_range(m, f.key, *x, f.range, f.max);
            }
          } else if constexpr (is_choice<S, M>) {
            bool& v = s.*member.member;
            const std::string name = m.get<std::string>(f.key, v ? member.if_true : member.if_false);
            if (name != member.if_true && name != member.if_false)
              m.fail(f.key, fmt::format("expected {} or {}, got '{}'", member.if_true, member.if_false, name));
            v = name == member.if_true;
          } else {
            auto& v = s.*member;
            using T = std::remove_reference_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, int>) {
              v = static_cast<T>(check_range(m, f.key, m.get<std::int64_t>(f.key, v), f.range, f.max));
            } else if constexpr (std::is_same_v<T, double>) {
              v = check_range(m, f.key, m.get<double>(f.key, v), f.range, f.max, f.min);
            } else {
              v = m.get<T>(f.key, v);
            }
          }
        },
        f.member);
  }
}

// The value of one row of `s` as a YAML node.
template <class S>
YAML::Node option_value(const OptionField<S>& f, const S& s) {
  return std::visit(
      [&](auto member) {
        using M = decltype(member);
        if constexpr (option_detail::is_seconds<S, M>) {
          return YAML::Node(time_to_seconds(s.*member.member) * member.per_second);
        } else if constexpr (option_detail::is_choice<S, M>) {
          return YAML::Node(s.*member.member ? member.if_true : member.if_false);
        } else if constexpr (option_detail::is_enum<S, M>) {
          return YAML::Node(member.names.at(static_cast<std::size_t>(member.get(s))));
        } else if constexpr (option_detail::is_enum_or_number<S, M>) {
          const auto i = static_cast<std::size_t>(member.names.get(s));
          return i < member.names.names.size() ? YAML::Node(member.names.names[i]) : YAML::Node(s.*member.number);
        } else if constexpr (option_detail::is_nested<S, M>) {
          return member.write(s);
        } else if constexpr (option_detail::is_custom<S, M>) {
          return member.write(s);
        } else if constexpr (option_detail::is_optional<S, M>) {
          const auto& v = s.*member;
          return v ? YAML::Node(*v) : YAML::Node(YAML::NodeType::Null);  // null: unset (not written)
        } else {
          return YAML::Node(s.*member);
        }
      },
      f.member);
}

#pragma GCC diagnostic pop

// Writes every key of `table` from `s` into the map `n`, in table order.
template <class S>
void write_options(YAML::Node& n, const OptionTable<S>& table, const S& s) {
  for (const OptionField<S>& f : table)
    if ((!f.written || f.written(s)) && option_detail::has_value(f, s)) n[f.key] = option_value(f, s);
}

// Writes the one row of `table` named `key` (a caller that interleaves a table's keys with
// others', in an order the file keeps); nothing when the row's `written` says so.
template <class S>
void write_options(YAML::Node& n, const OptionTable<S>& table, const S& s, const std::string& key) {
  for (const OptionField<S>& f : table)
    if (key == f.key && (!f.written || f.written(s)) && option_detail::has_value(f, s)) n[f.key] = option_value(f, s);
}

// A section: a map whose keys the caller's `read` takes from the sub-map (absent or null:
// an empty map), then unknown keys are errors; written as the map `write` returns. Unlike
// nested(), a null value reads as an empty map (`slo:` with only comments under it).
template <class S>
OptionCustom<S> section(std::function<void(YamlMap&, S&)> read, std::function<YAML::Node(const S&)> write) {
  return custom<S>(
      [read = std::move(read)](YamlMap& m, const char* key, S& s) {
        YamlMap sub = m.map(key);
        read(sub, s);
        sub.finish();
      },
      std::move(write));
}

// A section read and written by `table` (a table of S's own members).
template <class S>
OptionCustom<S> section_of(const OptionTable<S>& (*table)()) {
  return section<S>([table](YamlMap& m, S& s) { read_options(m, table(), s); },
                    [table](const S& s) {
                      YAML::Node n(YAML::NodeType::Map);
                      write_options(n, table(), s);
                      return n;
                    });
}

// A nested map over member `sub` of S, read and written by `table` (a function
// returning the sub-struct's table, as option_tables.h declares them).
template <class S, class T>
OptionNested<S> nested(T S::* sub, const OptionTable<T>& (*table)()) {
  return {[sub, table](YamlMap& m, S& s) { read_options(m, table(), s.*sub); },
          [sub, table](const S& s) {
            YAML::Node n(YAML::NodeType::Map);
            write_options(n, table(), s.*sub);
            return n;
          }};
}

// A nested map whose keys are members of S itself.
template <class S>
OptionNested<S> nested_same(const OptionTable<S>& (*table)()) {
  return {[table](YamlMap& m, S& s) { read_options(m, table(), s); },
          [table](const S& s) {
            YAML::Node n(YAML::NodeType::Map);
            write_options(n, table(), s);
            return n;
          }};
}

// nested() and nested_same() with a check once the sub-map's keys are read: a
// rule across its keys, whose errors name them (check calls m.fail(key, ...)).
template <class S, class T>
OptionNested<S> nested(T S::* sub, const OptionTable<T>& (*table)(), void (*check)(YamlMap&, T&)) {
  return {[sub, table, check](YamlMap& m, S& s) {
            read_options(m, table(), s.*sub);
            check(m, s.*sub);
          },
          [sub, table](const S& s) {
            YAML::Node n(YAML::NodeType::Map);
            write_options(n, table(), s.*sub);
            return n;
          }};
}

template <class S>
OptionNested<S> nested_same(const OptionTable<S>& (*table)(), void (*check)(YamlMap&, S&)) {
  return {[table, check](YamlMap& m, S& s) {
            read_options(m, table(), s);
            check(m, s);
          },
          [table](const S& s) {
            YAML::Node n(YAML::NodeType::Map);
            write_options(n, table(), s);
            return n;
          }};
}

// The names a key accepts: an N-way choice's names in order, a two-way choice's two
// (true first), a custom row's own; empty for other rows. Docs list them
// (option_tables_test.cc checks).
template <class S>
std::vector<std::string> option_names(const OptionField<S>& f) {
  if (const auto* e = std::get_if<OptionEnum<S>>(&f.member)) return e->names;
  if (const auto* e = std::get_if<OptionEnumOrNumber<S>>(&f.member)) return e->names.names;
  if (const auto* c = std::get_if<OptionChoice<S>>(&f.member)) return {c->if_true, c->if_false};
  if (const auto* c = std::get_if<OptionCustom<S>>(&f.member)) return c->names;
  return {};
}

// The rows of `table` (a table of T) as rows of S that read and write the T
// reached by `get` (S& -> T&, const S& -> const T&), at S's own level.
template <class S, class T, class Get, class GetConst>
OptionTable<S> lift_with(Get get, GetConst get_const, const OptionTable<T>& table) {
  OptionTable<S> out;
  for (const OptionField<T>& f : table) {
    OptionCustom<S> c;
    c.read = [f, get](YamlMap& m, const char*, S& s) { read_options(m, OptionTable<T>{f}, get(s)); };
    c.write = [f, get_const](const S& s) { return option_value(f, get_const(s)); };
    c.written = [f, get_const](const S& s) {
      return (!f.written || f.written(get_const(s))) && option_detail::has_value(f, get_const(s));
    };
    c.names = option_names(f);
    out.push_back({f.key, std::move(c), f.range, f.help, f.max, f.min});
  }
  return out;
}

// The rows of a sub-struct's table as rows of S (see the header comment).
template <class S, class T>
OptionTable<S> lift(T S::* sub, const OptionTable<T>& table) {
  return lift_with<S, T>([sub](S& s) -> T& { return s.*sub; }, [sub](const S& s) -> const T& { return s.*sub; },
                         table);
}

// The rows of a base class's table as rows of S.
template <class S, class T>
OptionTable<S> lift_base(const OptionTable<T>& table) {
  static_assert(std::is_base_of_v<T, S>, "lift_base needs a base class of S");
  return lift_with<S, T>([](S& s) -> T& { return s; }, [](const S& s) -> const T& { return s; }, table);
}

// Rows of several tables, in order (a table made of lifted parts and its own rows).
template <class S>
OptionTable<S> concat(std::initializer_list<OptionTable<S>> parts) {
  OptionTable<S> out;
  for (const OptionTable<S>& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The default of one key as YAML text (the member of a default-constructed S).
template <class S>
std::string option_default(const OptionField<S>& f) {
  static const S defaults{};
  YAML::Emitter e;
  e << option_value(f, defaults);
  return e.c_str();
}

}  // namespace servesim
