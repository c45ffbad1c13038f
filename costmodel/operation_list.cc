// The operation list; see operation_list.h.
#include "costmodel/operation_list.h"

#include <algorithm>

namespace servesim {

double logit_rows(const BatchShape& batch) {
  double rows = static_cast<double>(batch.decode_tokens());
  for (const auto& p : batch.prefills) rows += p.completes ? 1 : 0;
  return rows;
}

std::vector<Operation> operation_list(const ModelSpec& m, int tp_degree, const BatchShape& batch) {
  std::vector<Operation> ops;
  if (batch.empty()) return ops;
  const double tp = tp_degree;
  const double t = static_cast<double>(batch.total_tokens());
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim);
  const double hq = static_cast<double>(m.heads / tp_degree);
  const double hk = static_cast<double>(std::max<std::int64_t>(1, m.kv_heads / tp_degree));
  const double inter = static_cast<double>(m.intermediate) / tp;
  const double wb = m.weight_bytes, kvb = m.kv_bytes;
  const double act = 2;  // activations are bf16
  auto gemm = [&](Part p, double rows, double n, double k, bool per_layer = true) {
    ops.push_back({p, OpKind::kGemm, per_layer, 1, 2 * rows * n * k, wb * (rows * k + n * k + rows * n), rows, n, k});
  };
  auto elementwise = [&](Part p, double flops, double bytes, bool per_layer = true) {
    ops.push_back({p, OpKind::kElementwise, per_layer, 1, flops, bytes});
  };
  elementwise(Part::kAttnNorm, 5 * t * h, 4 * t * h * act);
  gemm(Part::kQkv, t, (hq + 2 * hk) * d, h);
  elementwise(Part::kRope, 3 * t * (hq + hk) * d, 2 * t * (hq + hk) * d * act);
  elementwise(Part::kKvWrite, 0, 2 * 2 * t * hk * d * kvb);
  const double kv_token_bytes = 2 * hk * d * kvb;  // K and V of one token, one layer
  if (!batch.prefills.empty()) {
    double visible = 0, span = 0, rows = 0;
    for (const auto& p : batch.prefills) {
      const double n = static_cast<double>(p.new_tokens), c = static_cast<double>(p.context);
      visible += n * c + n * (n + 1) / 2;
      span += c + n;
      rows += n;
    }
    ops.push_back({Part::kAttentionPrefill, OpKind::kAttention, true, 1, 4 * hq * d * visible,
                   span * kv_token_bytes + 2 * rows * hq * d * act});
  }
  if (!batch.decode_contexts.empty()) {
    // Σ (context + 1): every partial sum is an integer below 2^53, so the sum the
    // decode lane keeps (batch_shape.h) is the same double.
    double kv = 0;
    if (batch.decode_sums)
      kv = static_cast<double>(batch.decode_sums->kv);
    else
      for (auto c : batch.decode_contexts) kv += static_cast<double>(c) + 1;
    const double seqs = static_cast<double>(batch.decode_contexts.size());
    ops.push_back({Part::kAttentionDecode, OpKind::kAttention, true, 1, 4 * hq * d * kv,
                   kv * kv_token_bytes + 2 * seqs * hq * d * act});
  }
  gemm(Part::kO, t, h, hq * d);
  elementwise(Part::kMlpNorm, 5 * t * h, 4 * t * h * act);
  gemm(Part::kGateUp, t, 2 * inter, h);
  elementwise(Part::kActivation, 5 * t * inter, 3 * t * inter * act);
  gemm(Part::kDown, t, h, inter);
  if (tp_degree > 1)
    ops.push_back({Part::kAllreduce, OpKind::kAllreduce, true, 2, 0, 2 * 2 * (tp - 1) / tp * t * h * act});
  elementwise(Part::kEmbedding, 0, 2 * t * h * act, false);
  elementwise(Part::kFinalNorm, 5 * t * h, 4 * t * h * act, false);
  const double rows = logit_rows(batch);
  if (rows > 0) {
    const double vocab = static_cast<double>((m.vocab + tp_degree - 1) / tp_degree);
    gemm(Part::kLmHead, rows, vocab, h, false);
    const double full_vocab = static_cast<double>(m.vocab);
    elementwise(Part::kSampling, 5 * rows * full_vocab, 4 * rows * full_vocab, false);
  }
  return ops;
}

}  // namespace servesim
