// DecodeGrid: dense decode attention priced from the profile's own uniform decode
// rows (the bench's `decode` family, ragged=0: every sequence of the batch at one KV
// length) instead of the linear decode fit (kernel_features.h), where the grid has
// them (docs/costmodel.md, "Decode from the measured rows").
//
// Why: the fit's four features cannot follow the split-KV kernel's plan (one wave of
// splits at small batches, whole sequences per block at large ones); against its own
// rows it is 10-24 % low at batches of 1-64 (H100 and H200 profiles), which the GPU
// replays of long-context traces measured (docs/costmodel.md, "Long context on an H200").
//
// Pricing a batch of `seqs` decodes reading `kv` KV tokens in all (each new token's
// included): the grid at (seqs, kv / seqs), i.e. a ragged batch is priced as the
// uniform batch of its mean KV length. Between measured points: linear in time,
// with weights linear in log batch and log KV length. Outside a batch row's measured
// KV lengths, or outside the measured batches, the nearest measured point times the
// fit's ratio between the two shapes (the fit transports, the rows anchor). Each
// batch row is made non-decreasing in KV length (running maximum) when built, so
// the price is monotone in every KV length.
//
// us() is a pure function: two binary searches and two logarithms (~30-60 ns more than
// the fit per priced iteration: servesim_pricing_bench, *_sums vs *_sums_fit).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/kernel_features.h"

namespace servesim {

class DecodeGrid {
 public:
  // From (batch, KV length) -> µs of uniform rows of one head shape. nullopt when
  // they do not make a grid: fewer than two batch sizes or fewer than four points.
  static std::optional<DecodeGrid> build(const std::map<std::pair<double, double>, double>& points);

  // µs of one launch (one layer) for `seqs` decodes reading `kv_tokens` in all.
  // REQUIRES: seqs >= 1, kv_tokens >= seqs.
  double us(double seqs, double kv_tokens, const FeatureFit& fit, const HeadShape& h) const;

  std::size_t batches() const { return batches_.size(); }
  std::size_t points() const;
  std::string describe() const;  // "9 batches x 1-10 KV lengths, batch 1-256, KV 512-131072"

 private:
  struct Row {
    std::vector<double> log_kv, kv, us;  // ascending KV length
  };
  double at_batch(std::size_t i, double kv, double log_kv, const FeatureFit& fit, const HeadShape& h) const;
  std::vector<double> batches_, log_batches_;
  std::vector<Row> rows_;
};

}  // namespace servesim
