// RooflineCostModel: an analytic, UNCALIBRATED estimate of one iteration from
// the hardware datasheet: every GEMM and attention kernel takes
// max(FLOPs / (peak × compute_efficiency), bytes / (bandwidth × memory_efficiency)),
// summed over layers, plus a tensor-parallel all-reduce per attention and MLP
// block, kernel-launch overhead per layer and a fixed per-iteration overhead.
// Every report that uses it says "uncalibrated".
//
// Attention is priced by the method's pricer (costmodel/*_pricer.cc): the
// roofline prices only the dense kernels (DenseAttentionKernels below); a
// sparse method has no roofline and is an InputError.
#pragma once
#include <memory>

#include "costmodel/attention_pricer.h"
#include "costmodel/cost_model.h"
#include "costmodel/hardware_spec.h"
#include "costmodel/model_spec.h"

namespace servesim {

struct RooflineOptions {
  double compute_efficiency = 0.7;   // achieved / peak tensor FLOP/s (typical large GEMM)
  double memory_efficiency = 0.8;    // achieved / peak HBM bandwidth (typical streaming kernel)
  double iteration_overhead_us = 50; // scheduler + sampling + host work per iteration
  int kernels_per_layer = 8;         // launches per layer (norms, GEMMs, attention, activations)
  int tp = 1;                        // tensor-parallel degree of the worker
  bool operator==(const RooflineOptions&) const = default;
};

class RooflineCostModel final : public CostModel {
 public:
  RooflineCostModel(ModelSpec model, HardwareSpec hw, RooflineOptions opt, const AttentionMethods& attention = {});
  Time iteration_time(const BatchShape& batch) const override;
  std::string identity() const override;
  bool calibrated() const override { return false; }

  // Components in seconds, exposed for tests and docs.
  double gemm_seconds(double m, double n, double k) const;
  double linear_seconds_per_layer(double tokens) const;

 private:
  class DenseKernels;  // DenseAttentionKernels: one layer's dense launch, µs

  ModelSpec m_;
  HardwareSpec hw_;
  RooflineOptions opt_;
  double flops_per_s_;
  double bytes_per_s_;
  std::unique_ptr<DenseAttentionKernels> dense_;  // the pricers point here
  AttentionPricers attention_;
};

}  // namespace servesim
