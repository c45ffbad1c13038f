// `servesim-kernels replay BATCHES.csv --model NAME [--tp N] -o replay.csv`:
// every iteration of a batch record (servesim run --record-batches) executed as
// a real forward pass on the GPU (replay_gpu.cuh), timed with CUDA events (warm-up runs,
// then timed runs back to back, median), written with the recorded prediction beside it.
// Output format: docs/costmodel.md, "Fidelity against real execution". Returns the exit
// code: 0 done, 1 a CUDA failure, 2 bad input (unknown model, malformed record).
#pragma once
#include "kernels/bench/cli_args.h"

namespace servesim::kernels {

int run_replay(const KernelsCli& cli);

}  // namespace servesim::kernels
