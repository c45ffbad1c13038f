// YamlMap: strict, typed reading of one YAML mapping, with errors that name the
// file, line, column and dotted key path ("scenario.yaml:12:3: cluster.workerz:
// unknown key; expected one of: workers, hardware, ...").
//
// Every key a reader asks for is recorded; finish() rejects any key nobody
// asked for, so typos are never silently ignored. Values that came from
// `--set` overrides carry no line; their errors say "(from --set)".
#pragma once
#include <cstdint>
#include <istream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.h"

namespace servesim {

class YamlMap {
 public:
  // `node` must be a map (or null/undefined = empty map); `path` is the dotted
  // prefix of its keys ("" at the root).
  YamlMap(YAML::Node node, std::string file, std::string path = "");

  bool has(const std::string& key) const;

  // Typed getters. T in {bool, int, int64_t, uint64_t, double, std::string}.
  // get() returns `def` when absent; require() errors when absent. A key present with a
  // null value (`workers: ~`, `workers:`) is an error, not the default.
  template <class T> T get(const std::string& key, const T& def);
  template <class T> T require(const std::string& key);
  template <class T> std::optional<T> optional(const std::string& key);
  template <class T> std::vector<T> list(const std::string& key);  // absent = empty

  // Checks for numbers read with get/require (inclusive bounds): in (0, 1e9].
  double positive(const std::string& key, double def);
  std::int64_t positive_int(const std::string& key, std::int64_t def);
  // A number in [lo, hi]; the error names both bounds in the key's unit ("s", "requests/s").
  double in_range(const std::string& key, double def, double lo, double hi, const char* unit);

  // True (and the key known) when `key` is present with a null value: for the few keys
  // where null means something (a trace window's end_s: no end).
  bool null_value(const std::string& key);

  // Sub-map (absent = empty map). The child shares nothing with the parent
  // except the file name; call finish() on it too.
  YamlMap map(const std::string& key);
  // Raw access for lists of maps etc. Marks the key as used.
  YAML::Node raw(const std::string& key);

  // Errors on any key that was never asked for.
  void finish() const;

  // Throws InputError naming this map's file and the key's position.
  [[noreturn]] void fail(const std::string& key, const std::string& msg) const;
  [[noreturn]] void fail_here(const std::string& msg) const;

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const YAML::Node& node() const { return node_; }

 private:
  template <class T> T convert(const std::string& key, const YAML::Node& v) const;
  void reject_null(const std::string& key) const;
  std::string where(const YAML::Node& n) const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::set<std::string> used_;
};

// Loads a YAML file; a syntax error becomes an InputError with file:line:col,
// and so does a key that appears twice in one map or a key that is not a plain
// scalar (a list, a map or an alias): yaml-cpp's Node would drop the duplicate.
YAML::Node load_yaml_file(const std::string& path);

// The duplicate/non-scalar key check of load_yaml_file() on any YAML text;
// `where` names the source in messages ("file" or "--set a=b"). Throws
// InputError; YAML syntax errors propagate as YAML::Exception.
void check_yaml_keys(std::istream& in, const std::string& where);

// Applies one `--set a.b.c=value` override to `root` (value parsed as YAML, so
// numbers, booleans and [lists] work). Creates missing maps. Throws InputError
// on a malformed assignment.
void apply_override(YAML::Node& root, const std::string& assignment);

}  // namespace servesim
