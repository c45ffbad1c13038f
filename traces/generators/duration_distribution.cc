// Think/tool time distributions; see duration_distribution.h.
#include "traces/generators/duration_distribution.h"

#include <cmath>

#include "traces/generators/distribution_key.h"

namespace servesim {

DurationDistribution DurationDistribution::exponential(double mean) {
  DurationDistribution d;
  d.kind = Kind::kExponential;
  d.mean = mean;
  return d;
}

const OptionTable<DurationDistribution>& duration_kind_options() {
  static const OptionTable<DurationDistribution> t = {
      {"dist", one_of(&DurationDistribution::kind, "duration distribution", {"fixed", "exponential", "uniform", "lognormal"}),
       OptionRange::kAny, "fixed {value}, exponential {mean}, uniform {min, max} or lognormal {median, sigma}, s"},
  };
  return t;
}

Time DurationDistribution::sample(Rng& rng) const {
  double s = 0;
  switch (kind) {
    case Kind::kFixed: s = value; break;
    case Kind::kExponential: s = rng.exponential(mean); break;
    case Kind::kUniform: s = rng.uniform(min, max); break;
    case Kind::kLognormal: s = median * std::exp(sigma * rng.normal()); break;
  }
  return seconds_to_time(std::max(0.0, std::min(s, kMaxDurationS)));
}

YAML::Node DurationDistribution::resolved() const {
  switch (kind) {
    case Kind::kFixed: return distribution_yaml("fixed", {{"value", YAML::Node(value)}});
    case Kind::kExponential: return distribution_yaml("exponential", {{"mean", YAML::Node(mean)}});
    case Kind::kUniform: return distribution_yaml("uniform", {{"min", YAML::Node(min)}, {"max", YAML::Node(max)}});
    case Kind::kLognormal:
      return distribution_yaml("lognormal", {{"median", YAML::Node(median)}, {"sigma", YAML::Node(sigma)}});
  }
  return YAML::Node();
}

DurationDistribution parse_duration(YamlMap& m, const std::string& key, const DurationDistribution& def) {
  // Parameters are at most kMaxDurationS (the cap of one sample) instead of being
  // silently capped (think_time_s: 1e300 was 1e7 s).
  auto scalar = [](YamlMap& at, const std::string& k) {
    DurationDistribution d;
    d.value = at.in_range(k, 0, 0, kMaxDurationS, "s");
    return d;
  };
  auto named = [](YamlMap& s) {
    DurationDistribution d;
    read_options(s, duration_kind_options(), d);
    switch (d.kind) {
      case DurationDistribution::Kind::kFixed:
        d.value = s.in_range("value", 0, 0, kMaxDurationS, "s");
        break;
      case DurationDistribution::Kind::kExponential:
        d.mean = s.positive("mean", 1);
        if (d.mean > kMaxDurationS) s.in_range("mean", 1, 0, kMaxDurationS, "s");
        break;
      case DurationDistribution::Kind::kUniform:
        d.min = s.in_range("min", 0, 0, kMaxDurationS, "s");
        d.max = s.require<double>("max");
        if (d.max > kMaxDurationS) s.in_range("max", 0, 0, kMaxDurationS, "s");
        if (d.min < 0 || d.max < d.min) s.fail("max", "need 0 <= min <= max");
        break;
      case DurationDistribution::Kind::kLognormal:
        d.median = s.positive("median", 1);
        if (d.median > kMaxDurationS) s.in_range("median", 1, 0, kMaxDurationS, "s");
        d.sigma = s.in_range("sigma", 1.0, 0, 10, "");
        break;
    }
    return d;
  };
  return parse_distribution(m, key, def, scalar, named);
}

}  // namespace servesim
