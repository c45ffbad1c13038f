// KernelFits: every kernel family of a profile, fitted (kernel_features.h says
// against what). Built once per profile in milliseconds; immutable and shared
// by all workers (and cost models) that use the profile.
//
// Families and keys:
//   decode                    per head shape (heads/kv_heads/head_dim), variant splitkv
//   prefill                   per variant and head shape, for every launchable variant
//                             with rows (fa2, fa2_qreg, hopper_wgmma from family
//                             prefill_hopper, ...; not the forced-tile diagnostics
//                             fa2_m64/fa2_m128). prefill() holds, per head shape, the
//                             fastest valid variant's fit and prefill_variant() which one:
//                             valid = fitted at that shape from its own rows (or scaled
//                             from its own best-measured shape) without a "fits badly"
//                             residual; fastest = the smallest mean log predicted time
//                             over every prefill workload measured at that shape (any
//                             variant); ties keep fa2.
//   gemm                      per weight shape (n, k): a MonotoneCurve over M, shaped
//                             between measured M by the selected guide (gemm_guide.h)
//   <method>                  every attention method with kernels of its own (Quest,
//                             MInference, AnDPro): its registry entry's fitter
//                             (method_fits.h; <method>_fits.h says what and how)
//   elementwise               per variant (add_rmsnorm, rope, kv_append, silu_mul, embedding,
//                             argmax: the GPU replay's small kernels, family `elementwise`):
//                             a MonotoneCurve of µs over the operation list's bytes
//                             (operation_list.h), so a launch floor at a few tokens and the
//                             bandwidth slope at many are both measured
//   allreduce                 per GPU count: a MonotoneCurve of µs over message bytes, the
//                             lower envelope of the implementations measured (imported
//                             tables: NCCL, vLLM custom all-reduce in CUDA-graph mode;
//                             the eager custom kernel is never the fastest and is kept
//                             for reference only)
//   ceiling copy bandwidth    the best measured copy rate (elementwise kernels of a profile
//                             without elementwise rows)
// Rows of composite or baseline kernels (a method's end-to-end rows, the dense
// baselines measured beside the sparse kernels) are not fitted; predict() prices
// them from the fitted parts, which is how validation checks composition.
#pragma once
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "costmodel/decode_grid.h"
#include "costmodel/feature_fit.h"
#include "costmodel/gemm_guide.h"
#include "costmodel/kernel_features.h"
#include "costmodel/method_fits.h"
#include "costmodel/monotone_curve.h"
#include "costmodel/profile_table.h"

namespace servesim {

struct GemmCurve {
  MonotoneCurve curve;  // µs over M (tokens)
  std::string labels;   // "llama3-8b/qkv/tp1 ..." (the shapes it was measured for)
  RelativeError residuals;  // of the isotonic curve at the measured points
};

// A GEMM weight shape's price over M: its own measured curve, or (a shape the
// profile did not measure) the nearest measured shape's curve times to(m) /
// from(m), the ratio of the two shapes' guides (gemm_guide_of).
struct GemmPrice {
  const MonotoneCurve* curve = nullptr;
  bool scaled = false;
  GemmGuide from, to;
  std::pair<std::int64_t, std::int64_t> measured{0, 0};  // the (n, k) whose curve it uses
  double operator()(double m) const { return scaled ? (*curve)(m) * to(m) / from(m) : (*curve)(m); }
};

class KernelFits {
 public:
  using RowFilter = std::function<bool(const ProfilePoint&)>;

  // Fits every family present in `table`, using the rows `use` accepts (all
  // when empty). Rows it cannot use for lack of a parameter are InputErrors
  // naming the file and line.
  static KernelFits fit(const ProfileTable& table, const RowFilter& use = {});

  // The family a row is validated under ("" = not modelled: ceilings, forced
  // tile-width diagnostics).
  static std::string family_of(const ProfilePoint& p);
  // The fits' prediction of a row's median (µs); nullopt when a needed fit is
  // missing (e.g. the family was held out entirely).
  std::optional<double> predict(const ProfilePoint& p) const;

