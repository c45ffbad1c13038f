// The options of the BurstGPT reader alone (burstgpt_reader.cc); the trace
// workload reads them from its `failed:` key (trace_options.cc).
#pragma once

namespace servesim {

// What a BurstGPT row with zero response tokens (a failed request) becomes:
// dropped and counted, kept with 1 output token, or an error.
enum class FailedRows { kDrop, kKeep, kError };

struct BurstGptOptions {
  FailedRows failed = FailedRows::kDrop;
};

}  // namespace servesim
