// LengthDistribution: token counts for synthetic prompts and outputs.
//   {dist: fixed, value: N}
//   {dist: uniform, min: A, max: B}                  (inclusive)
//   {dist: lognormal, median: M, sigma: S[, min, max]}  M·exp(S·Z), clamped
// A bare number means fixed. Samples are integers >= 1.
#pragma once
#include <cstdint>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_map.h"
#include "sim/core/rng.h"

namespace servesim {

struct LengthDistribution {
  enum class Kind { kFixed, kUniform, kLognormal } kind = Kind::kFixed;
  double value = 256;  // fixed
  std::int64_t min = 1, max = 1 << 20;
  double median = 256, sigma = 1.0;

  std::int64_t sample(Rng& rng) const;
  double mean() const;  // analytic mean (lognormal: before clamping)
  YAML::Node resolved() const;
};

// Reads `key` of `m` (bare number or map); `def` when absent.
LengthDistribution parse_length(YamlMap& m, const std::string& key, const LengthDistribution& def);

}  // namespace servesim