  const std::map<HeadShape, FeatureFit>& decode() const { return decode_; }
  // Per head shape, the uniform decode rows (params ragged=0) as a grid over batch and
  // KV length (decode_grid.h); a shape whose rows make no grid is absent.
  const std::map<HeadShape, DecodeGrid>& decode_grids() const { return decode_grids_; }
  // Per head shape, the ragged decode factor from family decode_ragged's pairs (rows with
  // params dist=...; they are used for nothing else: not the decode fit, not the grid).
  const std::map<HeadShape, RaggedDecode>& ragged_decode() const { return ragged_decode_; }
  // What one isolated-kernel row overstates per launch, µs (docs/costmodel.md, "Launch
  // excess"): the ceilings family's launch_alone - (launch_queued - launch_queued_spin) /
  // launches, an empty kernel timed alone between events less the cost of one launch
  // queued behind others. nullopt when the profile lacks those rows (or they give
  // no excess in (0, launch_alone)).
  std::optional<double> launch_excess_us() const { return launch_excess_us_; }
  const std::map<HeadShape, FeatureFit>& prefill() const { return prefill_; }  // the chosen variant per shape
  const std::map<HeadShape, std::string>& prefill_variant() const { return prefill_variant_; }
  // Every launchable prefill variant's fits: variant → head shape → fit.
  const std::map<std::string, std::map<HeadShape, FeatureFit>>& prefill_variants() const { return prefill_variants_; }
  const std::map<std::pair<std::int64_t, std::int64_t>, GemmCurve>& gemm() const { return gemm_; }
  const GemmGuideSelection& gemm_guide() const { return gemm_guide_; }
  // The guide that shapes a measured weight shape's curve: the selected one, or
  // a plain roofline (profile t0 and BW, rate from the shape's largest M) when
  // straight lines won. Moved to another (n, k) at the same rate, the ratio of
  // the two prices an unmeasured shape from a measured curve
  // (CalibratedCostModel's scaling rule). REQUIRES: gemm().count(key).
  GemmGuide gemm_guide_of(std::pair<std::int64_t, std::int64_t> key) const;
  // The price of weight shape (n, k): exact when measured, else transported
  // from the nearest measured shape (log distance in n and k). REQUIRES: !gemm().empty().
  GemmPrice gemm_price(std::int64_t n, std::int64_t k) const;
  // Measured all-reduce per GPU count: µs over message bytes (the lower envelope
  // of the stack's implementations, e.g. vLLM's custom all-reduce and NCCL, each
  // inside its measured size range; empty without allreduce rows).
  const std::map<std::int64_t, MonotoneCurve>& allreduce() const { return allreduce_; }
  // Which implementations the all-reduce curves were built from ("nccl+vllm_custom_graph").
  const std::string& allreduce_source() const { return allreduce_source_; }
  // The fits of attention method `name` (its registry entry's fitter; <method>_fits.h
  // has a typed accessor), null when no registered method of that name fits kernels.
  const MethodFits* method(std::string_view name) const;
  template <class T>
  const T* method_fits(std::string_view name) const {
    return dynamic_cast<const T*>(method(name));
  }
  // A row priced by the shared dense fits: decode at the row's head shape (the
  // nearest measured shape with its head_dim), prefill by `variant`'s fit.
  std::optional<double> predict_decode(const ProfilePoint& p) const;
  std::optional<double> predict_prefill(const ProfilePoint& p, const std::string& variant) const;
  double copy_gbps() const { return copy_gbps_; }  // 0 when the profile has no ceiling rows
  // Elementwise kernels by variant (empty for profiles measured before the family existed).
  const std::map<std::string, MonotoneCurve>& elementwise() const { return elementwise_; }
  // Families present in the profile but not fitted (too few rows), with why.
  const std::vector<std::string>& problems() const { return problems_; }

  const std::string& file() const { return file_; }
  const std::string& provenance() const { return provenance_; }
  bool synthetic() const { return synthetic_; }
  // Run-to-run spread of the fitted rows: the median over rows with measured
  // p10 and p90 of ln(p90/p10)/2.5631 (the σ of a log-normal whose 10th and 90th
  // percentiles they are). 0 when no row has both (imported tables keep medians
  // only) or every row has p90 == p10. spread_rows() counts the rows used.
  double spread_sigma() const { return spread_sigma_; }
  std::size_t spread_rows() const { return spread_rows_; }
  std::vector<FitSummaryRow> summary() const;

 private:
  std::map<HeadShape, FeatureFit> decode_, prefill_;
  std::map<HeadShape, DecodeGrid> decode_grids_;
  std::map<HeadShape, RaggedDecode> ragged_decode_;
  std::optional<double> launch_excess_us_;
  std::map<HeadShape, std::string> prefill_variant_;
  std::map<std::string, std::map<HeadShape, FeatureFit>> prefill_variants_;
  std::map<std::pair<std::int64_t, std::int64_t>, GemmCurve> gemm_;
  GemmGuideSelection gemm_guide_;
  std::vector<std::pair<std::string, std::shared_ptr<const MethodFits>>> methods_;  // registry order
  double copy_gbps_ = 0;
  std::map<std::string, MonotoneCurve> elementwise_;
  std::map<std::int64_t, MonotoneCurve> allreduce_;
  std::string allreduce_source_;
  std::vector<std::string> problems_;
  std::string file_, provenance_;
  bool synthetic_ = false;
  double spread_sigma_ = 0;
  std::size_t spread_rows_ = 0;
};

// The fits of the profile at `path`, loaded and fitted once per process while
// the file keeps its size and modification time (a sweep's points and a
// fuzzer's inputs share them; profiles are tens of MB and ~0.1 s to fit).
// Thread-safe. Errors are those of ProfileTable::load and KernelFits::fit.
std::shared_ptr<const KernelFits> load_kernel_fits(const std::string& path);

template <class V>
const std::pair<const HeadShape, V>* nearest_head_shape(const std::map<HeadShape, V>& measured, const HeadShape& want) {
  if (auto it = measured.find(want); it != measured.end()) return &*it;
  const std::pair<const HeadShape, V>* best = nullptr;
  double best_d = 0;
  for (const auto& kv : measured) {
    const HeadShape& h = kv.first;
    const double group = std::abs(std::log(static_cast<double>(h.heads) / static_cast<double>(h.kv_heads)) -
                                  std::log(static_cast<double>(want.heads) / static_cast<double>(want.kv_heads)));
    const double kvh = std::abs(std::log(static_cast<double>(h.kv_heads) / static_cast<double>(want.kv_heads)));
    const double dist = (h.head_dim == want.head_dim ? 0.0 : 1e4) + 100 * group + kvh;
    if (!best || dist < best_d) best_d = dist, best = &kv;
  }
  return best;
}

}  // namespace servesim
