#include "traces/generators/length_distribution.h"

#include <algorithm>
#include <cmath>

#include "sim/core/time.h"
#include "traces/generators/distribution_key.h"
#include "traces/readers/field_limits.h"

namespace servesim {

LengthDistribution LengthDistribution::fixed(std::int64_t n) {
  LengthDistribution d;
  d.value = static_cast<double>(n);
  return d;
}

LengthDistribution LengthDistribution::uniform(std::int64_t min, std::int64_t max) {
  LengthDistribution d;
  d.kind = Kind::kUniform;
  d.min = min;
  d.max = max;
  return d;
}

LengthDistribution LengthDistribution::lognormal(double median, double sigma, std::int64_t max) {
  LengthDistribution d;
  d.kind = Kind::kLognormal;
  d.median = median;
  d.sigma = sigma;
  d.max = max;
  return d;
}

const OptionTable<LengthDistribution>& length_kind_options() {
  static const OptionTable<LengthDistribution> t = {
      {"dist", one_of(&LengthDistribution::kind, "length distribution", {"fixed", "uniform", "lognormal"}), OptionRange::kAny,
       "fixed {value}, uniform {min, max} or lognormal {median, sigma, min, max}"},
  };
  return t;
}

std::int64_t LengthDistribution::sample(Rng& rng) const {
  switch (kind) {
    case Kind::kFixed: return static_cast<std::int64_t>(value);
    case Kind::kUniform: return min + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max - min + 1)));
    case Kind::kLognormal: {
      // Clamp in double first: a far tail (or inf) must not reach llround.
      double x = median * std::exp(sigma * rng.normal());
      x = std::clamp(x, static_cast<double>(std::max<std::int64_t>(min, 1)), static_cast<double>(max));
      return std::clamp<std::int64_t>(round_half_away(x), std::max<std::int64_t>(min, 1), max);  // std::llround, inline
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
  switch (kind) {
    case Kind::kFixed: return distribution_yaml("fixed", {{"value", YAML::Node(static_cast<std::int64_t>(value))}});
    case Kind::kUniform: return distribution_yaml("uniform", {{"min", YAML::Node(min)}, {"max", YAML::Node(max)}});
    case Kind::kLognormal:
      return distribution_yaml("lognormal", {{"median", YAML::Node(median)},
                                             {"sigma", YAML::Node(sigma)},
                                             {"min", YAML::Node(min)},
                                             {"max", YAML::Node(max)}});
  }
  return YAML::Node();
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
  auto scalar = [](YamlMap& at, const std::string& k) {
    LengthDistribution d;
    d.kind = LengthDistribution::Kind::kFixed;
    d.value = static_cast<double>(tokens(at, k, 1));
    return d;
  };
  auto named = [](YamlMap& s) {
    LengthDistribution d;
    read_options(s, length_kind_options(), d);
    switch (d.kind) {
      case LengthDistribution::Kind::kFixed:
        d.value = static_cast<double>(tokens(s, "value", 1));
        break;
      case LengthDistribution::Kind::kUniform:
        d.min = tokens(s, "min", 1);
        d.max = s.require<std::int64_t>("max");
        if (d.max > kMaxTraceTokens) s.fail("max", fmt::format("must be at most {} tokens, got {}", kMaxTraceTokens, d.max));
        if (d.max < d.min) s.fail("max", fmt::format("must be >= min ({})", d.min));
        break;
      case LengthDistribution::Kind::kLognormal:
        d.median = s.positive("median", 256);
        if (d.median > static_cast<double>(kMaxTraceTokens))
          s.fail("median", fmt::format("must be at most {} tokens, got {}", kMaxTraceTokens, d.median));
        d.sigma = s.get<double>("sigma", 1.0);
        if (!(d.sigma >= 0 && d.sigma <= 10)) s.fail("sigma", fmt::format("must be in [0, 10], got {}", d.sigma));
        d.min = tokens(s, "min", 1);
        d.max = tokens(s, "max", 1 << 20);
        if (d.max < d.min) s.fail("max", fmt::format("must be >= min ({})", d.min));
        break;
    }
    return d;
  };
  return parse_distribution(m, key, def, scalar, named);
}

}  // namespace servesim
