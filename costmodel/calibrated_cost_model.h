// CalibratedCostModel: iteration latency composed from kernel fits of a
// measured profile (kernel_fits.h), for one model, TP degree, GPU and
// attention method (docs/costmodel.md, "Composition"):
//
// It prices the parts of the operation list (operation_list.h):
//   iteration = Σ_layers [ linear GEMMs(tokens) + elementwise(tokens) + TP all-reduce
//                          + prefill attention(chunks) + layer_overhead ]
//             + Σ_layers decode attention(contexts)      (Quest: 2 dense layers, the rest
//                                                        estimate + top-k + sparse decode)
//             + Σ_layers AnDPro scoring(completed prompts)
//             + LM head GEMM(rows producing logits) + embedding, final norm, sampling
//             + iteration_overhead
//
// Everything per layer is a fitted kernel of the profile except what the
// bench does not measure, which is stated: elementwise kernels are priced at
// the profile's measured copy bandwidth (norms, RoPE, SiLU, KV writes,
// embedding gather, final norm, sampling: their bytes in operation_list.h), the
// TP all-reduce at the hardware datasheet's interconnect, and the two
// overheads are options.
//
// Shapes the profile did not measure are resolved once, at construction:
// attention of another head shape (TP shard, GQA group) uses the fit of the
// nearest measured head shape with the same head_dim, evaluated at the
// target's own bytes and FLOPs; a GEMM weight shape that was not measured
// uses the nearest measured shape's curve scaled by n·k. Every such use is
// listed in identity() (so every report shows it); with allow_scaling=false
// it is an InputError instead. A sparse method whose families the profile lacks
// entirely (imported public tables) is derived from the profile's dense kernels
// (derived_sparse.h; noted in identity()); with allow_scaling=false, or a measured
// family missing the requested pattern or window, it is an InputError naming the
// family and the bench command.
//
// Dense prefill uses the fastest valid prefill variant the profile measured at
// the head shape (KernelFits::prefill_variant(): fa2, fa2_qreg, hopper_wgmma,
// ...); identity() names it when it is not fa2.
#pragma once
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/attention_pricer.h"
#include "costmodel/attention_method.h"
#include "costmodel/cost_model.h"
#include "costmodel/hardware_spec.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/model_spec.h"
#include "costmodel/priced_cost_model.h"

namespace servesim {

// cost_model.launch_excess: none prices every kernel at its isolated row (the bench times
// one launch alone between events); measured takes the profile's measured launch excess
// (KernelFits::launch_excess_us) off every row-priced kernel of the iteration, as each
// launch of a real forward pass is queued behind the previous one (an error when the
// profile lacks the ceilings' launch rows); auto (default): measured where the profile
// has those rows, none elsewhere (imported public tables: their rows are not isolated
// launches of ours).
enum class LaunchExcess { kAuto, kNone, kMeasured };
// cost_model.decode_attention: fit prices dense decode by the linear decode fit; rows by
// the profile's uniform decode rows where they exist for the head shape (decode_grid.h),
// the fit elsewhere (noted in identity()); auto (default): rows where the grid exists and
// the launch excess is taken off (the rows are isolated launches: the two go together,
// docs/costmodel.md "Decode rows and launch excess"), else the fit.
enum class DecodePricing { kAuto, kFit, kRows };

// (queued_us, the launch excess rule, is in attention_pricer.h.)

struct CalibratedOptions {
  double iteration_overhead_us = 50;  // host work per iteration: scheduling, sampling (not measured by the bench)
  double layer_overhead_us = 0;       // per layer, for launches the bench does not measure (0: CUDA graphs)
  double allreduce_latency_us = 10;   // per TP all-reduce, plus bytes / hardware interconnect (datasheet)
  bool allow_scaling = true;          // price unmeasured shapes by the scaling rules (false: reject)
  LaunchExcess launch_excess = LaunchExcess::kAuto;
  DecodePricing decode_attention = DecodePricing::kAuto;
  int tp = 1;                         // tensor-parallel degree of the worker
  bool operator==(const CalibratedOptions&) const = default;
};

class CalibratedCostModel final : public CostModel, public TablePricedBackend {
 public:
  // Throws InputError when the profile lacks a family or shape it needs.
  CalibratedCostModel(std::shared_ptr<const KernelFits> fits, ModelSpec model, HardwareSpec hw,
                      AttentionMethods attention, CalibratedOptions opt);

