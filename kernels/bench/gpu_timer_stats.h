// CPU half of the bench timer (gpu_timer.cuh): order statistics of timed samples and the
// adaptive repetition count. Separate so CI tests it without CUDA.
#pragma once

#include <vector>

namespace servesim::kernels {

struct ProfileRow;

struct TimingStats {
  int reps = 0;
  double median_us = 0, p10_us = 0, p90_us = 0, min_us = 0, max_us = 0;
};

// Order statistics (linear interpolation between closest ranks). REQUIRES: non-empty.
TimingStats summarize_samples(std::vector<double> samples_us);

// Copies reps and the statistics into the row (bytes/flops stay the caller's).
void fill_timing(ProfileRow& row, const TimingStats& stats);

// Samples to take for a point whose single run took estimate_us so that the timed work
// totals about target_ms: ceil(target / estimate) clamped to [min_reps, max_reps].
int adaptive_reps(double estimate_us, double target_ms, int min_reps, int max_reps);

}  // namespace servesim::kernels
