// Command line of `servesim-kernels`. Hand-written on purpose: the GPU machines that run
// calibration have CUDA, CMake and a C++ compiler but not necessarily CLI11, and this
// binary must build there from kernels/ alone (docs/kernels.md, "Building").
//
//   servesim-kernels list
//   servesim-kernels check [--quick] [--family a,b] [--seed N] [--verbose]
//   servesim-kernels bench [--quick] [--family a,b] [--seed N] -o profile.csv
//                          [--git-commit SHA] [--target-ms X] [--budget-s S]
//   servesim-kernels merge -o profile.csv part1.csv part2.csv ...   (no GPU needed)
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
  std::vector<std::string> inputs;  // merge: the per-family profiles, in order
};

// Parses argv[1..]. Returns false with a one-line *error on unknown options, missing
// values, a missing subcommand, bench or merge without -o, or merge without inputs.
bool parse_kernels_cli(int argc, const char* const* argv, KernelsCli* cli, std::string* error);

std::string kernels_cli_usage();

}  // namespace servesim::kernels
