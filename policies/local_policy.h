// LocalPolicy: decides which waiting requests of ONE worker join its next
// batch, and in what order. Policies decide; the engine applies: a policy
// never allocates KV or advances time — it proposes requests through
// AdmissionContext::try_admit(), and the engine checks budgets and memory.
//
// Ownership: the policy keeps its own waiting queue (any order/structure it
// likes). The engine hands requests in with enqueue() (new arrivals and
// preempted requests) and the policy must drop each request it successfully
// admitted. The engine checks after every step that queued() equals its own
// count of waiting requests (no request is ever lost).
//
// Work conservation: when the worker has nothing running and something is
// waiting, a policy must admit at least one request (the engine guarantees the
// oldest such request fits an empty worker); the engine checks this.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "sim/request.h"
#include "sim/time.h"

namespace servesim {

using RequestHandle = std::uint32_t;  // engine slot of a live request; stable while it lives

// What a local policy sees of a waiting request.
struct QueuedRequest {
  RequestHandle handle = 0;
  const RequestSpec* spec = nullptr;  // valid while the request is live
  Time enqueued = 0;                  // when it (re-)entered this worker's queue
  std::int64_t prefill_tokens = 0;    // tokens to compute (prompt, + generated after a preemption)
  bool preempted = false;             // re-queued after preemption by recomputation
};

enum class AdmitResult {
  kAdmitted,    // joined the batch; the policy must remove it from its queue
  kNoMemory,    // does not fit in free KV now (a smaller one might)
  kBatchFull,   // no token budget or running slot left this step: stop trying
};

// Engine-side view of one scheduling step on one worker.
class AdmissionContext {
 public:
  virtual ~AdmissionContext() = default;
  virtual Time now() const = 0;
  virtual AdmitResult try_admit(const QueuedRequest& r) = 0;
  // Tokens of r's prompt found in this worker's prefix cache right now.
  virtual std::int64_t cached_tokens(const QueuedRequest& r) const = 0;
  virtual std::int64_t running() const = 0;
};

class LocalPolicy {
 public:
  virtual ~LocalPolicy() = default;
  virtual void enqueue(const QueuedRequest& r) = 0;
  // Proposes waiting requests in policy order until the context says kBatchFull
  // or the queue is exhausted. Must erase every admitted request.
  virtual void schedule(AdmissionContext& ctx) = 0;
  virtual std::size_t queued() const = 0;
  // Accounting hook: tokens computed for a client on this worker (prefill extend
  // tokens at admission are reported via try_admit's result; decode tokens here).
  virtual void on_decode_tokens(ClientId client, std::int64_t tokens) {}
  virtual void on_finish(const RequestSpec& spec) {}
};

}  // namespace servesim
