// RunObserver: how the engine reports what happens, without knowing about
// files. reports/ implements it (CSV writers, summary statistics); tests
// implement it to inspect runs. Every request of the input is reported exactly
// once through on_request(), whatever its fate.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "costmodel/batch_shape.h"
#include "policies/global_policy.h"
#include "sim/core/request.h"

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
  // Prefill/decode placement (routed requests; equal when colocated) and the
  // PD hand-off: transfer times and bytes, and the wait for room on the decode
  // worker (transfer start − end of the prefill); empty without a transfer.
  std::optional<WorkerId> prefill_worker, decode_worker;
  std::optional<Time> transfer_start, transfer_end;
  std::optional<std::int64_t> transfer_bytes;
  std::optional<Time> kv_wait;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_request(const RequestOutcome& r) = 0;
  // One call per iteration, after it is built (start = its start time), while
  // wants_iterations(): an observer that ignores iterations says false, and the engine
  // then neither calls it nor writes what only a reader of the batch needs (the decode
  // lane's context values, sim/worker.h). Asked once, when the simulation is built.
  virtual void on_iteration(WorkerId w, Time start, Time duration, const BatchShape& batch) {}
  virtual bool wants_iterations() const { return true; }
  // Sampling: when sample_interval() is set, on_sample() is called at every
  // multiple of it up to the end of the run, with the cluster state at that
  // instant. State only changes at events, so samples are exact and add no
  // events (outputs other than the samples are unchanged).
  virtual std::optional<Time> sample_interval() const { return std::nullopt; }
  virtual void on_sample(Time t, const ClusterView& cluster) {}
  // Service accounting for fairness metrics (reports/fairness_tracker.h),
  // called in non-decreasing time order:
  //  - a request joins a worker's waiting queue (when routed, and again after
  //    a preemption);
  //  - it leaves the queue into a batch; `cached` of its prompt tokens came
  //    from the prefix cache; `first` is false for a re-admission after a
  //    preemption;
  //  - `n` output tokens were generated for `client` (the token that ends a
  //    prefill included); a worker reports each iteration's tokens once per
  //    client, after applying the iteration.
  virtual void on_queued(ClientId client, Time t) {}
  // A request arrived: once per request whose RequestOutcome will carry an
  // arrival, at that arrival (before its on_queued), in time order with the
  // hooks above (the measurement window's start and end, reports/window.h).
  virtual void on_arrival(Time t) {}
  virtual void on_admitted(const RequestSpec& spec, Time t, std::int64_t cached, bool first) {}
  virtual void on_output_tokens(ClientId client, Time t, std::int64_t n) {}
  // Called now and then (every few thousand events) and once at the end.
  virtual void on_progress(Time now, std::uint64_t reported, std::uint64_t in_flight) {}
};

}  // namespace servesim
