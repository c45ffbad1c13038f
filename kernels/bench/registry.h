// Kernel-family registry of the `servesim-kernels` binary.
//
// A *family* is one group of GPU kernels with a shared CPU reference (dense decode,
// dense prefill, GEMM, ceilings, elementwise, Quest, MInference, AnDPro). Each family
// registers itself once, from its own .cu file, with a static registrar:
//
//   namespace { int check_decode(const CheckOptions&);  void bench_decode(const BenchOptions&, ProfileWriter&); }
//   SERVESIM_REGISTER_KERNEL_FAMILY(decode, {.name = "decode", .description = "...",
//                                            .check = check_decode, .bench = bench_decode, .order = 20});
//
// The binary's `check` runs every family's check, `bench` every family's bench, in
// (order, name) order; `--family a,b` selects by name. Registrars must live in source
// files compiled *directly into the executable* (the SERVESIM_KERNELS_CUDA_SOURCES list
// of kernels/CMakeLists.txt), never in a static library, or the linker drops them.
//
// Contracts:
//  * check(): returns the number of failed cases (0 = all passed). It allocates its own
//    inputs from fresh seeded random data, poisons outputs with NaN before launching, and
//    prints one line per case (see check_report.h). It never exits the process.
//  * bench(): appends rows to the ProfileWriter (profile_csv.h), one per measured point,
//    timing with gpu_timer.cuh (CUDA events, warm-up, L2 flush, median/p10/p90). It must
//    respect options.quick (a smoke-test grid that runs in seconds), and call
//    bench_admit(options, "what") before starting each grid point: when the run's time
//    budget (bench_budget.h) is spent it returns false and the point is listed as skipped.
//  * Families may throw std::runtime_error (e.g. a CUDA error); main reports it as a
//    failure of that family and continues with the next.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::kernels {

class ProfileWriter;  // profile_csv.h
class BenchBudget;    // bench_budget.h

struct CheckOptions {
  bool quick = false;   // small shapes only (the CTest gpu test and the sanitizer run use this)
  uint64_t seed = 1;    // base seed of the random inputs; each case derives its own
  bool verbose = false; // print per-case details (errors, shapes) even when passing
};

struct BenchOptions {
  bool quick = false;         // smoke-test grid: a few points, few repetitions
  uint64_t seed = 1;
  double target_ms_per_point = 40.0;  // adaptive repetitions aim at this much timed work
  int min_reps = 5;           // never fewer samples than this (3 in quick mode)
  int max_reps = 50;          // never more samples than this
  BenchBudget* budget = nullptr;  // the run's time budget; null = unlimited (not owned)
};

// True when the next grid point ("decode llama3-8b B=8 ctx=4096") may start; false (and
// the point recorded as skipped) once options.budget is spent. Defined in bench_budget.cc.
bool bench_admit(const BenchOptions& options, const std::string& point);

using CheckFn = int (*)(const CheckOptions&);
using BenchFn = void (*)(const BenchOptions&, ProfileWriter&);

struct KernelFamily {
  std::string name;         // short, lowercase, unique: used by --family and in logs
  std::string description;  // one line for `servesim-kernels list`
  CheckFn check = nullptr;  // may be null when a family has nothing to check
  BenchFn bench = nullptr;  // may be null when a family has nothing to time
  int order = 100;          // lower runs first (ceilings 10, gemm 20, decode 30, prefill 40, sparse >= 100)
};

// Adds a family. REQUIRES: name not registered yet (a duplicate aborts at startup with a message).
void register_kernel_family(KernelFamily family);

// All registered families sorted by (order, name).
std::vector<KernelFamily> kernel_families();

// Families whose names appear in a comma-separated list ("" selects all). Unknown names
// are returned in *unknown (if not null) so main can report them as errors.
std::vector<KernelFamily> select_kernel_families(const std::string& comma_list,
                                                 std::vector<std::string>* unknown);

struct KernelFamilyRegistrar {
  explicit KernelFamilyRegistrar(KernelFamily family) { register_kernel_family(std::move(family)); }
};

}  // namespace servesim::kernels

#define SERVESIM_REGISTER_KERNEL_FAMILY(ident, ...) \
  static const ::servesim::kernels::KernelFamilyRegistrar servesim_kernel_family_##ident{ \
      ::servesim::kernels::KernelFamily __VA_ARGS__}
