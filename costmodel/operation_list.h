// The operation list: the named parts of one serving iteration of a
// Llama-family decoder on one GPU of a TP group, with each part's FLOPs and
// bytes. Both backends price these same parts (the
// roofline from the FLOPs and bytes, the calibrated backend from measured
// kernels where the bench measures them), and CostModel::parts() reports an
// iteration's time by part (`servesim run --explain`).
//
// Per layer (`per_layer`, repeated `layers` times):
//   attn_norm   fused residual add + RMSNorm (read x and residual, write both): 8·T·h B, 5·T·h FLOPs
//   qkv         GEMM  M=T, N=(hq+2hk)·d, K=h          (FLOPs 2MNK, bytes 2(MK+NK+MN) at weight_bytes)
//   rope        on q and k, in place: 4·T·(hq+hk)·d B, 3·T·(hq+hk)·d FLOPs
//   kv_write    K and V into the paged cache (read + write): 4·T·hk·d·kv_bytes B
//   attention_prefill  dense causal: 4·hq·d·Σ visible keys FLOPs; KV of the span + Q in, O out
//   attention_decode   dense: 4·hq·d·Σ(ctx+1) FLOPs; Σ(ctx+1) tokens of KV + Q in, O out
//   attention_kv       a KV method's own kernels (AnDPro scoring); priced by its pricer only
//   o           GEMM  M=T, N=h, K=hq·d
//   mlp_norm    as attn_norm
//   gate_up     GEMM  M=T, N=2·I/tp, K=h
//   activation  SiLU(gate)·up: read 2·I/tp, write I/tp per token (bf16), 5 FLOPs per output
//   down        GEMM  M=T, N=h, K=I/tp
//   allreduce   tp > 1: two ring all-reduces of [T, h] bf16: 2·2(tp-1)/tp·T·h B over the interconnect
// Per iteration:
//   embedding   gather T rows of h (read + write): 4·T·h B
//   final_norm  RMSNorm of T rows (with the last residual add): 8·T·h B
//   lm_head     GEMM  M=rows producing logits, N=ceil(vocab/tp), K=h
//   sampling    one pass over fp32 logits: 4·rows·vocab B, 5·rows·vocab FLOPs
//   launch, overhead, other: host time (launches, scheduling) and backends without a split
// with T = all tokens of the iteration, hq/hk the GPU's query/KV heads, h the
// hidden size, I the MLP size. Residual adds are fused into the next norm, as
// serving engines run them. Elementwise FLOPs are nominal (they never bind).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "costmodel/batch_shape.h"
#include "costmodel/model_spec.h"

namespace servesim {

enum class Part : std::uint8_t {
  kEmbedding, kAttnNorm, kQkv, kRope, kKvWrite, kAttentionPrefill, kAttentionDecode, kAttentionKv, kO, kMlpNorm,
  kGateUp, kActivation, kDown, kAllreduce, kFinalNorm, kLmHead, kSampling, kLaunch, kOverhead, kOther, kCount
};
inline constexpr std::size_t kPartCount = static_cast<std::size_t>(Part::kCount);
inline constexpr std::array<std::string_view, kPartCount> kPartNames = {
    "embedding", "attn_norm", "qkv",       "rope",       "kv_write", "attention_prefill", "attention_decode",
    "attention_kv", "o",      "mlp_norm",  "gate_up",    "activation", "down",           "allreduce",
    "final_norm", "lm_head",  "sampling",  "launch",     "overhead",   "other"};
inline std::string_view part_name(Part p) { return kPartNames[static_cast<std::size_t>(p)]; }

// µs of one iteration by part (summed over layers).
using PartTimes = std::array<double, kPartCount>;

enum class OpKind : std::uint8_t { kGemm, kElementwise, kAttention, kAllreduce };

struct Operation {
  Part part;
  OpKind kind;
  bool per_layer = true;       // repeated in every layer (else once per iteration)
  int launches = 1;            // kernels per occurrence
  double flops = 0, bytes = 0; // of one occurrence (one layer, or the iteration)
  double m = 0, n = 0, k = 0;  // GEMMs: Y[M,N] = X[M,K]·W[N,K]^T
};

// The operations of `batch` (empty batch: none). Attention entries are the
// dense kernels' FLOPs and bytes (a sparse method's pricer replaces their
// time); an attention entry is present only when the batch has that phase,
// allreduce only when tp > 1, lm_head and sampling only when some row
// produces logits (every decode token, each completing prefill chunk).
std::vector<Operation> operation_list(const ModelSpec& m, int tp, const BatchShape& batch);

// Rows producing logits: every decode token and each completing prefill chunk.
double logit_rows(const BatchShape& batch);

}  // namespace servesim
