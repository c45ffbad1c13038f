// Implementation of the strict YAML reader; see yaml_map.h for the contract.
#include "sim/core/yaml_map.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "sim/core/input_file.h"

namespace servesim {
namespace {

// Offset of the first byte that is not part of well-formed UTF-8 (no overlongs, no
// surrogates, at most U+10FFFF); s.size() when all of it is.
std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (b < 0x80) n = 1;
    else if (b >= 0xC2 && b <= 0xDF) n = 2;
    else if (b >= 0xE0 && b <= 0xEF) n = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    else if (b >= 0xF0 && b <= 0xF4) n = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    else return i;
    if (i + n > s.size()) return i;
    for (std::size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return i;
    }
    i += n;
  }
  return i;
}

const char* type_name(const bool*) { return "a boolean (true/false)"; }
const char* type_name(const int*) { return "an integer"; }
const char* type_name(const std::int64_t*) { return "an integer"; }
const char* type_name(const std::uint64_t*) { return "a non-negative integer"; }
const char* type_name(const double*) { return "a number"; }
const char* type_name(const std::string*) { return "a string"; }

std::string describe(const YAML::Node& v) {
  if (v.IsScalar()) return "'" + v.Scalar() + "'";
  if (v.IsSequence()) return "a list";
  if (v.IsMap()) return "a map";
  return "nothing";
}

// Rebuilds a node so it carries no source position: errors about a --set value
// then say "(from --set)" instead of pointing at line 1 of a one-line document.
YAML::Node without_marks(const YAML::Node& n) {
  if (n.IsScalar()) return YAML::Node(n.Scalar());
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& e : n) out.push_back(without_marks(e));
    return out;
  }
  if (n.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = without_marks(it->second);
    return out;
  }
  return YAML::Node();
}

}  // namespace

YamlMap::YamlMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (node_ && !node_.IsNull() && !node_.IsMap())
    throw InputError(located(file_, node_.Mark().line + 1,
                             fmt::format("{}: expected a map of keys, got {}",
                                         path_.empty() ? "<root>" : path_, describe(node_))));
}

std::string YamlMap::where(const YAML::Node& n) const {
  if (n.IsDefined()) {
    if (n.Mark().line >= 0) return fmt::format("{}:{}:{}", file_, n.Mark().line + 1, n.Mark().column + 1);
    return file_ + " (from --set)";  // nodes without a position come from overrides
  }
  if (node_.IsDefined() && node_.Mark().line >= 0)
    return fmt::format("{}:{}:{}", file_, node_.Mark().line + 1, node_.Mark().column + 1);
  return file_ + " (from --set)";
}

bool YamlMap::has(const std::string& key) const {
  if (!node_ || !node_.IsMap()) return false;
  const YAML::Node& c = node_;
  auto v = c[key];
  return v && !v.IsNull();
}

void YamlMap::reject_null(const std::string& key) const {
  if (!node_ || !node_.IsMap()) return;
  const YAML::Node& c = node_;
  const YAML::Node v = c[key];
  if (v && v.IsNull())
    throw InputError(fmt::format("{}: {}: is null (~ or nothing); give a value, or leave the key out for its default",
                                 where(v), key_path(key)));
}

bool YamlMap::null_value(const std::string& key) {
  if (!node_ || !node_.IsMap()) return false;
  const YAML::Node& c = node_;
  const YAML::Node v = c[key];
  if (!v || !v.IsNull()) return false;
  used_.insert(key);
  return true;
}

void YamlMap::fail(const std::string& key, const std::string& msg) const {
  // Point at the key's value when it exists, else at this map.
  if (has(key)) {
    const YAML::Node& c = node_;
    const YAML::Node v = c[key];
    throw InputError(fmt::format("{}: {}: {}", where(v), key_path(key), msg));
  }
  throw InputError(fmt::format("{}: {}: {}", where(node_), key_path(key), msg));
}

