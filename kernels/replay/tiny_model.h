// The replay's model with deterministic random weights, and a CPU reference
// forward pass. The GPU replay (replay_gpu.cu) computes the
// same function with the same weights, layouts and bf16 rounding points, so
// its logits for the tiny model are checked against this (`servesim-kernels
// check`, case replay_tiny).
//
// Conventions shared with the GPU replay:
//  - weights: nn.Linear layout W[N][K]; qkv rows are q (hq·d), k (hk·d), v (hk·d);
//    gate_up rows are gate (I) then up (I); values uniform in ±1/sqrt(K), rounded to bf16;
//    norm weights 1 ± 0.1; embedding ±1; all from make_replay_weights(model, seed).
//  - every activation is rounded to bf16 after each launch (what a bf16 engine stores);
//    reductions (GEMMs, norms, attention) accumulate in double here, float on the GPU.
//  - RMSNorm eps 1e-5; RoPE rotate-half with theta 500000 at position = context + i;
//    attention scale 1/sqrt(d); residual adds fused into the next norm (replay_plan.h).
//  - the KV of a recorded context (tokens the replay did not compute) is random:
//    context_kv(seed, layer, seq, pos, head, dim, is_v), uniform ±1 in bf16.
//  - token ids: replay_token(seed, seq, pos, vocab), in [0, vocab).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "kernels/replay/replay_plan.h"

namespace servesim::kernels {

struct ReplayLayerWeights {
  std::vector<float> attn_norm, qkv, o, mlp_norm, gate_up, down;
};
struct ReplayWeights {
  ReplayModel model;
  std::vector<float> embedding;  // [vocab][hidden]
  std::vector<ReplayLayerWeights> layers;
  std::vector<float> final_norm, lm_head;  // lm_head [vocab][hidden]
};

// Deterministic in (model, seed). TP 1 (the whole model on one GPU).
ReplayWeights make_replay_weights(const ReplayModel& model, uint64_t seed);

float context_kv(uint64_t seed, int layer, int64_t seq, int64_t pos, int head, int dim, bool is_v);
int32_t replay_token(uint64_t seed, int64_t seq, int64_t pos, int64_t vocab);

// One sequence's work in an iteration: `tokens` new tokens appended after its current
// length; logits for the last new token when `logits`.
struct SequenceStep {
  int64_t seq = 0;
  std::vector<int32_t> tokens;
  bool logits = false;
};

struct ForwardOutput {
  std::vector<float> logits;    // [rows][vocab], rows = steps with logits, in step order
  std::vector<int32_t> sampled; // greedy argmax of each row (lowest id on ties)
};

// CPU reference: a model with a per-sequence KV store that grows across run() calls.
class ReplayReference {
 public:
  ReplayReference(const ReplayWeights& weights, uint64_t seed) : w_(weights), seed_(seed) {}
  // Gives a sequence `len` tokens of random context (context_kv) before its first step.
  void add_random_context(int64_t seq, int64_t len);
  ForwardOutput run(const std::vector<SequenceStep>& steps);
  int64_t length(int64_t seq) const;
  int64_t vocab() const { return w_.model.vocab; }

 private:
  struct Kv { std::vector<std::vector<float>> k, v; int64_t len = 0; };  // per layer [len][hk][d]
  const ReplayWeights& w_;
  uint64_t seed_;
  std::map<int64_t, Kv> kv_;
};

// The steps of a recorded iteration with fresh sequences: prefill chunk i is sequence i
// with `context` tokens of random context and new tokens replay_token(seed, i, pos);
// decode j is sequence prefills + j with its context random and one new token.
// add_random_context() is called for each on `ref` when non-null.
std::vector<SequenceStep> replay_steps(const RecordedIteration& it, uint64_t seed, int64_t vocab, ReplayReference* ref);

// Helpers the GPU replay mirrors (exposed for tests).
void rms_norm_ref(const std::vector<float>& x, const std::vector<float>& w, int64_t rows, int64_t h, std::vector<float>* y);
void rope_ref(float* row, int heads, int head_dim, int64_t pos);  // one token's heads, in place
float silu_ref(float x);

}  // namespace servesim::kernels
