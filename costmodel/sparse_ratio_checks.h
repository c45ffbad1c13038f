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
// Each method at its registry defaults (attention_method.h: MInference
// vs_500_1500 on all heads, min_length 32768; Quest budget 2048, 2 dense
// layers), priced by whatever the profile has: its own sparse families when
// measured, else derived from its dense kernels (derived_sparse.h).
#pragma once
#include <memory>
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
  double error() const { return ours / published - 1; }  // relative, signed
};

// Prices each published point twice (dense, sparse) with CalibratedCostModel
// on `fits`; `hw` only matters where the profile lacks a part (copy bandwidth).
// The methods' parameters come from `params` (its quest and minference fields;
// the selectors are set here): the registry defaults unless a caller asks for a
// sensitivity check.
std::vector<SparseRatioCheck> sparse_ratio_checks(std::shared_ptr<const KernelFits> fits, const HardwareSpec& hw,
                                                  const CalibratedOptions& opt = {},
                                                  const AttentionMethods& params = {});

// A Markdown table: method, point, ours, attention only, published, error.
std::string format_sparse_ratio_checks(const std::vector<SparseRatioCheck>& checks);

}  // namespace servesim