void YamlMap::fail_here(const std::string& msg) const {
  throw InputError(fmt::format("{}: {}: {}", where(node_), path_.empty() ? "<root>" : path_, msg));
}

template <class T>
T YamlMap::convert(const std::string& key, const YAML::Node& v) const {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.IsScalar()) fail(key, fmt::format("expected {}, got {}", type_name(static_cast<T*>(nullptr)), describe(v)));
    // Names go into CSV files and messages: raw invalid bytes would corrupt them.
    if (const std::size_t bad = first_invalid_utf8(v.Scalar()); bad != v.Scalar().size())
      fail(key, fmt::format("is not valid UTF-8 (byte {} of the value)", bad + 1));
    return v.Scalar();
  } else {
    if (!v.IsScalar()) fail(key, fmt::format("expected {}, got {}", type_name(static_cast<T*>(nullptr)), describe(v)));
    // yaml-cpp accepts "1.5" for int by truncation in some versions; check strictly.
    const std::string& s = v.Scalar();
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      std::size_t pos = 0;
      long double x = 0;
      try {
        x = std::stold(s, &pos);
      } catch (...) {
        pos = 0;
      }
      // Accept integer literals, including 1e6-style scientific notation that is integral.
      // The range is checked before any cast: casting 1e300 to an integer is undefined.
      if (pos != s.size() || s.empty() || !std::isfinite(x))
        fail(key, fmt::format("expected {}, got {}", type_name(static_cast<T*>(nullptr)), describe(v)));
      if (x < static_cast<long double>(std::numeric_limits<T>::min()) ||
          x > static_cast<long double>(std::numeric_limits<T>::max()))
        fail(key, fmt::format("value {} is out of range", s));
      if (x != std::floor(x))
        fail(key, fmt::format("expected {}, got {}", type_name(static_cast<T*>(nullptr)), describe(v)));
      return static_cast<T>(x);
    } else {
      T out{};
      if (!YAML::convert<T>::decode(v, out))
        fail(key, fmt::format("expected {}, got {}", type_name(static_cast<T*>(nullptr)), describe(v)));
      if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(out)) fail(key, fmt::format("expected a finite number, got {}", describe(v)));
      }
      return out;
    }
  }
}

template <class T>
T YamlMap::get(const std::string& key, const T& def) {
  used_.insert(key);
  reject_null(key);
  if (!has(key)) return def;
  const YAML::Node& c = node_;
  return convert<T>(key, c[key]);
}

template <class T>
T YamlMap::require(const std::string& key) {
  used_.insert(key);
  reject_null(key);
  if (!has(key)) fail_here(fmt::format("missing required key '{}'", key));
  const YAML::Node& c = node_;
  return convert<T>(key, c[key]);
}

template <class T>
std::optional<T> YamlMap::optional(const std::string& key) {
  used_.insert(key);
  reject_null(key);
  if (!has(key)) return std::nullopt;
  const YAML::Node& c = node_;
  return convert<T>(key, c[key]);
}

template <class T>
std::vector<T> YamlMap::list(const std::string& key) {
  used_.insert(key);
  reject_null(key);
  std::vector<T> out;
  if (!has(key)) return out;
  const YAML::Node& c = node_;
  YAML::Node v = c[key];
  if (v.IsScalar()) {  // a single value is a one-element list
    out.push_back(convert<T>(key, v));
    return out;
  }
  if (!v.IsSequence()) fail(key, fmt::format("expected a list, got {}", describe(v)));
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(convert<T>(fmt::format("{}[{}]", key, i), v[i]));
  return out;
}

namespace {
// The magnitude bound of every number key (kOptionMax in option_table.h): products of
// keys stay inside int64 and doubles finite.
constexpr double kMaxMagnitude = 1e9;
}  // namespace

double YamlMap::positive(const std::string& key, double def) {
  double x = get<double>(key, def);
  if (!(x > 0)) fail(key, fmt::format("must be > 0, got {}", x));
  if (x > kMaxMagnitude) fail(key, fmt::format("must be at most {:.0e}, got {}", kMaxMagnitude, x));
  return x;
}