  Time iteration_time(const BatchShape& batch) const override;
  std::string identity() const override;
  // A synthetic profile is not a calibration.
  bool calibrated() const override { return !fits_->synthetic(); }
  // With the default methods the dense pricers and the operation list take the
  // decode sums when a batch has them (a sparse method may read the contexts).
  bool reads_decode_contexts() const override { return !attn_.all_dense(); }

  // One iteration's time by component, µs summed over layers.
  struct Breakdown {
    double linear = 0, elementwise = 0, allreduce = 0, prefill_attention = 0, decode_attention = 0, andpro = 0,
           lm_head = 0, overhead = 0;
    // total() in two steps, in the order of its additions: the groups a decode row fixes
    // (stem), then the rest (after_stem); the table-priced path keeps a row's stem.
    double stem() const { return linear + elementwise + allreduce; }
    double after_stem(double s) const { return s + prefill_attention + decode_attention + andpro + lm_head + overhead; }
    double total() const { return after_stem(stem()); }
  };
  Breakdown breakdown(const BatchShape& batch) const;  // parts() grouped as above
  static Breakdown group(const PartTimes& p);           // the same grouping of given parts

  // TablePricedBackend (priced_cost_model.h): every part but attention is a
  // function of the batch's token and logit-row counts, whatever the phase.
  bool table_priceable() const override { return true; }
  bool prefill_sensitive() const override { return false; }
  void attention_parts(const BatchShape& b, PartTimes& p) const override;
  Time time_of(const PartTimes& p) const override;
  // Breakdown::stem() and after_stem() of the parts' groups.
  double row_stem(const PartTimes& p) const override;
  Time time_of_stem(const PartTimes& p, double stem) const override;
  PartTimes parts(const BatchShape& batch) const override;
  // Unmeasured shapes priced by a scaling rule (empty when all were measured).
  const std::vector<std::string>& scaling_notes() const { return notes_; }

 private:
  using Gemm = GemmPrice;
  const FeatureFit* resolve_attention(const std::map<HeadShape, FeatureFit>& fits, const char* family);
  Gemm resolve_gemm(std::int64_t n, std::int64_t k, const std::string& layer);

  std::shared_ptr<const KernelFits> fits_;
  ModelSpec m_;
  HardwareSpec hw_;
  AttentionMethods attn_;
  CalibratedOptions opt_;
  HeadShape shape_;  // one GPU's share of the heads
  const FeatureFit* decode_ = nullptr;
  const FeatureFit* prefill_ = nullptr;
  std::string prefill_variant_ = "fa2";  // the variant prefill_ was fitted from
  Gemm qkv_, o_, gate_up_, down_, lm_head_;
  std::unique_ptr<DenseAttentionKernels> dense_;  // the profile's dense fits (the pricers point here)
  AttentionPricers attention_;  // one pricer per phase's method (costmodel/*_pricer.cc)
  double copy_gbps_ = 0;
  std::string decode_rows_;  // the grid pricing decode (decode_attention: rows), "" for the fit
  double launch_excess_us_ = 0;  // taken off each row-priced kernel (launch_excess: measured), else 0
  double queued(double row_us) const { return queued_us(row_us, launch_excess_us_); }
  // Per part, the measured elementwise kernels that price it (family `elementwise`; an
  // imported stack may run a part as two kernels, e.g. residual add + RMSNorm), each
  // over the part's bytes; none: that part is priced at its bytes over copy_gbps_.
  std::array<std::vector<const MonotoneCurve*>, kPartCount> elementwise_{};
  const MonotoneCurve* allreduce_ = nullptr;  // measured, for this TP degree (null: datasheet)
  std::vector<std::string> notes_;
};

}  // namespace servesim
