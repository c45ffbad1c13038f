#include <algorithm>
#include <cmath>

#include "kernels/bench/gpu_timer_stats.h"
#include "kernels/bench/profile_csv.h"

namespace servesim::kernels {

namespace {
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}
}  // namespace

TimingStats summarize_samples(std::vector<double> samples_us) {
  std::sort(samples_us.begin(), samples_us.end());
  TimingStats s;
  s.reps = static_cast<int>(samples_us.size());
  s.min_us = samples_us.front();
  s.max_us = samples_us.back();
  s.median_us = quantile(samples_us, 0.5);
  s.p10_us = quantile(samples_us, 0.1);
  s.p90_us = quantile(samples_us, 0.9);
  return s;
}

void fill_timing(ProfileRow& row, const TimingStats& s) {
  row.reps = s.reps;
  row.median_us = s.median_us;
  row.p10_us = s.p10_us;
  row.p90_us = s.p90_us;
  row.min_us = s.min_us;
  row.max_us = s.max_us;
}

int adaptive_reps(double estimate_us, double target_ms, int min_reps, int max_reps) {
  if (estimate_us <= 0) return max_reps;
  const double want = target_ms * 1e3 / estimate_us;
  return static_cast<int>(std::clamp(std::ceil(want), static_cast<double>(min_reps), static_cast<double>(max_reps)));
}

}  // namespace servesim::kernels
