#include "kernels/bench/bench_budget.h"

#include <chrono>
#include <utility>

#include "kernels/bench/registry.h"

namespace servesim::kernels {

double BenchBudget::steady_clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

BenchBudget::BenchBudget(double budget_s, Clock clock) : budget_s_(budget_s), clock_(std::move(clock)), start_(clock_()) {}

bool BenchBudget::admit(const std::string& point) {
  if (limited() && elapsed_s() >= budget_s_) {
    skipped_.push_back(point);
    return false;
  }
  ++admitted_;
  return true;
}

bool bench_admit(const BenchOptions& options, const std::string& point) {
  return options.budget == nullptr || options.budget->admit(point);
}

}  // namespace servesim::kernels
