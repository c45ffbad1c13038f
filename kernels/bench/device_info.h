// Device discovery and provenance for the `servesim-kernels` binary (plain C++ API; the
// implementation in device_info.cu talks to the CUDA runtime, cuBLASLt and git).
#pragma once

#include <string>

#include "kernels/bench/profile_csv.h"

namespace servesim::kernels {

// True when at least one CUDA device is usable; *why gets the reason when not.
bool cuda_device_available(std::string* why);

// Number of SMs of the current device (used by the host-side planners).
int current_device_sm_count();

// One line describing the current device, for logs: "NVIDIA H100 80GB HBM3, 132 SMs, 79.1 GiB, cc 9.0".
std::string device_summary();

struct ProvenanceInput {
  std::string git_commit;  // empty: `git rev-parse HEAD` in the working directory, else the build's commit
  std::string mode;        // "quick" or "full"
  std::string families;    // selected families ("" = all)
  std::string command_line;
};

// Provenance lines of a profile: format, schema_version, gpu, sms, memory, clocks,
// driver / runtime / cuBLASLt versions, git commit, UTC date, host, mode.
Provenance collect_provenance(const ProvenanceInput& input);

}  // namespace servesim::kernels
