// SyntheticProfile: a kernel profile GENERATED from known formulas, in the
// exact CSV schema of `servesim-kernels bench`, over the bench's full grid.
// It exists to test and demonstrate fitting and validation without a GPU: a
// fit must recover the formulas' parameters, and validation on it measures
// the method, not a GPU.
//
// It is not a measurement and never pretends to be one: the provenance says
// `synthetic=true` and `gpu=SYNTHETIC`, ProfileTable::synthetic() is true,
// the calibrated cost model reports `calibrated=false`, and the automatic
// profile lookup of scenarios refuses it. The parameter values below are
// round numbers of plausible magnitude, chosen for the tests, not taken from
// any GPU or paper.
#pragma once
#include <cstdint>
#include <string>

namespace servesim {

// Per-layer, per-launch formulas (µs). Bandwidths in GB/s (1e9 B/s), rates in
// TFLOP/s; each row's median is formula × exp(noise · N(0,1)).
struct SyntheticTruth {
  // dense decode: t0 + per_seq·B + KV bytes / bw + KV bytes per seq / seq_bw
  double decode_t0_us = 6, decode_per_seq_us = 0.05, decode_bw_gbps = 2900, decode_seq_bw_gbps = 40000;
  // dense prefill: t0 + FLOPs / rate + FLOPs per query row / row_rate + KV bytes / bw
  double prefill_t0_us = 10, prefill_tflops = 380, prefill_row_tflops = 1.5, prefill_bw_gbps = 3000;
  // GEMM: t0 + max(bytes / bw, whole waves of output tiles / per-SM rate), 132 SMs; the
  // tile shape (64x128 .. 256x128) that finishes first, as a library heuristic picks it
  double gemm_t0_us = 4, gemm_bw_gbps = 2800, gemm_tflops = 700;
  // Quest parts
  double quest_meta_t0_us = 3, quest_meta_per_seq_us = 0.004;
  double quest_est_t0_us = 4, quest_est_bw_gbps = 2500;
  double quest_topk_t0_us = 5, quest_topk_per_score_us = 2e-4, quest_topk_per_selected_us = 1e-3;
  double quest_dec_t0_us = 6, quest_dec_per_seq_us = 0.05, quest_dec_bw_gbps = 2600;
  // MInference stages: estimate/index t0 + a·n·H + b·n²·H; attention t0 + a·n·H + per_tile·tiles
  double minf_est_t0_us = 12, minf_est_per_nh_us = 1.6e-4, minf_est_per_n2h_us = 6e-10;  // n² term: bs only
  double minf_idx_t0_us = 8, minf_idx_per_nh_us = 2e-5, minf_idx_per_n2h_us = 1e-11;     // n² term: bs only
  double minf_att_t0_us = 15, minf_att_per_nh_us = 1e-4, minf_att_per_tile_us = 0.007;
  // AnDPro: score/select t0 + a·candidates·KV heads; compact c·kept·KV heads
  double andpro_score_t0_us = 5, andpro_score_per_cand_us = 2.56e-4;
  double andpro_select_t0_us = 6, andpro_select_per_cand_us = 4e-5;
  double andpro_compact_per_kept_us = 6.8e-4;
  // layer_topk allocation: one thread block selects over all KV heads (8x the per-head
  // select's per-candidate time at 8 KV heads: serial where the equal split runs 8
  // blocks side by side); the ragged compaction moves the same rows as compact.
  // Invented values, like every synthetic row: no GPU has measured either kernel.
  double andpro_select_layer_t0_us = 6, andpro_select_layer_per_cand_us = 3.2e-4;
  double andpro_compact_ragged_per_kept_us = 6.8e-4;
  double copy_gbps = 3000;  // ceiling rows
};

struct SyntheticOptions {
  SyntheticTruth truth;
  double noise = 0.02;     // σ of the multiplicative log-normal noise (0 = exact formulas)
  std::uint64_t seed = 1;
  bool quick = false;      // the bench's --quick grid (a few points per family)
};

// The profile as CSV text (provenance lines, header, rows). Deterministic:
// the same options give the same bytes.
std::string synthetic_profile_csv(const SyntheticOptions& o);

// Exact formula of the synthetic model for a MInference pattern's tiles per
// head (used by tests to check the area fit).
double synthetic_minf_band_width(const std::string& pattern);

}  // namespace servesim