double YamlMap::in_range(const std::string& key, double def, double lo, double hi, const char* unit) {
  const double x = get<double>(key, def);
  if (!(x >= lo && x <= hi))
    fail(key, fmt::format("must be in [{}, {}]{}{}, got {}", lo, hi, *unit ? " " : "", unit, x));
  return x;
}

std::int64_t YamlMap::positive_int(const std::string& key, std::int64_t def) {
  std::int64_t x = get<std::int64_t>(key, def);
  if (x <= 0) fail(key, fmt::format("must be a positive integer, got {}", x));
  if (static_cast<double>(x) > kMaxMagnitude) fail(key, fmt::format("must be at most {:.0e}, got {}", kMaxMagnitude, x));
  return x;
}

YamlMap YamlMap::map(const std::string& key) {
  used_.insert(key);
  YAML::Node v;
  if (has(key)) {
    const YAML::Node& c = node_;
    v = c[key];
    if (!v.IsMap()) fail(key, fmt::format("expected a map of keys, got {}", describe(v)));
  }
  return YamlMap(v, file_, key_path(key));
}

YAML::Node YamlMap::raw(const std::string& key) {
  used_.insert(key);
  if (!has(key)) return YAML::Node();
  const YAML::Node& c = node_;
  return c[key];
}

void YamlMap::finish() const {
  if (!node_ || !node_.IsMap()) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    std::string k = it->first.as<std::string>();
    if (used_.count(k)) continue;
    std::string expected;
    for (const auto& u : used_) expected += (expected.empty() ? "" : ", ") + u;
    throw InputError(fmt::format("{}: {}: unknown key{}", where(it->first), key_path(k),
                                 expected.empty() ? "" : "; expected one of: " + expected));
  }
}

namespace {

// Event-parser pass that yaml-cpp's Node loading lacks: Node keeps the first
// of two equal keys and silently drops the second, and a non-scalar key only
// fails later with library text. Walks the event stream with a stack of open
// collections; in a map, events alternate key, value.
class KeyChecker final : public YAML::EventHandler {
 public:
  explicit KeyChecker(std::string where) : where_(std::move(where)) {}

  void OnDocumentStart(const YAML::Mark&) override { stack_.clear(); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, "null", true); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, "", false, "an alias (*name)"); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    node(mark, value, true);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, "", false, "a list");
    stack_.push_back(Frame{false, true, {}});
  }
  void OnSequenceEnd() override { stack_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark, "", false, "a map");
    stack_.push_back(Frame{true, true, {}});
  }
  void OnMapEnd() override { stack_.pop_back(); }

 private:
  struct Frame {
    bool map;
    bool want_key = true;
    std::map<std::string, int> keys;  // key -> 1-based line of its first occurrence
  };

  void node(const YAML::Mark& mark, const std::string& scalar, bool is_scalar, const char* what = "") {
    if (stack_.empty() || !stack_.back().map) return;
    Frame& f = stack_.back();
    const bool key = f.want_key;
    f.want_key = !f.want_key;
    if (!key) return;
    if (!is_scalar)
      throw InputError(fmt::format("{}:{}:{}: a map key must be a plain value, got {}", where_, mark.line + 1,
                                   mark.column + 1, what));
    auto [it, inserted] = f.keys.emplace(scalar, mark.line + 1);
    if (!inserted)
      throw InputError(fmt::format("{}:{}:{}: duplicate key '{}' (first at line {}); each key may appear once per map",
                                   where_, mark.line + 1, mark.column + 1, scalar, it->second));
  }

  std::string where_;
  std::vector<Frame> stack_;
};

}  // namespace

void check_yaml_keys(std::istream& in, const std::string& where) {
  // The first document only: it is the one YAML::Load reads (looping over
  // HandleNextDocument hangs yaml-cpp 0.7 on some malformed input; found by
  // fuzz_sweep).
  KeyChecker checker(where);
  YAML::Parser parser(in);
  parser.HandleNextDocument(checker);
}

