// CostModel: predicts the latency of one serving iteration on one worker.
// The engine asks once per iteration; policies that need estimates (least-load
// routing, Preble's L/M/P terms) ask the same interface.
//
// Contract: iteration_time() is a pure function of the batch (no hidden state,
// no randomness), returns > 0 for a non-empty batch, and is monotone
// non-decreasing in every token count -- except where a measured profile shows
// the GPU itself is faster with more tokens: the calibrated backend keeps the
// GEMM dips that the gemm_dense bench family measured (cuBLASLt's algorithm
// choice by M; monotone_curve.h), so its price can drop as M grows past one.
// identity() names the backend and its
// data source; calibrated() is false for analytic backends, whose reports say
// "uncalibrated". parts() splits an iteration's time over the named parts
// of the operation list (operation_list.h), µs; the parts sum to the
// iteration time (before rounding to ns). Backends without a split put it
// all under Part::kOther.
#pragma once
#include <memory>
#include <string>

#include "costmodel/batch_shape.h"
#include "costmodel/operation_list.h"
#include "sim/core/time.h"

namespace servesim {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual Time iteration_time(const BatchShape& batch) const = 0;
  virtual std::string identity() const = 0;
  virtual bool calibrated() const = 0;
  // False: for a batch that carries decode_sums, iteration_time() reads only the
  // number of decode contexts, never their values. The engine's decode lane then
  // leaves the values unwritten unless someone reads the batch (sim/worker.h,
  // last_batch). True (the default) for any model that may read them.
  virtual bool reads_decode_contexts() const { return true; }
  virtual PartTimes parts(const BatchShape& batch) const {
    PartTimes p{};
    p[static_cast<std::size_t>(Part::kOther)] = time_to_seconds(iteration_time(batch)) * 1e6;
    return p;
  }
};

}  // namespace servesim
