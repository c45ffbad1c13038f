// Timing of one benchmark point: CUDA events around each sample, warm-up first, L2
// flushed before every sample (so memory-bound kernels are measured cold, as in a real
// model where the previous layer evicted them), adaptive repetition count, and order
// statistics (median, p10, p90, min, max).
//
// Usage (inside a family's bench function):
//   GpuTimer timer;                        // owns the L2-flush buffer and events
//   TimingStats s = timer.measure(opts, [&](cudaStream_t st) { launch_my_kernel(args, st); });
//   row.median_us = s.median_us; ...       // or fill_timing(row, s)
// The callable must enqueue work on the given stream only and must not synchronise.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "kernels/bench/gpu_timer_stats.h"
#include "kernels/bench/registry.h"

namespace servesim::kernels {

class GpuTimer {
 public:
  GpuTimer();  // allocates the flush buffer (2x L2 size, at least 64 MiB) and a stream
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Runs `launch` once as warm-up, once cold to estimate its duration, then
  // adaptive_reps(estimate, target_ms_per_point, min_reps, max_reps) timed samples, each
  // preceded by an L2 flush that is not inside the timed interval. In quick mode
  // min_reps is at most 3.
  TimingStats measure(const BenchOptions& options, const std::function<void(cudaStream_t)>& launch);

  cudaStream_t stream() const { return stream_; }

  // Evicts L2 by streaming reads over the flush buffer (reads leave no dirty lines that
  // would be written back during the next timed sample).
  void flush_l2();

 private:
  cudaStream_t stream_ = nullptr;
  void* flush_buffer_ = nullptr;
  size_t flush_bytes_ = 0;
  int flush_blocks_ = 0;
  unsigned* flush_sink_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::vector<cudaEvent_t> events_;  // pool: two per sample
};

}  // namespace servesim::kernels
