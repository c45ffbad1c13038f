#include "kernels/bench/check_report.h"

#include <cmath>
#include <cstdio>

#include "kernels/common/host_util.h"

namespace servesim::kernels {

bool CheckReport::expect_close(const std::string& case_name, const std::vector<float>& out,
                               const std::vector<float>& ref, double rel_tol) {
  char detail[160];
  bool ok = false;
  if (out.size() != ref.size()) {
    std::snprintf(detail, sizeof(detail), "size %zu != reference size %zu", out.size(), ref.size());
  } else if (const size_t bad = count_non_finite(out.data(), out.size()); bad > 0) {
    std::snprintf(detail, sizeof(detail), "%zu of %zu outputs NaN/Inf", bad, out.size());
  } else {
    const double err = relative_error(out, ref);
    ok = std::isfinite(err) && err <= rel_tol;
    std::snprintf(detail, sizeof(detail), "rel_err=%.2e (tol %.0e) max_abs=%.2e", err, rel_tol,
                  max_abs_error(out.data(), ref.data(), out.size()));
  }
  return expect_true(case_name, ok, detail);
}

bool CheckReport::expect_true(const std::string& case_name, bool ok, const std::string& detail) {
  ++cases_;
  if (!ok) ++failures_;
  std::printf("[%s] %s/%s  %s\n", ok ? " OK " : "FAIL", family_.c_str(), case_name.c_str(), detail.c_str());
  std::fflush(stdout);
  return ok;
}

}  // namespace servesim::kernels
