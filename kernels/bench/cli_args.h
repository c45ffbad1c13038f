// Command line of `servesim-kernels`. Hand-written on purpose: the GPU machines that run
// calibration have CUDA, CMake and a C++ compiler but not necessarily CLI11, and this
// binary must build there from kernels/ alone (docs/kernels.md, "Building").
//
//   servesim-kernels list
//   servesim-kernels check [--quick] [--family a,b] [--seed N] [--verbose]
//   servesim-kernels bench [--quick] [--family a,b] [--seed N] -o profile.csv
//                          [--git-commit SHA] [--target-ms X]
#pragma once

#include <cstdint>
#include <string>

namespace servesim::kernels {

struct KernelsCli {
  std::string command;     // "list", "check", "bench" or "help"
  bool quick = false;
  std::string families;    // comma-separated family names; empty = all
  std::string output;      // bench: CSV path (required)
  uint64_t seed = 1;
  bool verbose = false;
  std::string git_commit;  // bench provenance override (else `git rev-parse HEAD`)
  double target_ms = 0;    // bench: timed work per point; 0 = the default
};

// Parses argv[1..]. Returns false with a one-line *error on unknown options, missing
// values, a missing subcommand, or bench without -o.
bool parse_kernels_cli(int argc, const char* const* argv, KernelsCli* cli, std::string* error);

std::string kernels_cli_usage();

}  // namespace servesim::kernels
