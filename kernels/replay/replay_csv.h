// replay.csv, the output of `servesim-kernels replay` (docs/costmodel.md, "Fidelity
// against real execution"): its header and rows, formatted on the CPU so that a test
// (replay_plan_costmodel_test.cc) checks that `servesim calibrate fidelity` reads exactly
// what the GPU replay writes.
#pragma once
#include <string>
#include <vector>

#include "kernels/replay/batch_record.h"

namespace servesim::kernels {

struct ReplayMeasurement {
  double predicted_us = 0;             // the recorded prediction (less all-reduce time at tp > 1)
  std::vector<float> samples_ms;       // timed runs (CUDA event pairs), any order; >= 1
  int launches = 0;
  bool pages_reused = false;
};

// The '#' lines and the column header. `tp_note`: the all-reduce line for tp > 1.
std::string replay_csv_header(const std::string& record, const std::string& model, int tp, int warmup, int reps,
                              const std::string& device);
// One row: the measured time is the median of the samples (upper median for an even count).
std::string replay_csv_row(const RecordedIteration& it, const ReplayMeasurement& m);

}  // namespace servesim::kernels
