// Roofline arithmetic; see roofline_cost_model.h. Shapes are per GPU of the TP
// group: heads, KV heads and weight columns/rows are split tp ways.
#include "costmodel/roofline_cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace servesim {

// Prefill: causal attention of n new tokens over c cached + themselves;
// decode: each request reads its whole KV once (GQA: one load serves the group).
class RooflineCostModel::DenseKernels final : public DenseAttentionKernels {
 public:
  DenseKernels(const ModelSpec& m, int tp, double flops_per_s, double bytes_per_s)
      : qh_(static_cast<double>(m.heads) / tp),
        d_(static_cast<double>(m.head_dim)),
        kv_bytes_(m.kv_bytes),
        kv_token_bytes_(2.0 * std::max(1.0, static_cast<double>(m.kv_heads) / tp) * d_ * m.kv_bytes),
        flops_per_s_(flops_per_s),
        bytes_per_s_(bytes_per_s) {}
  double prefill_us(const PrefillWork& w) const override {
    const double flops = 4.0 * qh_ * d_ * w.visible;
    const double bytes = w.kv_tokens * kv_token_bytes_ + 2.0 * w.rows * qh_ * d_ * kv_bytes_;
    return std::max(flops / flops_per_s_, bytes / bytes_per_s_) * 1e6;
  }
  double decode_us(const DecodeWork& w) const override {
    const double flops = 4.0 * qh_ * d_ * w.kv_tokens;
    const double bytes = w.kv_tokens * kv_token_bytes_;
    return std::max(flops / flops_per_s_, bytes / bytes_per_s_) * 1e6;
  }

 private:
  double qh_, d_;
  int kv_bytes_;
  double kv_token_bytes_;  // K and V of one token, one layer
  double flops_per_s_, bytes_per_s_;
};

RooflineCostModel::RooflineCostModel(ModelSpec model, HardwareSpec hw, RooflineOptions opt,
                                     const AttentionMethods& attention)
    : m_(std::move(model)), hw_(std::move(hw)), opt_(opt) {
  flops_per_s_ = hw_.bf16_tflops * 1e12 * opt_.compute_efficiency;
  bytes_per_s_ = hw_.mem_bandwidth_gbps * 1e9 * opt_.memory_efficiency;
  dense_ = std::make_unique<DenseKernels>(m_, opt_.tp, flops_per_s_, bytes_per_s_);
  const HeadShape shape{m_.heads / opt_.tp, std::max<std::int64_t>(1, m_.kv_heads / opt_.tp), m_.head_dim};
  attention_ = make_attention_pricers(attention, AttentionPricingContext{dense_.get(), nullptr, shape, m_.layers, opt_.tp});
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

Time RooflineCostModel::iteration_time(const BatchShape& batch) const {
  if (batch.empty()) return 0;
  const double tokens = static_cast<double>(batch.total_tokens());
  double per_layer = linear_seconds_per_layer(tokens) + opt_.kernels_per_layer * hw_.kernel_launch_us * 1e-6;
  const double attention_us = attention_.prefill->us(batch) + attention_.decode->us(batch);
  // LM head on the tokens that produce logits: every decode token and each completing prefill.
  double logits = static_cast<double>(batch.decode_tokens());
  for (const auto& p : batch.prefills) logits += p.completes ? 1 : 0;
  double lm_head = logits > 0 ? gemm_seconds(logits, static_cast<double>(m_.vocab) / opt_.tp,
                                             static_cast<double>(m_.hidden))
                              : 0;
  double seconds = static_cast<double>(m_.layers) * per_layer + attention_us * 1e-6 + lm_head +
                   opt_.iteration_overhead_us * 1e-6;
  return std::max<Time>(1, seconds_to_time(seconds));
}

std::string RooflineCostModel::identity() const {
  return fmt::format("roofline (uncalibrated): {} on {} tp={} compute_eff={} memory_eff={}", m_.name, hw_.name,
                     opt_.tp, opt_.compute_efficiency, opt_.memory_efficiency);
}

}  // namespace servesim
