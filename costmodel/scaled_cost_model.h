// ScaledCostModel: another cost model's iteration times times a constant factor
// (cost_model.time_scale): "what if every iteration ran s times as long as the model
// prices it". The engine runs on it; policies keep estimating with the unscaled model
// (configs/run_builder.cc). Used to measure how sensitive a run's latencies are to
// the cost model's validated per-iteration error (docs/costmodel.md, "How the
// per-iteration error reaches end-to-end latencies").
//
// A pure function of the batch (CostModel's contract), monotone when the inner model is.
#pragma once
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "costmodel/cost_model.h"

namespace servesim {

class ScaledCostModel final : public CostModel {
 public:
  // REQUIRES: scale > 0.
  ScaledCostModel(std::shared_ptr<const CostModel> inner, double scale) : inner_(std::move(inner)), scale_(scale) {}

  Time iteration_time(const BatchShape& b) const override {
    const Time t = inner_->iteration_time(b);
    if (t <= 0) return t;
    return std::max<Time>(1, static_cast<Time>(std::llround(static_cast<double>(t) * scale_)));
  }
  std::string identity() const override { return fmt::format("{} x time_scale={}", inner_->identity(), scale_); }
  bool calibrated() const override { return inner_->calibrated(); }
  PartTimes parts(const BatchShape& b) const override {
    PartTimes p = inner_->parts(b);
    for (double& x : p) x *= scale_;
    return p;
  }

 private:
  std::shared_ptr<const CostModel> inner_;
  double scale_;
};

}  // namespace servesim
