// RooflineCostModel: an analytic, UNCALIBRATED estimate of one iteration from
// the hardware file. Every report that uses it says "uncalibrated".
//
// model: hardware (default; docs/costmodel.md "Roofline") prices each part of
// the operation list (operation_list.h) as one kernel:
//   GEMM         max(bytes / (BW·bandwidth_fraction), charged FLOPs / (peak·gemm_flops_fraction)),
//                charged = whole waves of whole output tiles over `sms` (tile and wave
//                quantisation), for the cheapest of four tiles derived from the
//                hardware's largest tile (tm×tn, tn×tm, tm×tn/2, tm/2×tn/2), with split-K
//                when the tiles do not fill the SMs;
//   prefill attention  max(FLOPs / (peak·prefill_attention_flops_fraction·fill),
//                bytes / (BW·bandwidth_fraction)), fill = share of the last wave's SMs
//                busy when query tiles of 128 rows × heads run in waves over `sms`;
//   decode attention   max(bytes / (BW·decode_attention_bandwidth_fraction·fill), FLOPs / peak·...),
//                fill = min(1, split-KV items (256 tokens × KV head) / sms);
//   elementwise  bytes / (BW·bandwidth_fraction);   all-reduce: bytes / interconnect;
// each kernel at least min_kernel_us (the GPU-side latency floor) and, when
// launched eagerly, at least kernel_launch_us (the host's launch rate bounds
// short kernels: launch cost only where launches happen). With
// cuda_graph_decode, a decode-only iteration replays a graph: one launch per
// iteration (Part::kLaunch) and no per-kernel launch bound. Plus
// iteration_overhead_us of host work (Part::kOverhead).
//
// model: flat is the roofline as of commit c8eba2e (one
// compute/memory efficiency pair for every kernel, kernels_per_layer launches
// per layer, no floors, no norms/RoPE/activation kernels); kept so that tests
// and studies can pin the old numbers.
//
// Attention is priced by the method's pricer (attention_pricer.h): the
// roofline prices the dense kernels only; a sparse method is an InputError.
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "costmodel/attention_pricer.h"
#include "costmodel/cost_model.h"
#include "costmodel/hardware_spec.h"
#include "costmodel/model_spec.h"
#include "costmodel/priced_cost_model.h"

namespace servesim {

// hardware: per-part efficiencies of the hardware file; flat: one efficiency pair.
enum class RooflineModel : std::uint8_t { kHardware, kFlat };

struct RooflineOptions {
  RooflineModel model = RooflineModel::kHardware;
  bool cuda_graph_decode = false;     // decode-only iterations replay a CUDA graph
  std::string knobs;                  // knob YAML applied over the hardware by the config parser ("" = none)
  double compute_efficiency = 0.7;    // flat: achieved / peak tensor FLOP/s
  double memory_efficiency = 0.8;     // flat: achieved / peak HBM bandwidth
  double iteration_overhead_us = 50;  // scheduler + host work per iteration (both models)
  int kernels_per_layer = 8;          // flat: launches per layer
  int tp = 1;                         // tensor-parallel degree of the worker
  bool operator==(const RooflineOptions&) const = default;
};

// Seconds of a GEMM's compute at `rate` FLOP/s per GPU under tile and wave
// quantisation: the cheapest of the four tiles derived from tm×tn, whole tiles
// in whole waves over `sms`, split-K (slices of >= 256 of k) while the tiles
// leave SMs idle (its reduction not charged).
double roofline_gemm_compute_seconds(double m, double n, double k, int tm, int tn, int sms, double rate);
// Share of the SMs busy over the waves of `ctas` thread blocks: ctas / (waves·sms).
inline double wave_fill(double ctas, int sms) {
  return ctas <= 0 ? 1.0 : ctas / (std::ceil(ctas / sms) * sms);
}

// The decode-time shortcut's rounding check (roofline_cost_model.cc), for tests:
// the time of an iteration of `approx_us` µs when every sum within 2^-47 of it
// (relative) rounds to the same nanosecond, else nullopt.
std::optional<Time> roofline_time_if_clear_for_test(double approx_us);

class RooflineCostModel final : public CostModel, public TablePricedBackend {
 public:
  // Throws InputError for a model other than hardware|flat or a sparse attention method.
  RooflineCostModel(ModelSpec model, HardwareSpec hw, RooflineOptions opt, const AttentionMethods& attention = {});
  Time iteration_time(const BatchShape& batch) const override;
  PartTimes parts(const BatchShape& batch) const override;
  std::string identity() const override;
  bool calibrated() const override { return false; }
  // With the default methods the dense pricers and the operation list take the
  // decode sums when a batch has them.
  bool reads_decode_contexts() const override { return !dense_methods_; }

  // TablePricedBackend (priced_cost_model.h): the hardware model is a sum of parts.
  bool table_priceable() const override { return !flat_; }
  bool prefill_sensitive() const override { return opt_.cuda_graph_decode; }
  void attention_parts(const BatchShape& batch, PartTimes& p) const override;
  Time time_of(const PartTimes& p) const override;
  // The sum's first parts, before attention_prefill (every part is added in Part order).
  double row_stem(const PartTimes& p) const override;
  Time time_of_stem(const PartTimes& p, double stem) const override;
  // The parts after attention, summed (any order; decode_time's shortcut).
  double row_tail(const PartTimes& p) const override;
  Time decode_time(const BatchShape& b, const PartTimes& row, double stem, double tail) const override;

  // One kernel of the hardware model, µs, without the floors (tests, docs).
  double gemm_kernel_us(double m, double n, double k) const;
  double elementwise_kernel_us(double bytes) const;
  // The floor of one kernel: eager (launch-bound) or inside a CUDA graph.
  double kernel_floor_us(bool graph) const;

  // Flat model components in seconds (kept for its tests).
  double gemm_seconds(double m, double n, double k) const;
  double linear_seconds_per_layer(double tokens) const;

 private:
  class DenseKernels;
  PartTimes hardware_parts(const BatchShape& batch) const;
  PartTimes flat_parts(const BatchShape& batch) const;
  // A decode-only iteration replays a CUDA graph (cuda_graph_decode), with its own pricers.
  bool graph_replay(const BatchShape& b) const { return opt_.cuda_graph_decode && b.prefills.empty(); }
  const AttentionPricers& pricers(const BatchShape& b) const { return graph_replay(b) ? graph_ : eager_; }

  ModelSpec m_;
  HardwareSpec hw_;
  RooflineOptions opt_;
  bool flat_ = false;
  double flops_per_s_;  // flat
  double bytes_per_s_;  // flat
  // The batch's decode attention from its decode sums, as DenseDecode prices it
  // (dense_pricer.cc), without the pricers' virtual calls; REQUIRES b.decode_sums
  // and no prefills (decode_time's batches: the graph's kernels with cuda_graph_decode).
  double dense_decode_from_sums(const BatchShape& b) const;
  // The attention methods are the default ones (dense prefill and decode, no KV method).
  bool dense_methods_ = false;
  // The dense kernels and the pricers built on them: eager, and inside a graph.
  std::unique_ptr<DenseAttentionKernels> dense_eager_, dense_graph_;
  AttentionPricers eager_, graph_;
};

}  // namespace servesim
