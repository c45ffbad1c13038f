// Cross-validation of a profile's fits (`servesim calibrate crossval`,
// docs/costmodel.md "Cross-validation"): what the calibrated backend does with
// shapes it did not measure, checked against rows that were measured but held
// out of the fit. No knob is tuned here: each experiment refits the profile's
// own rows (KernelFits::fit with a row filter) and predicts the held-out ones.
//
// Experiments (each where the profile has the rows for it):
//   model-out   leave one model out (rows with params model=): its GEMMs (transported
//               from the nearest measured weight shape) and small ops (the elementwise
//               curves over bytes of the other models), per part and as per-layer sums
//               of the non-attention ops (two residual adds per layer; the embedding is
//               per iteration and not in the sum)
//   tp          fit TP 1 rows only, predict TP 2, 4 and 8 (rows with params tp=)
//   tokens      fit rows of <= 1,024 tokens, predict 4,096 (GEMM and small ops)
//   shape-out   leave one attention head shape out: decode and prefill rows predicted
//               from the nearest measured head shape at their own bytes and FLOPs; a
//               GEMM grid (rows without a model) in eight folds of weight shapes, each
//               shape priced from its nearest measured neighbour (the transport rule)
//   size-out    all-reduce: every other interior message size held out per GPU count,
//               all its rows, predicted against the held-out size's envelope of
//               implementations (what the cost model prices)
// Targets: per-layer sums median <= 5% and p90 <= 10%; every part median <= 10%.
#pragma once
#include <string>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/profile_table.h"

namespace servesim {

struct CrossvalRow {
  std::string experiment, part;
  RelativeError error;
  double target_median = 0.10, target_p90 = 0;  // 0: no p90 target
  bool meets_target() const {
    return error.median <= target_median && (target_p90 <= 0 || error.p90 <= target_p90);
  }
  std::string target_text() const;
};

struct CrossvalResult {
  std::vector<CrossvalRow> rows;
  std::vector<std::string> notes;
};

CrossvalResult crossval_profile(const ProfileTable& table);

// Two stacks' times for the same measured shape (docs/costmodel.md, "Engine stacks"):
// per kernel, rows with identical keys (GEMM m/n/k; decode batch/ctx/heads; prefill
// batch/q_len/ctx/heads; all-reduce GPUs/bytes), the ratio b / a. Nothing is averaged.
struct StackDisagreement {
  std::string kernel;
  std::size_t matches = 0;
  double p10 = 0, median = 0, p90 = 0;  // of b / a
  std::string example;                  // the largest-FLOP GEMM match, or the first match
};
std::vector<StackDisagreement> stack_disagreement(const ProfileTable& a, const ProfileTable& b);
// experiment,part,points,median_rel_err,p90_rel_err,max_rel_err,target_median,target_p90,meets
std::string crossval_csv(const CrossvalResult& r);

}  // namespace servesim
