#include "configs/sweep_spec.h"

#include <algorithm>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "sim/core/error.h"
#include "sim/core/rng.h"
#include "sim/core/yaml_map.h"

namespace servesim {
namespace {

std::string yaml_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

std::uint32_t fnv1a(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<Override> read_map(const YAML::Node& n, const std::string& file, const std::string& where) {
  std::vector<Override> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsMap())
    throw InputError(fmt::format("{}:{}: {}: expected a map of key.path: value", file, n.Mark().line + 1, where));
  for (auto it = n.begin(); it != n.end(); ++it) out.emplace_back(it->first.Scalar(), yaml_text(it->second));
  return out;
}

// One dimension of the product: a list of alternative override sets.
using Dimension = std::vector<std::vector<Override>>;

Dimension list_dimension(const std::string& key, const YAML::Node& values, const std::string& file,
                         const std::string& where) {
  if (!values.IsSequence() || values.size() == 0)
    throw InputError(fmt::format("{}:{}: {}.{}: expected a non-empty list of values", file, values.Mark().line + 1,
                                 where, key));
  Dimension d;
  for (const auto& v : values) d.push_back({{key, yaml_text(v)}});
  return d;
}

}  // namespace

std::vector<std::string> SweepSpec::assignments(const SweepPoint& p) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : fixed) out.push_back(k + "=" + v);
  for (const auto& [k, v] : p.overrides) out.push_back(k + "=" + v);
  return out;
}

std::uint64_t repetition_seed(std::uint64_t base, std::size_t r) {
  if (r == 0) return base;
  return Rng::stream(base, r).next_u64() >> 33;
}

SweepSpec load_sweep(const std::string& path, std::size_t repeat) {
  SweepSpec s;
  s.file = path;
  YamlMap m(load_yaml_file(path), path);
  s.name = m.get<std::string>("name", std::filesystem::path(path).stem().string());
  std::string base = m.require<std::string>("base");
  std::filesystem::path bp(base);
  if (bp.is_relative()) bp = std::filesystem::path(path).parent_path() / bp;
  std::error_code bp_ec;  // e.g. a path longer than the file system allows: an input error, not a throw
  if (!std::filesystem::is_regular_file(bp, bp_ec)) m.fail("base", fmt::format("base scenario {} does not exist", bp.string()));
  s.base = bp.lexically_normal().string();
  s.fixed = read_map(m.raw("set"), path, "set");
  {
    const std::int64_t file_repeat = m.get<std::int64_t>("repeat", 1);
    if (file_repeat < 1 || file_repeat > static_cast<std::int64_t>(kMaxRepeat))
      m.fail("repeat", fmt::format("expected 1 to {} runs per point, got {}", kMaxRepeat, file_repeat));
    s.repeat = repeat != 0 ? repeat : static_cast<std::size_t>(file_repeat);
    if (s.repeat > kMaxRepeat)
      throw InputError(fmt::format("--repeat {}: expected 1 to {} runs per point", s.repeat, kMaxRepeat));
  }

  std::vector<Dimension> dims;
  YAML::Node grid = m.raw("grid");
  if (grid.IsDefined() && !grid.IsNull()) {
    if (!grid.IsMap()) m.fail("grid", "expected a map of key.path: [values]");
    for (auto it = grid.begin(); it != grid.end(); ++it)
      dims.push_back(list_dimension(it->first.Scalar(), it->second, path, "grid"));
  }
  YAML::Node zip = m.raw("zip");
  if (zip.IsDefined() && !zip.IsNull()) {
    if (!zip.IsMap()) m.fail("zip", "expected a map of key.path: [values] with lists of equal length");
    Dimension z;
    for (auto it = zip.begin(); it != zip.end(); ++it) {
      Dimension d = list_dimension(it->first.Scalar(), it->second, path, "zip");
      if (!z.empty() && d.size() != z.size())
        m.fail("zip", fmt::format("list '{}' has {} values, the others {}", it->first.Scalar(), d.size(), z.size()));
      if (z.empty()) z.resize(d.size());
      for (std::size_t i = 0; i < d.size(); ++i) z[i].push_back(d[i][0]);
    }
    dims.push_back(z);
  }
  YAML::Node extra = m.raw("points");
  {
    // Count first: a huge grid is refused before a single point is built.
    long double count = dims.empty() ? 0 : 1;
    std::string sizes;
    for (const Dimension& d : dims) {
      count *= static_cast<long double>(d.size());
      sizes += (sizes.empty() ? "" : " x ") + std::to_string(d.size());
    }
    if (extra.IsDefined() && extra.IsSequence()) {
      count += static_cast<long double>(extra.size());
      sizes += (sizes.empty() ? "" : " + ") + std::to_string(extra.size());
    }
    if (s.repeat > 1) {
      count *= static_cast<long double>(s.repeat);
      sizes = "(" + sizes + fmt::format(") x {} repetitions", s.repeat);
    }
    if (count > static_cast<long double>(kMaxSweepPoints))
      m.fail_here(fmt::format("the sweep has {:.4g} {} ({}), above the limit of {} {} per sweep; split it "
                              "into several sweep files",
                              static_cast<double>(count), s.repeat > 1 ? "runs" : "points", sizes, kMaxSweepPoints,
                              s.repeat > 1 ? "runs" : "points"));
  }
  std::vector<std::vector<Override>> combos;
  if (!dims.empty()) {
    combos = {{}};
    for (const Dimension& d : dims) {
      std::vector<std::vector<Override>> next;
      for (const auto& c : combos)
        for (const auto& alt : d) {
          auto x = c;
          x.insert(x.end(), alt.begin(), alt.end());
          next.push_back(std::move(x));
        }
      combos = std::move(next);
    }
  }
  if (extra.IsDefined() && !extra.IsNull()) {
    if (!extra.IsSequence()) m.fail("points", "expected a list of maps of key.path: value");
    for (std::size_t i = 0; i < extra.size(); ++i)
      combos.push_back(read_map(extra[i], path, fmt::format("points[{}]", i)));
  }
  if (combos.empty()) m.fail_here("a sweep needs `grid`, `zip` or `points`");
  m.finish();

  for (std::size_t i = 0; i < combos.size(); ++i) {
    SweepPoint p;
    p.overrides = combos[i];
    std::string key;
    for (const auto& [k, v] : p.overrides) {
      key += k + "=" + v + ";";
      if (std::find(s.swept_keys.begin(), s.swept_keys.end(), k) == s.swept_keys.end()) s.swept_keys.push_back(k);
    }
    p.point = fmt::format("p{:04}-{:08x}", i, fnv1a(key));
    for (std::size_t r = 0; r < s.repeat; ++r) {
      SweepPoint run = p;
      run.index = i * s.repeat + r;
      run.repetition = r;
      run.id = s.repeat == 1 ? p.point : fmt::format("{}-r{:03}", p.point, r);
      s.points.push_back(std::move(run));
    }
  }
  return s;
}

