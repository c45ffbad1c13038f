// FixedCostModel: an affine per-iteration cost, for tests and analytic checks:
//   time = base + per_prefill_token × prefill tokens + per_decode_token × decode tokens.
// With per-token terms at zero every iteration takes exactly `base`.
#pragma once
#include <fmt/format.h>

#include "costmodel/cost_model.h"

namespace servesim {

struct FixedCostOptions {
  Time base = 10 * kNsPerMs;
  Time per_prefill_token = 0;
  Time per_decode_token = 0;
  bool operator==(const FixedCostOptions&) const = default;
};

class FixedCostModel final : public CostModel {
 public:
  explicit FixedCostModel(FixedCostOptions o) : o_(o) {}
  Time iteration_time(const BatchShape& b) const override {
    if (b.empty()) return 0;
    return o_.base + o_.per_prefill_token * b.prefill_tokens() + o_.per_decode_token * b.decode_tokens();
  }
  std::string identity() const override {
    return fmt::format("fixed (uncalibrated): base={}ns per_prefill_token={}ns per_decode_token={}ns", o_.base,
                       o_.per_prefill_token, o_.per_decode_token);
  }
  bool calibrated() const override { return false; }

 private:
  FixedCostOptions o_;
};

}  // namespace servesim