YAML::Node load_yaml_file(const std::string& path) {
  require_regular_file(path);
  // Read whole, with every read checked: a read error names the file (/proc/self/mem was
  // an unnamed exit 1).
  std::string text;
  {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw InputError(fmt::format("{}: cannot open file: {}", path, std::strerror(errno)));
    char buf[1 << 16];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
      text.append(buf, n);
      if (text.size() > (std::size_t{64} << 20)) {
        std::fclose(f);
        throw InputError(fmt::format("{}: larger than 64 MiB: not a configuration file", path));
      }
    }
    const int err = errno;
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) throw InputError(fmt::format("{}: read error: {}", path, std::strerror(err)));
  }
  std::istringstream in(text);
  try {
    check_yaml_keys(in, path);
    in.clear();
    in.seekg(0);
    return YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set {}: expected key.path=value", assignment));
  std::string path = assignment.substr(0, eq);
  std::string value = assignment.substr(eq + 1);
  YAML::Node parsed;
  try {
    std::istringstream text(value);
    check_yaml_keys(text, "--set " + assignment);
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--set {}: cannot parse value: {}", assignment, e.msg));
  }
  if (!parsed || parsed.IsNull()) parsed = YAML::Node(value);
  // Walk/create the maps along the dotted path. yaml-cpp Nodes are handles, so
  // assigning through a copied handle edits the tree.
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) {
    if (p.empty()) throw InputError(fmt::format("--set {}: empty key in path", assignment));
    parts.push_back(p);
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    if (!cur.IsMap())
      throw InputError(fmt::format("--set {}: '{}' is not a map", assignment, parts[i - (i > 0)]));
    YAML::Node child = cur[parts[i]];
    if (!child || child.IsNull()) {
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      child = cur[parts[i]];
    } else if (child.IsScalar()) {
      // `policy.local: fcfs` then `--set policy.local.name=x` is not a path.
      throw InputError(fmt::format("--set {}: '{}' holds a value, not a map", assignment, parts[i]));
    }
    chain.push_back(child);
  }
  YAML::Node parent = chain.back();
  if (!parent.IsMap()) throw InputError(fmt::format("--set {}: parent of '{}' is not a map", assignment, parts.back()));
  // Remove first: assigning into the existing node would keep its file position.
  parent.remove(parts.back());
  parent[parts.back()] = without_marks(parsed);
}

template bool YamlMap::get<bool>(const std::string&, const bool&);
template int YamlMap::get<int>(const std::string&, const int&);
template std::int64_t YamlMap::get<std::int64_t>(const std::string&, const std::int64_t&);
template std::uint64_t YamlMap::get<std::uint64_t>(const std::string&, const std::uint64_t&);
template double YamlMap::get<double>(const std::string&, const double&);
template std::string YamlMap::get<std::string>(const std::string&, const std::string&);
template bool YamlMap::require<bool>(const std::string&);
template int YamlMap::require<int>(const std::string&);
template std::int64_t YamlMap::require<std::int64_t>(const std::string&);
template std::uint64_t YamlMap::require<std::uint64_t>(const std::string&);
template double YamlMap::require<double>(const std::string&);
template std::string YamlMap::require<std::string>(const std::string&);
template std::optional<bool> YamlMap::optional<bool>(const std::string&);
template std::optional<int> YamlMap::optional<int>(const std::string&);
template std::optional<std::int64_t> YamlMap::optional<std::int64_t>(const std::string&);
template std::optional<std::uint64_t> YamlMap::optional<std::uint64_t>(const std::string&);
template std::optional<double> YamlMap::optional<double>(const std::string&);
template std::optional<std::string> YamlMap::optional<std::string>(const std::string&);
template std::vector<double> YamlMap::list<double>(const std::string&);
template std::vector<std::int64_t> YamlMap::list<std::int64_t>(const std::string&);
template std::vector<std::string> YamlMap::list<std::string>(const std::string&);

}  // namespace servesim
