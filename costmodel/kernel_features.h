// Physical features of every fitted kernel family: the one place that says
// what a kernel's time is modelled against. Fitting (kernel_fits.cc, from
// profile rows) and prediction (calibrated_cost_model.cc, from the engine's
// batch) both call these functions, so the two can never disagree.
//
// All quantities are per layer and per GPU (a TP shard's heads), in bytes,
// FLOPs and counts; times are microseconds. The fit forms (docs/costmodel.md):
//   decode    t0 + KV bytes / BW_eff + a·seqs + (KV bytes per seq) / BW_seq
//   prefill   t0 + FLOPs / R_eff + (FLOPs per query row) / R_row + KV bytes / BW
//   quest     metadata: t0 + a·seqs; estimate: t0 + bounds bytes / BW;
//             top-k: t0 + a·scores + b·selected; decode: t0 + a·seqs + selected KV bytes / BW
//   minference estimate, index: t0 + per-type terms (vs: a·n·H [+ b·n·H·lines];
//             bs: a·n·H + b·(n/64)²·H), one fit for all patterns; attention:
//             t0 + a·rows·H + c·tiles, one fit for all patterns (one kernel),
//             area-proportional; tiles per head = a causal band of fitted width
//   andpro    score, select, select_layer: t0 + a·candidates·KV heads; compact,
//             compact_ragged: c·kept·KV heads (kept: AndproParams::kept_tokens)
#pragma once
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace servesim {

// Attention head shape of one GPU (query heads, KV heads, head dim).
struct HeadShape {
  std::int64_t heads = 32, kv_heads = 8, head_dim = 128;
  auto operator<=>(const HeadShape&) const = default;
  std::string label() const { return fmt::format("{}/{}/{}", heads, kv_heads, head_dim); }
  double kv_token_bytes() const { return 4.0 * static_cast<double>(kv_heads * head_dim); }  // K+V, bf16
};

inline constexpr std::int64_t kQuestPageSize = 16;
inline std::int64_t quest_pages(std::int64_t tokens) { return (tokens + kQuestPageSize - 1) / kQuestPageSize; }

// ---- dense decode: one split-KV launch over a ragged batch ----
// kv_splits: Σ ceil(KV length / kDecodeSplitTokens), the split-KV work items
// per KV head (the roofline's fill of the SMs; not a fitted feature).
inline constexpr double kDecodeSplitTokens = 256;
struct DecodeWork {
  double seqs = 0;
  double kv_tokens = 0;  // Σ KV length read (the new token's K/V included)
  double kv_splits = 0;
  void add(double kv) {
    seqs += 1;
    kv_tokens += kv;
    kv_splits += std::ceil(kv / kDecodeSplitTokens);
  }
};
inline const std::vector<std::string> kDecodeFeatureNames = {"1", "kv_bytes", "seqs", "kv_bytes_per_seq"};
inline std::array<double, 4> decode_features(const HeadShape& h, const DecodeWork& w) {
  const double bytes = w.kv_tokens * h.kv_token_bytes();
  return {1.0, bytes, w.seqs, bytes / std::max(1.0, w.seqs)};
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

// ---- Quest (per KV head selection) ----
struct QuestWork {
  double seqs = 0;
  double pages = 0;           // Σ pages of the contexts
  double selected_pages = 0;  // Σ min(budget pages, pages)
  double budget_pages = 0;    // ceil(budget / 16)
  void add(double ctx_tokens, std::int64_t budget) {
    const auto p = static_cast<double>(quest_pages(static_cast<std::int64_t>(ctx_tokens)));
    budget_pages = static_cast<double>(quest_pages(budget));
    seqs += 1;
    pages += p;
    selected_pages += std::min(p, budget_pages);
  }
};
inline const std::vector<std::string> kQuestMetadataNames = {"1", "seqs"};
inline std::array<double, 2> quest_metadata_features(const HeadShape&, const QuestWork& w) { return {1.0, w.seqs}; }
inline const std::vector<std::string> kQuestEstimateNames = {"1", "bound_bytes"};
inline std::array<double, 2> quest_estimate_features(const HeadShape& h, const QuestWork& w) {
  return {1.0, w.pages * 4.0 * static_cast<double>(h.kv_heads * h.head_dim)};  // min and max vectors, bf16
}
inline const std::vector<std::string> kQuestTopkNames = {"1", "scores", "selected"};
inline std::array<double, 3> quest_topk_features(const HeadShape& h, const QuestWork& w) {
  const auto g = static_cast<double>(h.kv_heads);
  return {1.0, w.pages * g, w.seqs * w.budget_pages * g};
}
inline const std::vector<std::string> kQuestDecodeNames = {"1", "seqs", "selected_kv_bytes"};
inline std::array<double, 3> quest_decode_features(const HeadShape& h, const QuestWork& w) {
  return {1.0, w.seqs, w.selected_pages * kQuestPageSize * h.kv_token_bytes()};
}

// ---- MInference (one prompt span n; all heads on one pattern) ----
// Visited 64x64 tiles per head of an n-token prompt whose pattern touches
// `width` tiles per 64-row block: Σ_{rb < n/64} min(rb + 1, width) (continuous
// in n). Every pattern of the search space has a bounded width (sink + window,
// top-k lines, top-k blocks), so area grows linearly once n/64 > width.
inline double minf_band_tiles(double n, double width) {
  const double nb = n / 64.0;
  if (nb <= width) return nb * (nb + 1) / 2;
  return width * (width + 1) / 2 + (nb - width) * width;
}
// Type ("vs", "bs", "ashape") and selected lines of a pattern name of the bench
// (vs_<verticals>_<slashes>, bs_<blocks>, ashape_<sink>_<window>).
struct MinfPatternInfo {
  std::string type;
  double lines = 0;  // vs: verticals + slashes; bs: blocks per row block
};
inline MinfPatternInfo minf_pattern_info(const std::string& name) {
  MinfPatternInfo info;
  info.type = name.substr(0, name.find('_'));
  if (info.type == "ashape") return info;
  std::size_t pos = name.find('_');
  while (pos != std::string::npos) {
    const std::size_t next = name.find('_', pos + 1);
    info.lines += std::atof(name.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1).c_str());
    pos = next;
  }
  return info;
}
// Estimate and index: one fit over all patterns, so that a pattern type with
// few measured lengths shares the launch cost; each type has its own per-token
// terms (vs: the last-64-query logits and line top-k, linear in n; bs: mean
// pooling linear in n plus (n/64)² block logits and their top-k).
inline const std::vector<std::string> kMinfEstimateNames = {"1", "n_heads_vs", "n_heads_bs", "block_pairs_bs"};
inline std::array<double, 4> minf_estimate_features(const HeadShape& h, double n, const MinfPatternInfo& p) {
  const auto hh = static_cast<double>(h.heads);
  const double vs = p.type == "vs" ? 1.0 : 0.0, bs = p.type == "bs" ? 1.0 : 0.0;
  return {1.0, vs * n * hh, bs * n * hh, bs * (n / 64) * (n / 64) * hh};
}
inline const std::vector<std::string> kMinfIndexNames = {"1", "n_heads_vs", "n_heads_lines_vs", "n_heads_bs",
                                                         "block_pairs_bs"};
inline std::array<double, 5> minf_index_features(const HeadShape& h, double n, const MinfPatternInfo& p) {
  const auto hh = static_cast<double>(h.heads);
  const double vs = p.type == "vs" ? 1.0 : 0.0, bs = p.type == "bs" ? 1.0 : 0.0;
  return {1.0, vs * n * hh, vs * n * hh * p.lines / 1000, bs * n * hh, bs * (n / 64) * (n / 64) * hh};
}
inline const std::vector<std::string> kMinfAttentionNames = {"1", "n_heads", "tiles"};
// rows: query rows computed; tiles: 64x64 tiles visited over all heads.
inline std::array<double, 3> minf_attention_features(const HeadShape& h, double rows, double tiles) {
  return {1.0, rows * static_cast<double>(h.heads), tiles};
}

// ---- AnDPro (one prompt of n tokens, window w) ----
inline const std::vector<std::string> kAndproScanNames = {"1", "candidates"};
inline std::array<double, 2> andpro_scan_features(const HeadShape& h, double n, double window) {
  return {1.0, std::max(0.0, n - window) * static_cast<double>(h.kv_heads)};
}
inline const std::vector<std::string> kAndproCompactNames = {"kept"};
inline std::array<double, 1> andpro_compact_features(const HeadShape& h, double kept) {
  return {kept * static_cast<double>(h.kv_heads)};
}

}  // namespace servesim
