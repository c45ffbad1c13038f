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
#include <vector>

#include "sim/core/request_handle.h"
#include "sim/core/request.h"
#include "sim/core/time.h"

namespace servesim {

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
  kBatchFull,   // no token budget left this step: stop trying
  kNoSlot,      // the running-request cap is reached: stop trying (a preemption could free a slot)
};

// A running request, as a policy that preempts (SRTF) sees it.
struct RunningRequest {
  RequestHandle handle = 0;
  const RequestSpec* spec = nullptr;
  std::int64_t generated = 0;  // output tokens produced so far
};

// Engine-side view of one scheduling step on one worker.
class AdmissionContext {
 public:
  virtual ~AdmissionContext() = default;
  virtual Time now() const = 0;
  virtual AdmitResult try_admit(const QueuedRequest& r) = 0;
  // Tokens of r's prompt found in this worker's prefix cache right now (at
  // most r.prefill_tokens - 1: one token is always computed). O(1) amortized:
  // the engine keeps each waiting request's match up to date incrementally.
  virtual std::int64_t cached_tokens(const QueuedRequest& r) const = 0;
  // Identifies the first block r would have to compute that another waiting
  // request could share: (deepest cached node, next block id). 0 when r has
  // no prefix blocks left to compute. Equal keys = the same uncached block
  // under the same cached prefix (SGLang's in-queue prefix dedup).
  virtual std::uint64_t uncached_prefix_key(const QueuedRequest& r) const = 0;
  virtual std::int64_t running() const = 0;
  // True while this step has token budget and a running slot left (memory is
  // only known by trying). DLPM refills deficits only when the batch has room.
  virtual bool has_room() const = 0;
  // For preempting policies (SRTF): the running set, and preemption by
  // recomputation of one of its requests (it leaves this step's batch, frees
  // its KV and comes back through LocalPolicy::enqueue with preempted=true,
  // possibly while schedule() runs). Returns false if h is not running.
  virtual void running_requests(std::vector<RunningRequest>& out) const = 0;
  virtual bool preempt(RequestHandle h) = 0;
};

// A value a policy reports for summary.csv (e.g. the LTR ranker's achieved
// Kendall τ). The wiring merges each name over the workers' instances:
// kMean is the weight-weighted mean (weight = samples behind the value;
// weight-0 values are left out, none left gives an empty field), kSum adds.
struct PolicyMetric {
  enum class Merge { kMean, kSum };
  std::string name;
  double value = 0;
  double weight = 1;
  Merge merge = Merge::kMean;
};

class LocalPolicy {
 public:
  virtual ~LocalPolicy() = default;
  virtual void enqueue(const QueuedRequest& r) = 0;
  // Proposes waiting requests in policy order until the context says kBatchFull/kNoSlot
  // or the queue is exhausted. Must erase every admitted request.
  virtual void schedule(AdmissionContext& ctx) = 0;
  virtual std::size_t queued() const = 0;
  // Accounting hook: output tokens generated for a client on this worker
  // (every generated token, the one that ends a prefill included). Input
  // tokens are charged by the policy itself when try_admit succeeds (it can
  // ask cached_tokens() first to charge extend tokens only).
  virtual void on_decode_tokens(ClientId client, std::int64_t tokens) {}
  // True when on_decode_tokens does something. The worker calls on_decode_tokens
  // (once per token) only for a policy that says so, so a policy that overrides
  // it must override this too (policy_conformance_test checks the ones shipped).
  virtual bool counts_decode_tokens() const { return false; }
  // Exactly n calls of on_decode_tokens(client, 1) in a row (the worker's decode
  // lane reports a step's tokens per client this way). A policy may override it
  // with the same effect, bit for bit, minus the calls.
  virtual void on_decode_token_each(ClientId client, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) on_decode_tokens(client, 1);
  }
  // True when nothing on_finish does depends on what on_decode_tokens did (it reads
  // no state those calls change). The worker may then report a decode step's tokens
  // all at once, per client (on_decode_token_each), before that step's finishes,
  // instead of each member's token just before its own or the next finisher's
  // on_finish: the same calls per client in the same order, only moved ahead of
  // on_finish. False (the default): the step-by-step order is kept.
  virtual bool finish_ignores_decode_tokens() const { return false; }
  // True when what on_decode_tokens changes is read only by schedule() while
  // requests wait (queued() > 0) and by metrics(); requires
  // finish_ignores_decode_tokens(). The worker may then hold each client's decode
  // tokens and report them (on_decode_token_each, one call per client) only right
  // before such a schedule() and when the run ends, instead of every step: the
  // same calls per client in the same order, merged (n then m calls are n + m).
  virtual bool defers_decode_tokens() const { return false; }
  // A request finished: on the worker where it finished and, after a PD hand-off, also
  // on the worker whose policy scheduled its prefill (each hears it once).
  virtual void on_finish(const RequestSpec& spec) {}
  // Summary values (see PolicyMetric), asked once after the run.
  virtual void metrics(std::vector<PolicyMetric>& out) const {}
};

}  // namespace servesim
