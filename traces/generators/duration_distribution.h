// DurationDistribution: think times and tool-call times, in seconds.
//   {dist: fixed, value: S} | {dist: exponential, mean: S} |
//   {dist: uniform, min: A, max: B} | {dist: lognormal, median: M, sigma: S}
// A bare number means fixed. Samples are in [0, kMaxDurationS] and converted to integer ns.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "sim/core/rng.h"
#include "sim/core/time.h"

namespace servesim {

// The largest duration a sample takes (116 days); parameters above it are refused.
inline constexpr double kMaxDurationS = 1e7;

struct DurationDistribution {
  enum class Kind { kFixed, kExponential, kUniform, kLognormal } kind = Kind::kFixed;
  double value = 0;            // fixed
  double mean = 0;             // exponential
  double min = 0, max = 0;     // uniform
  double median = 1, sigma = 1;  // lognormal

  static DurationDistribution exponential(double mean);

  Time sample(Rng& rng) const;
  YAML::Node resolved() const;
};

// Reads `key` of `m` (bare number or map); `def` when absent.
DurationDistribution parse_duration(YamlMap& m, const std::string& key, const DurationDistribution& def);

// `dist:` of the map form: fixed, exponential, uniform or lognormal.
const OptionTable<DurationDistribution>& duration_kind_options();

// A duration-distribution row of S's table (as length_column()).
template <class S>
OptionCustom<S> duration_column(DurationDistribution S::* member) {
  return custom<S>([member](YamlMap& m, const char* key, S& s) { s.*member = parse_duration(m, key, s.*member); },
                   [member](const S& s) { return (s.*member).resolved(); });
}

}  // namespace servesim
