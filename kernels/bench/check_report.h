// Pass/fail bookkeeping for `servesim-kernels check`: each family compares GPU outputs
// with its CPU reference through a CheckReport, which prints one line per case
//   [ OK ] decode/splitkv b=3 ctx=1..300 h=32/8 d=128   rel_err=2.1e-03 (tol 1e-02)
//   [FAIL] ...                                            rel_err=nan (NaN in output)
// and counts failures. A case fails when the output contains a NaN/Inf, when its size
// differs from the reference, or when ||out - ref|| / ||ref|| exceeds the tolerance.
#pragma once

#include <string>
#include <vector>

namespace servesim::kernels {

// bf16 outputs compared with a float/double reference (rounding of the output alone
// contributes ~2^-9 = 2e-3).
inline constexpr double kBf16RelTol = 1e-2;

class CheckReport {
 public:
  explicit CheckReport(std::string family, bool verbose = false)
      : family_(std::move(family)), verbose_(verbose) {}

  // Compares and prints; returns true when the case passed.
  bool expect_close(const std::string& case_name, const std::vector<float>& out,
                    const std::vector<float>& ref, double rel_tol);
  // Records a case decided by the caller (e.g. bitwise equality of a copy).
  bool expect_true(const std::string& case_name, bool ok, const std::string& detail);

  int failures() const { return failures_; }
  int cases() const { return cases_; }

 private:
  std::string family_;
  bool verbose_;
  int failures_ = 0;
  int cases_ = 0;
};

}  // namespace servesim::kernels
