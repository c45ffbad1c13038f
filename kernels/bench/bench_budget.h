// The time budget of one `servesim-kernels bench` run.
//
// A GPU job has a hard wall-clock limit (10 minutes on the device machines), so the bench
// must end on time with the points it finished rather than be killed mid-family. Each
// family asks admit() before it starts a grid point; once the budget is spent, admit()
// refuses, records the point as skipped, and the family moves on (cheaply) to the end of
// its grid. A point already started always finishes: the budget bounds when the last
// point *starts*, so callers keep a margin for one point (the script's grace period).
//
// The clock is injected so the accounting is tested without waiting or reading real time.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace servesim::kernels {

class BenchBudget {
 public:
  using Clock = std::function<double()>;  // monotonic seconds

  // budget_s <= 0: no limit (every point is admitted). The budget starts now.
  explicit BenchBudget(double budget_s, Clock clock = steady_clock_seconds);

  // True when `point` ("decode B=8 ctx=4096 llama3-8b") may start; else records it as skipped.
  bool admit(const std::string& point);

  bool limited() const { return budget_s_ > 0; }
  double budget_s() const { return budget_s_; }
  double elapsed_s() const { return clock_() - start_; }
  int admitted() const { return admitted_; }
  const std::vector<std::string>& skipped() const { return skipped_; }

  static double steady_clock_seconds();

 private:
  double budget_s_;
  Clock clock_;
  double start_;
  int admitted_ = 0;
  std::vector<std::string> skipped_;
};

}  // namespace servesim::kernels
