// The replay planner: one recorded iteration
// (batch_record.h) + a model -> the list of GPU launches a real forward pass
// of that iteration makes on one GPU of a TP group, each with its shapes,
// FLOPs and bytes. The GPU replay (`servesim-kernels replay`) executes exactly
// this list, and its unit test checks that the totals per part agree with the
// cost model's operation list (costmodel/operation_list.h) for the same batch:
// the simulator prices the launches the replay runs.
//
// Layer structure (as serving engines run it; residual adds fused into the next norm):
//   embedding gather (T rows)
//   per layer: attn_norm (residual += x; x = RMSNorm(residual)) -> qkv GEMM -> rope (q, k in
//     place) -> kv_append (K, V of the T new tokens into the paged cache) -> attention_prefill
//     (all prefill chunks, causal over context + new) and attention_decode (all decodes, paged
//     over context + 1) -> o GEMM -> mlp_norm (residual += x; x = RMSNorm(residual)) -> gate_up
//     GEMM -> silu_mul -> down GEMM [-> allreduce x2 when tp > 1: priced, not run on one GPU]
//   final_norm (residual += x; RMSNorm) -> logit_gather (rows that produce output; NOT in the
//     operation list, part "unpriced") -> lm_head GEMM (rows x vocab/tp) -> sampling (greedy argmax)
// Bytes are the nominal traffic of each launch (activations bf16, weights at weight_bytes, KV at
// kv_bytes, logits fp32 for sampling), FLOPs the nominal arithmetic.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/replay/batch_record.h"

namespace servesim::kernels {

struct ReplayModel {
  std::string name;
  int64_t layers = 0, hidden = 0, q_heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  int weight_bytes = 2, kv_bytes = 2;
};

// llama3-8b (= llama3.1-8b), llama3-70b (= llama3.1-70b), llama2-7b, tiny; case, '-', '_' and '.'
// are ignored, so the configs' names (Llama-3.1-8B) work. Empty name on an unknown model.
ReplayModel replay_model_by_name(const std::string& name);
// The tiny model of the CPU/GPU check: 2 layers, hidden 256, 4 q / 2 kv heads of 64,
// intermediate 512, vocab 512.
ReplayModel tiny_replay_model();

enum class LaunchKind { kGemm, kElementwise, kAttention, kAllreduce };

struct Launch {
  std::string name;  // embedding, attn_norm, qkv, rope, kv_append, ... (see above)
  std::string part;  // the operation list's part name, or "unpriced"
  LaunchKind kind = LaunchKind::kElementwise;
  int layer = -1;    // -1: once per iteration
  double flops = 0, bytes = 0;
  int64_t m = 0, n = 0, k = 0;  // GEMMs: Y[M,N] = X[M,K] W[N,K]^T
  bool runs_on_one_gpu = true;  // false: all-reduce (priced, not replayed on one GPU)
};

struct ReplayPlan {
  int64_t tokens = 0, logit_rows = 0;
  std::vector<Launch> launches;
  double flops(const std::string& part) const;  // summed over launches (and layers) of the part
  double bytes(const std::string& part) const;
  double total_flops() const;
  double total_bytes() const;
};

// REQUIRES: a known model (non-empty name), tp >= 1 dividing q_heads and intermediate,
// an iteration with at least one prefill chunk or decode.
ReplayPlan plan_iteration(const ReplayModel& model, int tp, const RecordedIteration& it);

}  // namespace servesim::kernels
