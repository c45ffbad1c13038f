// ExplainingCostModel: wraps the engine's cost model of one worker for
// `servesim run --explain` and adds up, over every iteration it prices, the
// split of the iteration's time by part (CostModel::parts(), operation_list.h).
// It returns exactly the inner model's times, so a run with --explain
// simulates the same thing; the sums are side records (mutable), read after
// the run. Policies must be given the inner model (their estimates are not
// iterations). Not thread-safe: one per worker, used by one engine.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "costmodel/cost_model.h"

namespace servesim {

class ExplainingCostModel final : public CostModel {
 public:
  explicit ExplainingCostModel(std::shared_ptr<const CostModel> inner) : inner_(std::move(inner)) {}
  Time iteration_time(const BatchShape& b) const override {
    const Time t = inner_->iteration_time(b);
    if (t > 0) {
      const PartTimes p = inner_->parts(b);
      for (std::size_t i = 0; i < kPartCount; ++i) busy_us_[i] += p[i];
      ++iterations_;
    }
    return t;
  }
  PartTimes parts(const BatchShape& b) const override { return inner_->parts(b); }
  std::string identity() const override { return inner_->identity(); }
  bool calibrated() const override { return inner_->calibrated(); }

  const PartTimes& busy_us() const { return busy_us_; }  // µs by part, summed over iterations
  std::int64_t iterations() const { return iterations_; }

 private:
  std::shared_ptr<const CostModel> inner_;
  mutable PartTimes busy_us_{};
  mutable std::int64_t iterations_ = 0;
};

}  // namespace servesim
