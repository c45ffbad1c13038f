// Sparse methods priced from a profile's dense kernels
// (docs/costmodel.md, "Sparse methods priced from dense data"). A measured
// profile without a sparse method's own families (quest_*, minf_*, andpro_*:
// every imported public table, which measures dense kernels only) still prices
// the method: its pricer counts the method's own work, from the method's
// definition and parameters, and prices each step with the profile's measured
// dense kernels:
//
//   memory-bound step   (Quest's page-metadata read and update, every top-k,
//                        AnDPro's scoring scan and compaction, MInference's
//                        index): the measured dense decode fit evaluated at the
//                        step's bytes (memory_kernel_us), i.e. its launch floor
//                        (t0 + per-sequence term) plus bytes at the decode
//                        kernel's achieved bandwidth;
//   top-k               a radix select over 32-bit scores, kTopkPasses passes
//                        over the scores (8-bit digits), as a memory-bound step;
//   attention over a    the measured dense kernel at the selected work: dense
//   selection            decode over Quest's selected pages; dense prefill at the
//                        area a MInference pattern visits, divided by the sparse
//                        kernel's measured efficiency relative to the dense one
//                        (minference_pricer.cc, kMinfSparseEfficiency).
//
// The pricer says so in ctx.notes (identity(), so every report). Only when the
// method's family is absent from the profile entirely and scaling is allowed;
// a profile with the family keeps the measured path unchanged, and
// cost_model.allow_scaling: false keeps the "needs the family" error.
#pragma once
#include <algorithm>
#include <cmath>

#include "costmodel/attention_pricer.h"
#include "costmodel/kernel_features.h"

namespace servesim {

// A top-k selection reads its scores this many times: a radix select over
// 32-bit keys with 8-bit digits (the selection of kernels/sparse/*: one pass per
// digit, docs/sparse_kernels.md "Known limits").
inline constexpr double kTopkPasses = 4;
inline constexpr double kScoreBytes = 4;  // fp32 scores

// The sparse attention kernel's rate per visited 64x64 tile relative to the dense
// prefill's, at equal shapes: measured on the H100 (costmodel/profiles/h100-sxm/
// profile.csv), the median over the 30 structured (pattern, n) rows of
// minf_attention (the variant the measured path fits) with a minf_dense_prefill row
// at the same n (16K-256K, Llama-3-8B heads) of
//   (minf_dense_prefill µs x tiles / causal tiles) / minf_attention µs
// = 0.2687 (range 0.250-0.281); sparse_derived_test.cc recomputes it. Transported
// to other GPUs as is (the sparse kernel reads gathered tiles through WMMA at ~27% of
// the dense kernel's tile rate; docs/costmodel.md).
inline constexpr double kMinfSparseEfficiency = 0.269;

// µs of one launch of a memory-bound kernel over `seqs` independent sequences
// reading/writing `bytes` in all: the profile's dense decode fit at the same
// bytes and sequences (launch floor t0 + a·seqs, and the bytes at the decode
// kernel's measured bandwidth, per launch and per sequence).
inline double memory_kernel_us(const DenseAttentionKernels& dense, const HeadShape& h, double seqs, double bytes) {
  DecodeWork w;
  w.seqs = std::max(1.0, seqs);
  w.kv_tokens = std::max(0.0, bytes) / h.kv_token_bytes();
  w.kv_splits = w.seqs * std::ceil(w.kv_tokens / w.seqs / kDecodeSplitTokens);
  return dense.decode_us(w);
}

// µs of a top-k over `scores` fp32 scores in `seqs` independent selections.
inline double topk_kernel_us(const DenseAttentionKernels& dense, const HeadShape& h, double seqs, double scores) {
  return memory_kernel_us(dense, h, seqs, kTopkPasses * kScoreBytes * scores);
}

}  // namespace servesim
