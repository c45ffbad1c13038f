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
// us() is a pure function: one logarithm of the KV length, a search among each of the
// (at most two) batch rows' KV lengths, and a table read for the batch size
// (BatchSpans; ~30-60 ns more than the fit per priced iteration before the table:
// servesim_pricing_bench, *_sums vs *_sums_fit). us_at() and RaggedDecode::factor_at()
// take the logarithms from the caller (taken together, their latencies overlap) and
// optional search hints (batch_shape.h: DecodeSearchHints), which skip a row's search
// when the last interval found there still holds; neither changes a result.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/kernel_features.h"

namespace servesim {

// Where a batch size falls among a table's measured batch sizes (ascending): the
// row i below it and its weight w on row i + 1, linear in log batch. Built once
// for every whole batch size strictly between the first and last measured one, so
// pricing a batch (always a whole number of sequences) reads it instead of taking a
// logarithm and searching; other sizes are computed the same way on the spot, so
// both give bit-identical (i, w).
class BatchSpans {
 public:
  struct Span {
    std::size_t i = 0;
    double w = 0;
  };
  BatchSpans() = default;
  explicit BatchSpans(const std::vector<double>& log_batches, const std::vector<double>& batches);
  // REQUIRES: batches.front() < seqs < batches.back().
  Span at(const std::vector<double>& log_batches, double seqs) const {
    const double k = seqs - first_;
    if (k >= 0 && k < static_cast<double>(whole_.size()) && seqs == static_cast<double>(static_cast<std::int64_t>(seqs)))
      return whole_[static_cast<std::size_t>(k)];
    return computed(log_batches, seqs);
  }
  static Span computed(const std::vector<double>& log_batches, double seqs);

 private:
  double first_ = 0;  // the first whole size in whole_
  std::vector<Span> whole_;
};

// RaggedDecode: how much longer a ragged decode batch takes than the uniform batch of
// the same size at its mean KV length, from the profile's `decode_ragged` family (pairs of
// rows measured back to back: a ragged batch, params dist=<shape>, and its uniform partner,
// dist=<shape>-uniform). The factor is read at (batch, longest / mean KV length): per
// measured batch size, piecewise linear in log(longest / mean) through that batch's pairs,
// from 1 at a uniform batch (ratio 1) to the first pair, flat beyond the last; between
// measured batch sizes linear in log batch, flat outside. A ratio of ratios measured on
// one card, so it applies to a grid measured on another.
class RaggedDecode {
 public:
  struct Pair {
    double batch = 0, spread = 1, ratio = 1;  // spread: longest / mean KV length
  };
  // nullopt without at least one pair of spread > 1.
  static std::optional<RaggedDecode> build(std::vector<Pair> pairs);
  double factor(double seqs, double spread) const;
  // factor() given log(spread) (taken by the caller beside other logarithms), and
  // optionally two search hints (batch_shape.h: DecodeSearchHints::ragged; read and
  // updated, never changing the result). REQUIRES: spread > 1, log_spread == std::log(spread).
  double factor_at(double seqs, double spread, double log_spread, std::uint16_t* hints = nullptr) const;
  std::size_t pairs() const { return pairs_; }

 private:
  struct Row {
    std::vector<double> spread, log_spread, ratio;  // ascending spread
  };
  double at_batch(std::size_t i, double spread, double log_spread, std::uint16_t* hint) const;
  std::vector<double> batches_, log_batches_;
  std::vector<Row> rows_;
  BatchSpans spans_;
  std::size_t pairs_ = 0;
};

class DecodeGrid {
 public:
  // From (batch, KV length) -> µs of uniform rows of one head shape. nullopt when
  // they do not make a grid: fewer than two batch sizes or fewer than four points.
  static std::optional<DecodeGrid> build(const std::map<std::pair<double, double>, double>& points);

  // µs of one launch (one layer) for `seqs` decodes reading `kv_tokens` in all.
  // REQUIRES: seqs >= 1, kv_tokens >= seqs.
  double us(double seqs, double kv_tokens, const FeatureFit& fit, const HeadShape& h) const;
  // us() given the mean KV length kv = kv_tokens / seqs and its logarithm (taken by
  // the caller beside other logarithms, so their latencies overlap), and optionally
  // two search hints (DecodeSearchHints::grid; read and updated, never changing the
  // result). Bit-identical to us(). REQUIRES: log_kv == std::log(kv).
  double us_at(double seqs, double kv, double log_kv, const FeatureFit& fit, const HeadShape& h,
               std::uint16_t* hints = nullptr) const;

  std::size_t batches() const { return batches_.size(); }
  std::size_t points() const;
  std::string describe() const;  // "9 batches x 1-10 KV lengths, batch 1-256, KV 512-131072"

 private:
  struct Row {
    std::vector<double> log_kv, kv, us;  // ascending KV length
  };
  double at_batch(std::size_t i, double kv, double log_kv, const FeatureFit& fit, const HeadShape& h,
                  std::uint16_t* hint) const;
  std::vector<double> batches_, log_batches_;
  std::vector<Row> rows_;
  BatchSpans spans_;
};

}  // namespace servesim
