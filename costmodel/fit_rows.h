// Helpers shared by every family's fitting code (kernel_fits.cc for the dense
// kernels, GEMMs, elementwise and all-reduce; <method>_fits.cc for each
// attention method's own kernels): reading a profile row's work with errors
// that name the file and line, collecting feature samples, and fitting them.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/kernel_features.h"
#include "costmodel/profile_table.h"

namespace servesim {

// Feature rows and measured times of one fit.
struct Samples {
  std::vector<std::vector<double>> x;
  std::vector<double> t;
  template <std::size_t N>
  void add(const std::array<double, N>& f, double time) {
    x.emplace_back(f.begin(), f.end());
    t.push_back(time);
  }
};

// An InputError "file:line: kernel/variant: msg".
[[noreturn]] void row_error(const std::string& file, const ProfilePoint& p, const std::string& msg);
// The row's head shape; an error when a column is missing.
HeadShape row_head_shape(const std::string& file, const ProfilePoint& p);
// `v` (the row's `column`), an error when it is < 1.
std::int64_t need_column(const std::string& file, const ProfilePoint& p, std::int64_t v, const char* column);

// Fits `s` (a reduced form when it has fewer rows than coefficients;
// feature_fit.h); notes a family with rows but nothing usable. Empty samples:
// an empty fit.
FeatureFit fit_or_note(const std::vector<std::string>& names, const Samples& s, const std::string& what,
                       std::vector<std::string>& problems);

// One fit per head shape; a shape with few rows (fewer than twice the
// coefficients) takes the form of the best-measured shape, scaled by one
// fitted factor: same kernel, same physics, another amount of work per byte.
void fit_head_shapes(const std::vector<std::string>& names, const std::map<HeadShape, Samples>& samples,
                     const char* family, std::map<HeadShape, FeatureFit>& out, std::vector<std::string>& problems);

}  // namespace servesim
