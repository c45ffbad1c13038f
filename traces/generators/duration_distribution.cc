// Think/tool time distributions; see duration_distribution.h.
#include "traces/generators/duration_distribution.h"

#include <cmath>

namespace servesim {

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
  YAML::Node n;
  switch (kind) {
    case Kind::kFixed:
      n["dist"] = "fixed";
      n["value"] = value;
      break;
    case Kind::kExponential:
      n["dist"] = "exponential";
      n["mean"] = mean;
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
      break;
  }
  return n;
}

DurationDistribution parse_duration(YamlMap& m, const std::string& key, const DurationDistribution& def) {
  if (!m.has(key)) {
    m.get<std::string>(key, "");  // mark as known
    return def;
  }
  DurationDistribution d;
  // Parameters are at most kMaxDurationS (the cap of one sample) instead of being
  // silently capped (think_time_s: 1e300 was 1e7 s).
  if (m.node()[key].IsScalar()) {
    d.value = m.in_range(key, 0, 0, kMaxDurationS, "s");
    return d;
  }
  YamlMap s = m.map(key);
  std::string dist = s.require<std::string>("dist");
  if (dist == "fixed") {
    d.value = s.in_range("value", 0, 0, kMaxDurationS, "s");
  } else if (dist == "exponential") {
    d.kind = DurationDistribution::Kind::kExponential;
    d.mean = s.positive("mean", 1);
    if (d.mean > kMaxDurationS) s.in_range("mean", 1, 0, kMaxDurationS, "s");
  } else if (dist == "uniform") {
    d.kind = DurationDistribution::Kind::kUniform;
    d.min = s.in_range("min", 0, 0, kMaxDurationS, "s");
    d.max = s.require<double>("max");
    if (d.max > kMaxDurationS) s.in_range("max", 0, 0, kMaxDurationS, "s");
    if (d.min < 0 || d.max < d.min) s.fail("max", "need 0 <= min <= max");
  } else if (dist == "lognormal") {
    d.kind = DurationDistribution::Kind::kLognormal;
    d.median = s.positive("median", 1);
    if (d.median > kMaxDurationS) s.in_range("median", 1, 0, kMaxDurationS, "s");
    d.sigma = s.in_range("sigma", 1.0, 0, 10, "");
  } else {
    s.fail("dist", fmt::format("unknown duration distribution '{}'; expected fixed, exponential, uniform or lognormal",
                               dist));
  }
  s.finish();
  return d;
}

}  // namespace servesim
