// Roofline arithmetic; see roofline_cost_model.h. Shapes are per GPU of the TP
// group: heads, KV heads and weight columns/rows are split tp ways.
#include "costmodel/roofline_cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace servesim {

RooflineCostModel::RooflineCostModel(ModelSpec model, HardwareSpec hw, RooflineOptions opt)
    : m_(std::move(model)), hw_(std::move(hw)), opt_(opt) {
  flops_per_s_ = hw_.bf16_tflops * 1e12 * opt_.compute_efficiency;
  bytes_per_s_ = hw_.mem_bandwidth_gbps * 1e9 * opt_.memory_efficiency;
}

double RooflineCostModel::gemm_seconds(double m, double n, double k) const {
  // C[m,n] = A[m,k] · B[k,n], bf16 in/out: read A and B, write C.
  double flops = 2.0 * m * n * k;
  double bytes = static_cast<double>(m_.weight_bytes) * (m * k + k * n + m * n);
  return std::max(flops / flops_per_s_, bytes / bytes_per_s_);
}

double RooflineCostModel::linear_seconds_per_layer(double tokens) const {
  const double tp = opt_.tp;
  const double h = static_cast<double>(m_.hidden);
  const double qkv = static_cast<double>((m_.heads + 2 * m_.kv_heads) * m_.head_dim) / tp;
  const double o_in = static_cast<double>(m_.heads * m_.head_dim) / tp;
  const double ffn = static_cast<double>(m_.intermediate) / tp;
  double t = gemm_seconds(tokens, qkv, h)        // QKV projection
             + gemm_seconds(tokens, h, o_in)     // output projection
             + gemm_seconds(tokens, 2 * ffn, h)  // gate + up
             + gemm_seconds(tokens, h, ffn);     // down
  if (opt_.tp > 1) {
    // Ring all-reduce of the [tokens, hidden] activations after attention and after the MLP.
    double bytes = 2.0 * (tp - 1) / tp * tokens * h * m_.weight_bytes;
    t += 2 * bytes / (hw_.interconnect_gbps * 1e9);
  }
  return t;
}

double RooflineCostModel::attention_seconds_per_layer(const BatchShape& batch) const {
  const double tp = opt_.tp;
  const double qh = static_cast<double>(m_.heads) / tp;
  const double kvh = std::max(1.0, static_cast<double>(m_.kv_heads) / tp);
  const double d = static_cast<double>(m_.head_dim);
  const double kv_token_bytes = 2.0 * kvh * d * m_.kv_bytes;  // K and V of one token, one layer
  // Prefill: causal attention of n new tokens over c cached + themselves.
  double pf_flops = 0, pf_bytes = 0;
  for (const auto& p : batch.prefills) {
    double n = static_cast<double>(p.new_tokens), c = static_cast<double>(p.context);
    pf_flops += 4.0 * qh * d * n * (c + (n + 1) / 2);
    pf_bytes += (c + n) * kv_token_bytes + 2.0 * n * qh * d * m_.kv_bytes;
  }
  // Decode: each request reads its whole KV once (GQA: one load serves the group).
  double dc_flops = 0, dc_bytes = 0;
  for (auto c : batch.decode_contexts) {
    double ctx = static_cast<double>(c) + 1;
    dc_flops += 4.0 * qh * d * ctx;
    dc_bytes += ctx * kv_token_bytes;
  }
  double t = 0;
  if (!batch.prefills.empty()) t += std::max(pf_flops / flops_per_s_, pf_bytes / bytes_per_s_);
  if (!batch.decode_contexts.empty()) t += std::max(dc_flops / flops_per_s_, dc_bytes / bytes_per_s_);
  return t;
}

Time RooflineCostModel::iteration_time(const BatchShape& batch) const {
  if (batch.empty()) return 0;
  const double tokens = static_cast<double>(batch.total_tokens());
  double per_layer = linear_seconds_per_layer(tokens) + attention_seconds_per_layer(batch) +
                     opt_.kernels_per_layer * hw_.kernel_launch_us * 1e-6;
  // LM head on the tokens that produce logits: every decode token and each completing prefill.
  double logits = static_cast<double>(batch.decode_tokens());
  for (const auto& p : batch.prefills) logits += p.completes ? 1 : 0;
  double lm_head = logits > 0 ? gemm_seconds(logits, static_cast<double>(m_.vocab) / opt_.tp,
                                             static_cast<double>(m_.hidden))
                              : 0;
  double seconds = static_cast<double>(m_.layers) * per_layer + lm_head + opt_.iteration_overhead_us * 1e-6;
  return std::max<Time>(1, seconds_to_time(seconds));
}

std::string RooflineCostModel::identity() const {
  return fmt::format("roofline (uncalibrated): {} on {} tp={} compute_eff={} memory_eff={}", m_.name, hw_.name,
                     opt_.tp, opt_.compute_efficiency, opt_.memory_efficiency);
}

}  // namespace servesim
