// AnDPro's fitting side (method_fits.h; its registry entry is andpro_method()
// in andpro_pricer.cc): the features its kernels are modelled against, its
// fits and their prediction of a profile row.
//
// Kernels (param window = the observation window; budget; param block):
// andpro_score, andpro_select, andpro_compact (allocation equal),
// andpro_select_layer, andpro_compact_ragged (allocation layer_topk; optional:
// profiles measured before it lack them), fitted per window; andpro_e2e and
// andpro_dense_prefill (the dense baseline, priced by the shared fa2 prefill
// fit) predicted only. Fit forms (per layer and GPU, µs):
//   score, select, select_layer  t0 + a·candidates·KV heads
//   compact, compact_ragged      c·kept·KV heads (kept: AndproParams::kept_tokens)
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/kernel_features.h"
#include "costmodel/method_fits.h"

namespace servesim {

// ---- AnDPro (one prompt of n tokens, window w) ----
inline const std::vector<std::string> kAndproScanNames = {"1", "candidates"};
inline std::array<double, 2> andpro_scan_features(const HeadShape& h, double n, double window) {
  return {1.0, std::max(0.0, n - window) * static_cast<double>(h.kv_heads)};
}
inline const std::vector<std::string> kAndproCompactNames = {"kept"};
inline std::array<double, 1> andpro_compact_features(const HeadShape& h, double kept) {
  return {kept * static_cast<double>(h.kv_heads)};
}

struct AndproFits {
  HeadShape shape;
  std::int64_t budget = 0, block = 16;  // as measured
  FeatureFit score, select, compact;                 // allocation: equal
  FeatureFit select_layer, compact_ragged;           // allocation: layer_topk
};

class AndproMethodFits final : public MethodFits {
 public:
  std::map<std::int64_t, AndproFits> windows;  // by observation window

  std::optional<double> predict(const ProfilePoint& p, const KernelFits& all) const override;
  void summarize(std::vector<FitSummaryRow>& out) const override;
};

// The AnDPro fits of a profile (empty when it has no andpro rows).
const AndproMethodFits& andpro_fits(const KernelFits& fits);

// The registry entry's fitting part.
MethodFitting andpro_fitting();

}  // namespace servesim
