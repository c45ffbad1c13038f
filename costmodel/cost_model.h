// CostModel: predicts the latency of one serving iteration on one worker.
// The engine asks once per iteration; policies that need estimates (least-load
// routing, Preble's L/M/P terms) ask the same interface.
//
// Contract: iteration_time() is a pure function of the batch (no hidden state,
// no randomness), returns > 0 for a non-empty batch, and is monotone
// non-decreasing in every token count. identity() names the backend and its
// data source; calibrated() is false for analytic backends, whose reports say
// "uncalibrated".
#pragma once
#include <memory>
#include <string>

#include "costmodel/batch_shape.h"
#include "sim/core/time.h"

namespace servesim {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual Time iteration_time(const BatchShape& batch) const = 0;
  virtual std::string identity() const = 0;
  virtual bool calibrated() const = 0;
};

}  // namespace servesim
