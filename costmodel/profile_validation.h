// Profile validation: how well the fits predict measured points they were not
// fitted to (docs/costmodel.md, "Validation").
//
// Split: each row of a fitted family is held out when a hash of (seed, its
// kernel, variant, shape cells, params) falls below `holdout`; the split is
// deterministic and independent of row order. GEMM rows are the exception:
// when the profile has off-grid probe rows (params probe=1; gemm_shapes.h)
// exactly those are held out, so the GEMM error is that of interpolating
// between grid points, as a simulation does (kind "off-grid"); an older
// profile without probes holds out a share of its grid, except the smallest
// and largest M of a weight shape (the curve would be extrapolating). The
// fits are built from the remaining rows, then every held-out row is
// predicted. Composite and baseline rows (quest_e2e, minf_e2e, andpro_e2e,
// the dense baselines of the sparse families) are never fitted, so all of them
// are predicted: they check that the fitted parts add up.
//
// Target on real profiles (../shared/spec/kernels_and_costmodel.md): median
// relative error <= 5% and p90 <= 10% per family.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/profile_table.h"

namespace servesim {

struct ValidationOptions {
  double holdout = 0.2;     // share of fitted rows held out
  std::uint64_t seed = 1;   // selects which rows
};

struct ValidationPoint {
  std::string family;
  const ProfilePoint* row = nullptr;
  double predicted_us = 0;
};

struct FamilyValidation {
  std::string family;
  std::string kind;    // "held-out" (fitted family), "off-grid" (GEMM probes) or "composite" (from parts)
  std::size_t fitted = 0;  // rows the family's fits were built from
  RelativeError error;     // over the predicted rows
  bool meets_target() const { return error.median <= 0.05 && error.p90 <= 0.10; }
};

struct ValidationResult {
  std::vector<FamilyValidation> families;  // sorted by family name
  std::vector<ValidationPoint> points;     // every predicted row
  std::vector<std::string> problems;       // rows or families that could not be predicted, with why
};

// REQUIRES: 0 < holdout < 1. Throws InputError on malformed rows.
ValidationResult validate_profile(const ProfileTable& table, const ValidationOptions& options);

// "family,kind,fitted_rows,predicted_rows,median_rel_err,p90_rel_err,max_rel_err,meets_target" rows.
std::string validation_csv(const ValidationResult& r);
// One row per predicted point: family, line, kernel, variant, measured, predicted, relative error.
std::string validation_points_csv(const ValidationResult& r);

}  // namespace servesim
