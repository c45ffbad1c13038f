// RunObserver: how the engine reports what happens, without knowing about
// files. reports/ implements it (CSV writers, summary statistics); tests
// implement it to inspect runs. Every request of the input is reported exactly
// once through on_request(), whatever its fate.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "costmodel/batch_shape.h"
#include "sim/request.h"

namespace servesim {

enum class RequestStatus : std::uint8_t {
  kFinished,
  kRejected,    // could never run (reason says why)
  kUnfinished,  // in flight when the horizon was reached
  kNotArrived,  // arrives after the horizon (never entered the simulation)
};

inline std::string_view status_name(RequestStatus s) {
  switch (s) {
    case RequestStatus::kFinished: return "finished";
    case RequestStatus::kRejected: return "rejected";
    case RequestStatus::kUnfinished: return "unfinished";
    case RequestStatus::kNotArrived: return "not_arrived";
  }
  return "?";
}

struct RequestOutcome {
  const RequestSpec* spec = nullptr;
  RequestStatus status = RequestStatus::kFinished;
  std::string_view reason;          // empty for finished requests
  bool routed = false;              // `worker` is meaningful
  WorkerId worker = 0;
  std::optional<Time> arrival;      // effective arrival (release time for dependents); none if never released
  std::optional<Time> admitted;     // first admission
  std::optional<Time> first_token;
  std::optional<Time> finish;
  std::int64_t cached_tokens = 0;   // prompt tokens served from the prefix cache at first admission
  std::int64_t generated_tokens = 0;
  std::int32_t preemptions = 0;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_request(const RequestOutcome& r) = 0;
  // One call per iteration, after it is built (start = its start time).
  virtual void on_iteration(WorkerId w, Time start, Time duration, const BatchShape& batch) {}
  // Called now and then (every few thousand events) and once at the end.
  virtual void on_progress(Time now, std::uint64_t reported, std::uint64_t in_flight) {}
};

}  // namespace servesim
