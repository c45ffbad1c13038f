// Fidelity against real execution, the CPU side: a replay CSV
// (`servesim-kernels replay`, one row per recorded iteration with the measured time
// beside the prediction) read into typed rows, its per-iteration errors summarised, and
// the measured-substitution backend (MeasuredCostModel) that re-runs a scenario with the
// measured iteration times. docs/costmodel.md, "Fidelity against real execution".
//
// Definitions (documented there):
//  - error of an iteration = |predicted - measured| / measured;
//  - kind: decode_only (no prefill chunk), prefill_heavy (prefill tokens >= half of the
//    iteration's tokens), mixed (both phases, prefill tokens < half);
//  - batch bucket by the iteration's tokens: 1, 2-8, 9-32, 33-128, 129-512, 513-2048, >2048;
//  - median and p90 by linear interpolation between order statistics (numpy's default),
//    max exact.
// Every backend that predicted is a column `predicted_us` (the recording backend) or
// `predicted_<name>_us`; each is summarised on its own.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "costmodel/cost_model.h"

namespace servesim {

enum class IterationKind : std::uint8_t { kPrefillHeavy, kDecodeOnly, kMixed, kCount };
inline constexpr std::string_view kIterationKindNames[] = {"prefill_heavy", "decode_only", "mixed"};
IterationKind iteration_kind(std::int64_t prefill_tokens, std::int64_t decode_tokens);
std::string_view batch_bucket(std::int64_t tokens);

struct ReplayRow {
  std::int64_t iteration = 0;
  BatchShape shape;
  double measured_us = 0;
  std::vector<double> predicted_us;  // one per ReplayTable::backends
  // The prediction of ReplayTable::parts_backend split by part (operation_list.h), µs;
  // empty when no backend's split was asked for.
  std::vector<double> parts_us;
};

struct ReplayTable {
  std::string path;
  std::vector<std::string> backends;  // "recorded" for predicted_us, else the <name> of predicted_<name>_us
  std::string parts_backend;          // whose split ReplayRow::parts_us holds ("" = none)
  std::vector<ReplayRow> rows;
};

// '#' lines are comments; the header row must have iteration, prefills, decodes,
// measured_us and at least one predicted column. InputError naming file, line and field
// on anything malformed (a non-positive measured time included).
ReplayTable read_replay_csv(const std::string& path);

struct ErrorSummary {
  std::string backend, group_by, group;  // group_by: all | kind | batch_tokens
  std::int64_t iterations = 0;
  double median = 0, p90 = 0, max = 0;   // absolute relative errors (0.05 = 5%)
  double signed_median = 0;              // median of (predicted - measured) / measured: > 0 priced slow
  double measured_over_predicted = 0;    // sum of measured / sum of predicted: the time-weighted bias
};

// For each backend: all iterations, then each kind, then each batch bucket (groups with
// no iteration are left out), in that order.
std::vector<ErrorSummary> summarise_errors(const ReplayTable& t);
// fidelity.csv: backend,group_by,group,iterations,median_abs_rel_err,p90_abs_rel_err,max_abs_rel_err,
// signed_median_rel_err,measured_over_predicted
std::string error_summary_csv(const std::vector<ErrorSummary>& s);
// iterations.csv, one row per replayed iteration in the replay's order, to find which
// iterations a backend misses: iteration,kind,batch_tokens,prefill_tokens,decodes,
// decode_kv_sum,decode_kv_max,measured_us, then per backend predicted_<name>_us and
// err_<name> (signed (predicted - measured) / measured), then, when the rows carry a split,
// <parts_backend>_<part>_us for every part of the operation list (they sum to that
// backend's prediction). decode_kv_* are the KV tokens the decodes read (context + 1
// each; 0 with no decode).
std::string iteration_table_csv(const ReplayTable& t);

// A backend's per-iteration host time for batch b, µs: its `overhead` part
// (cost_model.iteration_overhead_us; 0 for a backend without the split). The replay
// does not run it: `calibrate fidelity` compares the prediction less it with the
// measured forward pass.
double host_part_us(const CostModel& m, const BatchShape& b);

// The measured-substitution backend: for a batch shape that the replay measured, the
// measured time (the median when a shape was measured more than once); for any other
// shape, the inner backend's prediction times the measured/predicted ratio of its kind
// (sum of measured over sum of predicted among that kind's replayed iterations, the inner
// backend re-pricing them; the ratio of all iterations for a kind never replayed).
// The replay measures the GPU's forward pass only, so the inner backend's per-iteration
// host time (its `overhead` part, a constant: cost_model.iteration_overhead_us) is added
// to every measured time and left out of the ratios: both runs of the comparison then
// carry the same host model, and the difference is the GPU pricing's.
// Not monotone in token counts (measurements are noisy), so only for this comparison.
class MeasuredCostModel final : public CostModel {
 public:
  MeasuredCostModel(std::shared_ptr<const CostModel> inner, const ReplayTable& replay);
  Time iteration_time(const BatchShape& batch) const override;
  std::string identity() const override;
  bool calibrated() const override { return true; }
  double ratio(IterationKind k) const { return ratio_[static_cast<std::size_t>(k)]; }
  double host_us() const { return host_us_; }  // the inner backend's per-iteration host time, added
  // Iterations priced so far by measurement and by scaled prediction (side records).
  std::int64_t measured_hits() const { return hits_; }
  std::int64_t scaled_misses() const { return misses_; }

 private:
  static std::string key(const BatchShape& b);
  std::shared_ptr<const CostModel> inner_;
  std::unordered_map<std::string, Time> measured_;
  double ratio_[static_cast<std::size_t>(IterationKind::kCount)] = {1, 1, 1};
  double host_us_ = 0;
  mutable std::int64_t hits_ = 0, misses_ = 0;
};

}  // namespace servesim
