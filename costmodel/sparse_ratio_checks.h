// The sparse methods' end-to-end speedups as the calibrated backend prices
// them, against the published ones (docs/costmodel.md,
// "Sparse methods priced from dense data"). The published figures are a
// held-out check: nothing in the pricing is fitted to them.
//
//   MInference  end-to-end prefill of one prompt, LLaMA-3-8B, 1 GPU, over dense
//               (FlashAttention-2): 1.78x at 100K, 4.13x at 300K, 6.89x at 500K,
//               9.86x at 1M tokens (microsoft/MInference README, A100).
//   Quest       end-to-end decode step, batch 1, 32K context, budget 2048, FP16,
//               Llama-2-7B shape, over dense: 1.74x (Quest paper, Fig. 10).
//
// Each method at the published run's configuration, priced by whatever the
// profile has: its own sparse families when measured, else derived from its dense
// kernels (derived_sparse.h).
//   MInference  the per-head patterns the published LLaMA-3-8B runs used
//               (published_minference_patterns()). A profile whose measured
//               minf_attention rows do not cover those patterns (our H100 bench
//               measured six others) is priced at the registry default instead,
//               and the row says so (like_for_like = false).
//   Quest       budget 2048 as published, 2 dense layers (the registry defaults).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/hardware_spec.h"
#include "costmodel/kernel_fits.h"

namespace servesim {

struct SparseRatioCheck {
  std::string method;  // the sparse method with its parameters: "minference(vs_500_1500:1 min_length=32768)"
  std::string point;   // "prefill 100K tokens", "decode ctx 32768 budget 2048 batch 1"
  std::string model;   // the model shape priced
  double ours = 0;          // dense iteration time / sparse iteration time
  double attention = 0;     // the same ratio for the attention part alone
  double published = 0;
  std::string source;  // where the published figure is from
  bool like_for_like = true;  // false: the published run's configuration could not be priced (see above)
  double dense_us = 0, sparse_us = 0;  // our end-to-end times of the point (MInference paper: 1M tokens
                                       // on one A100, dense 30 min, MInference 3 min)
  double error() const { return ours / published - 1; }  // relative, signed
};

// MInference's per-head configuration for LLaMA-3-8B-Instruct-262K, which the
// public implementation also uses for LLaMA-3-8B-Instruct-Gradient-1048k (the
// published latency model; MInference paper sec. 5: both models share one
// searched configuration): of its 32 x 32 heads, 473 vertical-slash (1000, 6096),
// 278 (30, 800), 153 (100, 800), 89 (3500, 100) and 31 (500, 700) -- counted from
// microsoft/MInference minference/configs/
// Llama_3_8B_Instruct_262k_kv_out_v32_fit_o_best_pattern.json (commit fb56c917,
// blob ce60f95a), as shares of heads. Facts of the published experiment, not fitted.
std::vector<std::pair<std::string, double>> published_minference_patterns();

// Prices each published point twice (dense, sparse) with CalibratedCostModel
// on `fits`; `hw` only matters where the profile lacks a part (copy bandwidth).
// The methods' parameters come from `params` (its quest and minference fields;
// the selectors are set here) when given -- a sensitivity check, e.g. the
// registry defaults (AttentionMethods{}) -- else the published configurations above.
std::vector<SparseRatioCheck> sparse_ratio_checks(std::shared_ptr<const KernelFits> fits, const HardwareSpec& hw,
                                                  const CalibratedOptions& opt = {},
                                                  const std::optional<AttentionMethods>& params = std::nullopt);

// A Markdown table: method, point, model, our dense and sparse seconds, ours, attention only, published, error
// (a row not like for like is marked in its method cell).
std::string format_sparse_ratio_checks(const std::vector<SparseRatioCheck>& checks);

}  // namespace servesim
