// Physical features of the kernels every method shares: the one place that
// says what their time is modelled against. Fitting (kernel_fits.cc, from
// profile rows) and prediction (calibrated_cost_model.cc, from the engine's
// batch) both call these functions, so the two can never disagree.
//
// All quantities are per layer and per GPU (a TP shard's heads), in bytes,
// FLOPs and counts; times are microseconds. The fit forms (docs/costmodel.md):
//   decode    t0 + KV bytes / BW_eff + a·seqs + (KV bytes per seq) / BW_seq
//   prefill   t0 + FLOPs / R_eff + (FLOPs per query row) / R_row + KV bytes / BW
// An attention method's own kernels have their features beside its fits
// (quest_fits.h, minference_fits.h, andpro_fits.h).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "costmodel/batch_shape.h"

namespace servesim {

// Attention head shape of one GPU (query heads, KV heads, head dim).
struct HeadShape {
  std::int64_t heads = 32, kv_heads = 8, head_dim = 128;
  auto operator<=>(const HeadShape&) const = default;
  std::string label() const { return fmt::format("{}/{}/{}", heads, kv_heads, head_dim); }
  double kv_token_bytes() const { return 4.0 * static_cast<double>(kv_heads * head_dim); }  // K+V, bf16
};

// ---- dense decode: one split-KV launch over a ragged batch ----
// kv_splits: Σ ceil(KV length / kDecodeSplitTokens), the split-KV work items
// per KV head (the roofline's fill of the SMs; not a fitted feature).
inline constexpr double kDecodeSplitTokens = 256;
struct DecodeWork {
  double seqs = 0;
  double kv_tokens = 0;  // Σ KV length read (the new token's K/V included)
  double kv_splits = 0;
  double max_kv = 0;     // the longest KV length (0: unknown; ragged decode pricing, decode_grid.h)
  DecodeSearchHints* hints = nullptr;  // the batch's search hints (batch_shape.h); null: none
  void add(double kv) {
    seqs += 1;
    kv_tokens += kv;
    kv_splits += std::ceil(kv / kDecodeSplitTokens);
    max_kv = std::max(max_kv, kv);
  }
};
// The decode work of a batch that carries the decode lane's sums (batch_shape.h),
// as the dense decode pricer takes it. REQUIRES b.decode_sums.
inline DecodeWork decode_work_from_sums(const BatchShape& b) {
  DecodeWork w;
  w.seqs = static_cast<double>(b.decode_contexts.size());
  w.kv_tokens = static_cast<double>(b.decode_sums->kv);
  w.kv_splits = static_cast<double>(b.decode_sums->splits);
  w.max_kv = static_cast<double>(b.decode_sums->max_kv);
  w.hints = &b.search_hints;
  return w;
}
inline const std::vector<std::string> kDecodeFeatureNames = {"1", "kv_bytes", "seqs", "kv_bytes_per_seq_head"};
inline std::array<double, 4> decode_features(const HeadShape& h, const DecodeWork& w) {
  const double bytes = w.kv_tokens * h.kv_token_bytes();
  return {1.0, bytes, w.seqs, bytes / (std::max(1.0, w.seqs) * static_cast<double>(h.kv_heads))};
}

// ---- dense prefill: one varlen causal launch over chunks ----
inline constexpr double kPrefillQueryTile = 128;  // query rows per thread block (FlashAttention-2, head_dim 128)
struct PrefillWork {
  double rows = 0;       // Σ new tokens (query rows)
  double kv_tokens = 0;  // Σ (prefix + chunk)
  double visible = 0;    // Σ over rows of keys seen (causal useful work / (4·d·H))
  double q_tiles = 0;    // Σ ceil(chunk / kPrefillQueryTile): query tiles per head (the roofline's waves)
  void add(double chunk, double prefix) {
    rows += chunk;
    q_tiles += std::ceil(chunk / kPrefillQueryTile);
    kv_tokens += prefix + chunk;
    visible += chunk * prefix + chunk * (chunk + 1) / 2;
  }
};
inline const std::vector<std::string> kPrefillFeatureNames = {"1", "flops", "flops_per_row", "kv_bytes"};
inline std::array<double, 4> prefill_features(const HeadShape& h, const PrefillWork& w) {
  const double flops = 4.0 * static_cast<double>(h.head_dim * h.heads) * w.visible;
  return {1.0, flops, flops / std::max(1.0, w.rows), w.kv_tokens * h.kv_token_bytes()};
}

}  // namespace servesim