SweepSpec repeat_sweep(const std::string& scenario, const std::string& name, std::size_t repeat) {
  if (repeat < 1 || repeat > kMaxRepeat)
    throw InputError(fmt::format("--repeat {}: expected 1 to {} runs", repeat, kMaxRepeat));
  SweepSpec s;
  s.file = scenario;
  s.name = name;
  s.base = scenario;
  s.repeat = repeat;
  SweepPoint p;
  p.point = fmt::format("p{:04}-{:08x}", 0, fnv1a(""));
  for (std::size_t r = 0; r < repeat; ++r) {
    SweepPoint run = p;
    run.index = r;
    run.repetition = r;
    run.id = repeat == 1 ? p.point : fmt::format("{}-r{:03}", p.point, r);
    s.points.push_back(std::move(run));
  }
  return s;
}

std::string SweepSpec::identity() const {
  std::error_code ec;
  std::filesystem::path b = std::filesystem::weakly_canonical(base, ec);
  std::string text = name + "\n" + (ec ? base : b.string()) + "\n";
  for (const SweepPoint& p : points) {
    text += std::to_string(p.index) + " " + p.id;
    for (const auto& [k, v] : p.overrides) text += " " + k + "=" + v;
    text += "\n";
  }
  return hash_hex(text);
}

std::string hash_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const std::string k = slash == std::string::npos ? text : text.substr(0, slash);
  const std::string n = slash == std::string::npos ? "" : text.substr(slash + 1);
  if (!all_digits(k) || !all_digits(n) || std::stoul(n) == 0 || std::stoul(k) == 0 || std::stoul(k) > std::stoul(n))
    throw InputError(fmt::format("--shard {}: expected K/N, the K-th of N shards with 1 <= K <= N, e.g. 3/16", text));
  return Shard{std::stoul(k), std::stoul(n)};
}

std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, const std::string& shard) {
  if (shard.empty()) return points;
  const Shard s = parse_shard(shard);
  std::vector<SweepPoint> out;
  for (const auto& p : points)
    if (s.contains(p.index)) out.push_back(p);
  return out;
}

}  // namespace servesim
