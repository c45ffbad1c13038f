#include "traces/generators/length_distribution.h"

#include <algorithm>
#include <cmath>

#include "traces/readers/field_limits.h"

namespace servesim {

std::int64_t LengthDistribution::sample(Rng& rng) const {
  switch (kind) {
    case Kind::kFixed: return static_cast<std::int64_t>(value);
    case Kind::kUniform: return min + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max - min + 1)));
    case Kind::kLognormal: {
      // Clamp in double first: a far tail (or inf) must not reach llround.
      double x = median * std::exp(sigma * rng.normal());
      x = std::clamp(x, static_cast<double>(std::max<std::int64_t>(min, 1)), static_cast<double>(max));
      return std::clamp<std::int64_t>(std::llround(x), std::max<std::int64_t>(min, 1), max);
    }
  }
  return 1;
}

double LengthDistribution::mean() const {
  switch (kind) {
    case Kind::kFixed: return value;
    case Kind::kUniform: return 0.5 * static_cast<double>(min + max);
    case Kind::kLognormal: return median * std::exp(0.5 * sigma * sigma);
  }
  return 0;
}

YAML::Node LengthDistribution::resolved() const {
  YAML::Node n;
  switch (kind) {
    case Kind::kFixed:
      n["dist"] = "fixed";
      n["value"] = static_cast<std::int64_t>(value);
      break;
    case Kind::kUniform:
      n["dist"] = "uniform";
      n["min"] = min;
      n["max"] = max;
      break;
    case Kind::kLognormal:
      n["dist"] = "lognormal";
      n["median"] = median;
      n["sigma"] = sigma;
      n["min"] = min;
      n["max"] = max;
      break;
  }
  return n;
}

namespace {

// Token counts of a generated request: 1 .. kMaxTraceTokens, as in traces.
std::int64_t tokens(YamlMap& m, const std::string& key, std::int64_t def) {
  const std::int64_t v = m.get<std::int64_t>(key, def);
  if (v <= 0) m.fail(key, fmt::format("must be a positive integer, got {}", v));
  if (v > kMaxTraceTokens) m.fail(key, fmt::format("must be at most {} tokens, got {}", kMaxTraceTokens, v));
  return v;
}

}  // namespace

LengthDistribution parse_length(YamlMap& m, const std::string& key, const LengthDistribution& def) {
  if (!m.has(key)) {
    m.get<std::string>(key, "");  // mark as known
    return def;
  }
  LengthDistribution d;
  if (m.node()[key].IsScalar()) {
    d.kind = LengthDistribution::Kind::kFixed;
    d.value = static_cast<double>(tokens(m, key, 1));
    return d;
  }
  YamlMap s = m.map(key);
  std::string dist = s.require<std::string>("dist");
  if (dist == "fixed") {
    d.kind = LengthDistribution::Kind::kFixed;
    d.value = static_cast<double>(tokens(s, "value", 1));
  } else if (dist == "uniform") {
    d.kind = LengthDistribution::Kind::kUniform;
    d.min = tokens(s, "min", 1);
    d.max = s.require<std::int64_t>("max");
    if (d.max > kMaxTraceTokens) s.fail("max", fmt::format("must be at most {} tokens, got {}", kMaxTraceTokens, d.max));
    if (d.max < d.min) s.fail("max", fmt::format("must be >= min ({})", d.min));
  } else if (dist == "lognormal") {
    d.kind = LengthDistribution::Kind::kLognormal;
    d.median = s.positive("median", 256);
    if (d.median > static_cast<double>(kMaxTraceTokens))
      s.fail("median", fmt::format("must be at most {} tokens, got {}", kMaxTraceTokens, d.median));
    d.sigma = s.get<double>("sigma", 1.0);
    if (!(d.sigma >= 0 && d.sigma <= 10)) s.fail("sigma", fmt::format("must be in [0, 10], got {}", d.sigma));
    d.min = tokens(s, "min", 1);
    d.max = tokens(s, "max", 1 << 20);
    if (d.max < d.min) s.fail("max", fmt::format("must be >= min ({})", d.min));
  } else {
    s.fail("dist", fmt::format("unknown length distribution '{}'; expected fixed, uniform or lognormal", dist));
  }
  s.finish();
  return d;
}

}  // namespace servesim
