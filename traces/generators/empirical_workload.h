// EmpiricalWorkload: synthetic arrivals with prompt/output lengths resampled
// from a real trace (its empirical distribution). The trace is read once at
// open() (at most `max_rows` rows; only the two lengths are kept: 8 bytes a
// row). `joint: true` draws (prompt, output) pairs from one row, keeping
// their correlation; `joint: false` draws the two from independent rows.
//
//   workload:
//     type: empirical
//     path: ../shared/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv
//     format: auto                 # as for type: trace
//     skip_bad_rows: false
//     max_rows: 0                  # rows read from the trace (0 = all)
//     joint: true
//     requests: 1000               # and/or duration_s
//     rate: 5                      # requests per second
//     arrival: poisson             # or {process: gamma, cv: 2}
//     client: default
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/rng.h"
#include "traces/generators/arrival_spec.h"
#include "traces/readers/trace_reader.h"
#include "traces/workload.h"

namespace servesim {

// The (prompt, output) lengths of a trace, for resampling.
class EmpiricalLengths {
 public:
  // Reads up to max_rows rows (0 = all); throws InputError on bad input or
  // an empty trace.
  EmpiricalLengths(const std::string& path, const TraceReadOptions& opt, std::int64_t max_rows);
  std::pair<std::int64_t, std::int64_t> sample(Rng& rng, bool joint) const;
  std::size_t size() const { return rows_.size(); }

 private:
  std::vector<std::pair<std::int32_t, std::int32_t>> rows_;
};

struct EmpiricalSpec {
  std::string path;
  TraceReadOptions read;
  std::int64_t max_rows = 0;
  bool joint = true;
  ArrivalSpec arrivals;
  std::string client = "default";
};

// path (required), format, skip_bad_rows, max_rows, joint, rate, arrival,
// requests, duration_s, client: every key of `type: empirical`, in the order
// config.resolved.yaml states them.
const OptionTable<EmpiricalSpec>& empirical_options();

class EmpiricalWorkload final : public Workload {
 public:
  explicit EmpiricalWorkload(EmpiricalSpec spec) : spec_(std::move(spec)) {}
  YAML::Node resolved() const override;
  std::unique_ptr<RequestSource> open(ClientTable& clients, std::uint64_t seed) const override;

 private:
  EmpiricalSpec spec_;
};

std::unique_ptr<Workload> parse_empirical_workload(YamlMap& m);

}  // namespace servesim
