// The replay planner; see replay_plan.h.
#include "kernels/replay/replay_plan.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "kernels/gemm/linear_shapes.h"

namespace servesim::kernels {
namespace {

ReplayModel from_dims(const ModelDims& d, int64_t layers) {
  return ReplayModel{d.name, layers, d.hidden, d.num_q_heads, d.num_kv_heads, d.head_dim, d.intermediate, d.vocab};
}

}  // namespace

ReplayModel tiny_replay_model() { return ReplayModel{"tiny", 2, 256, 4, 2, 64, 512, 512}; }

ReplayModel replay_model_by_name(const std::string& name) {
  std::string key;  // lowercase, without '-', '_' and '.': "Llama-3.1-8B" -> "llama318b"
  for (char c : name)
    if (c != '-' && c != '_' && c != '.') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "tiny") return tiny_replay_model();
  if (key == "llama38b" || key == "llama318b") return from_dims(llama3_8b(), 32);
  if (key == "llama370b" || key == "llama3170b") return from_dims(llama3_70b(), 80);
  if (key == "llama27b") return from_dims(llama2_7b(), 32);
  return ReplayModel{};
}

double ReplayPlan::flops(const std::string& part) const {
  double s = 0;
  for (const auto& l : launches) s += l.part == part ? l.flops : 0;
  return s;
}
double ReplayPlan::bytes(const std::string& part) const {
  double s = 0;
  for (const auto& l : launches) s += l.part == part ? l.bytes : 0;
  return s;
}
double ReplayPlan::total_flops() const {
  double s = 0;
  for (const auto& l : launches) s += l.flops;
  return s;
}
double ReplayPlan::total_bytes() const {
  double s = 0;
  for (const auto& l : launches) s += l.bytes;
  return s;
}

ReplayPlan plan_iteration(const ReplayModel& m, int tp, const RecordedIteration& it) {
  if (m.name.empty() || tp < 1 || m.q_heads % tp != 0 || m.intermediate % tp != 0)
    throw std::invalid_argument("plan_iteration: unknown model or a TP degree that does not divide its heads");
  if (it.prefills.empty() && it.decodes.empty()) throw std::invalid_argument("plan_iteration: empty iteration");
  ReplayPlan plan;
  plan.tokens = it.total_tokens();
  plan.logit_rows = it.logit_rows();
  const double t = static_cast<double>(plan.tokens), h = static_cast<double>(m.hidden);
  const double d = static_cast<double>(m.head_dim);
  const int64_t hq_i = m.q_heads / tp, hk_i = std::max<int64_t>(1, m.kv_heads / tp), inter_i = m.intermediate / tp;
  const double hq = static_cast<double>(hq_i), hk = static_cast<double>(hk_i), inter = static_cast<double>(inter_i);
  const double wb = m.weight_bytes, kvb = m.kv_bytes, act = 2;
  auto& L = plan.launches;
  auto gemm = [&](const char* name, int layer, int64_t rows, int64_t n, int64_t k) {
    const double M = static_cast<double>(rows), N = static_cast<double>(n), K = static_cast<double>(k);
    L.push_back({name, name, LaunchKind::kGemm, layer, 2 * M * N * K, wb * (M * K + N * K + M * N), rows, n, k});
  };
  auto ew = [&](const char* name, const char* part, int layer, double flops, double bytes) {
    L.push_back({name, part, LaunchKind::kElementwise, layer, flops, bytes});
  };
  // embedding: read T rows of the table, write T rows.
  ew("embedding", "embedding", -1, 0, 2 * t * h * act);
  const double kv_token = 2 * hk * d * kvb;  // K and V of one token in one layer
  for (int layer = 0; layer < m.layers; ++layer) {
    // fused residual add + RMSNorm: read x, residual; write residual, out. 5 FLOPs per element.
    ew("attn_norm", "attn_norm", layer, 5 * t * h, 4 * t * h * act);
    gemm("qkv", layer, plan.tokens, (hq_i + 2 * hk_i) * m.head_dim, m.hidden);
    ew("rope", "rope", layer, 3 * t * (hq + hk) * d, 2 * t * (hq + hk) * d * act);  // read + write q, k
    ew("kv_append", "kv_write", layer, 0, 2 * 2 * t * hk * d * kvb);                // read k, v; write the cache
    if (!it.prefills.empty()) {
      double visible = 0, span = 0, rows = 0;
      for (const auto& c : it.prefills) {
        const double n = static_cast<double>(c.new_tokens), ctx = static_cast<double>(c.context);
        visible += n * ctx + n * (n + 1) / 2;  // query i sees ctx + i + 1 keys
        span += ctx + n;
        rows += n;
      }
      L.push_back({"attention_prefill", "attention_prefill", LaunchKind::kAttention, layer, 4 * hq * d * visible,
                   span * kv_token + 2 * rows * hq * d * act});
    }
    if (!it.decodes.empty()) {
      double keys = 0;
      for (int64_t c : it.decodes) keys += static_cast<double>(c) + 1;  // its own token was appended first
      const double seqs = static_cast<double>(it.decodes.size());
      L.push_back({"attention_decode", "attention_decode", LaunchKind::kAttention, layer, 4 * hq * d * keys,
                   keys * kv_token + 2 * seqs * hq * d * act});
    }
    gemm("o", layer, plan.tokens, m.hidden, hq_i * m.head_dim);
    ew("mlp_norm", "mlp_norm", layer, 5 * t * h, 4 * t * h * act);
    gemm("gate_up", layer, plan.tokens, 2 * inter_i, m.hidden);
    ew("silu_mul", "activation", layer, 5 * t * inter, 3 * t * inter * act);  // read gate, up; write out
    gemm("down", layer, plan.tokens, m.hidden, inter_i);
    if (tp > 1)
      for (int r = 0; r < 2; ++r) {
        Launch a{"allreduce", "allreduce", LaunchKind::kAllreduce, layer, 0,
                 2 * (tp - 1) / static_cast<double>(tp) * t * h * act};
        a.runs_on_one_gpu = false;
        L.push_back(a);
      }
  }
  ew("final_norm", "final_norm", -1, 5 * t * h, 4 * t * h * act);
  if (plan.logit_rows > 0) {
    const double rows = static_cast<double>(plan.logit_rows);
    ew("logit_gather", "unpriced", -1, 0, 2 * rows * h * act);  // copy the output rows contiguous
    gemm("lm_head", -1, plan.logit_rows, (m.vocab + tp - 1) / tp, m.hidden);
    ew("sampling", "sampling", -1, 5 * rows * static_cast<double>(m.vocab), 4 * rows * static_cast<double>(m.vocab));
  }
  return plan;
}

}  // namespace servesim::kernels
