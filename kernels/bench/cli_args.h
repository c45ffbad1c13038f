// Command line of `servesim-kernels`. Hand-written on purpose: the GPU machines that run
// calibration have CUDA, CMake and a C++ compiler but not necessarily CLI11, and this
// binary must build there from kernels/ alone (docs/kernels.md, "Building").
//
//   servesim-kernels list
//   servesim-kernels check [--quick] [--family a,b] [--seed N] [--verbose]
//   servesim-kernels bench [--quick] [--family a,b] [--seed N] -o profile.csv
//                          [--git-commit SHA] [--target-ms X] [--budget-s S]
//   servesim-kernels merge -o profile.csv part1.csv part2.csv ...   (no GPU needed)
//   servesim-kernels replay BATCHES.csv --model NAME [--tp N] -o replay.csv
//                           [--warmup N] [--reps N] [--kv-gb G] [--seed N]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::kernels {

struct KernelsCli {
  std::string command;     // "list", "check", "bench", "merge" or "help"
  bool quick = false;
  std::string families;    // comma-separated family names; empty = all
  std::string output;      // bench: CSV path (required)
  uint64_t seed = 1;
  bool verbose = false;
  std::string git_commit;  // bench provenance override (else `git rev-parse HEAD`)
  double target_ms = 0;    // bench: timed work per point; 0 = the default
  double budget_s = 0;     // bench: no grid point starts after this many seconds; 0 = no limit
  std::vector<std::string> inputs;  // merge: the per-family profiles, in order; replay: the batch record
  std::string model;       // replay: model name (kernels/replay/replay_plan.h)
  int tp = 1;              // replay: tensor-parallel degree (one GPU's shard is replayed)
  int warmup = 2;          // replay: untimed runs of each iteration before timing
  int reps = 5;            // replay: timed runs of each iteration (median reported)
  double kv_gb = 0;        // replay: GPU memory for the KV cache pools; 0 = 40 GB
  std::string prefill_variant = "auto";  // replay: auto | fa2 | hopper_wgmma (replay_gpu.cuh)
  bool sessions = false;   // merge: inputs from several measuring sessions (profile_merge.h)
  bool add_variants = false;  // merge --sessions: a repeated family adds only its new kernel variants
  std::string repeat;  // merge [--sessions] --repeat R.csv: drop the rows R did not repeat (profile_merge.h)
};

// Parses argv[1..]. Returns false with a one-line *error on unknown options, missing
// values, a missing subcommand, bench, merge or replay without -o, merge without inputs,
// or replay without its batch record or --model.
bool parse_kernels_cli(int argc, const char* const* argv, KernelsCli* cli, std::string* error);

std::string kernels_cli_usage();

}  // namespace servesim::kernels
