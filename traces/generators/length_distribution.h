// LengthDistribution: token counts for synthetic prompts and outputs.
//   {dist: fixed, value: N}
//   {dist: uniform, min: A, max: B}                  (inclusive)
//   {dist: lognormal, median: M, sigma: S[, min, max]}  M·exp(S·Z), clamped
// A bare number means fixed. Samples are integers >= 1.
#pragma once
#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "sim/core/rng.h"

namespace servesim {

struct LengthDistribution {
  enum class Kind { kFixed, kUniform, kLognormal } kind = Kind::kFixed;
  double value = 256;  // fixed
  std::int64_t min = 1, max = 1 << 20;
  double median = 256, sigma = 1.0;

  static LengthDistribution fixed(std::int64_t n);
  static LengthDistribution uniform(std::int64_t min, std::int64_t max);
  static LengthDistribution lognormal(double median, double sigma, std::int64_t max);

  std::int64_t sample(Rng& rng) const;
  double mean() const;  // analytic mean (lognormal: before clamping)
  YAML::Node resolved() const;
};

// Reads `key` of `m` (bare number or map); `def` when absent.
LengthDistribution parse_length(YamlMap& m, const std::string& key, const LengthDistribution& def);

// `dist:` of the map form: fixed, uniform or lognormal.
const OptionTable<LengthDistribution>& length_kind_options();

// A length-distribution row of S's table: a bare number or a map whose keys
// depend on `dist:` (read and written by hand, parse_length()); its default is
// the member's initializer.
template <class S>
OptionCustom<S> length_column(LengthDistribution S::* member) {
  return custom<S>([member](YamlMap& m, const char* key, S& s) { s.*member = parse_length(m, key, s.*member); },
                   [member](const S& s) { return (s.*member).resolved(); });
}

}  // namespace servesim
