// Worker: one model replica running continuous batching (see
// docs/simulation.md and ../shared/spec/simulation.md, "Iteration loop").
//
// The engine calls start_iteration() when the worker is idle and has work, or
// right after finish_iteration(). start_iteration builds the batch:
//   1. running decode requests, one token each (allocating a KV page when a
//      request crosses a page boundary; if none is free, preempt the most
//      recently admitted running request by recomputation);
//   2. continuing prefill chunks of admitted requests, oldest first;
//   3. new admissions proposed by the local policy, under the token budget,
//      the running cap and KV memory (all uncached prompt pages are allocated
//      at admission, leaving reservation_ratio of the pool free when others run);
// (prefill-first mode does 2+3 and only falls back to 1 when they are empty),
// then asks the cost model for the iteration's duration.
// finish_iteration() applies the results: chunks advance, the iteration that
// completes a prefill produces the first token, each decode produces one
// token, and requests that reach their output length finish and free their KV.
#pragma once
#include <memory>
#include <vector>

#include "costmodel/batch_shape.h"
#include "costmodel/cost_model.h"
#include "policies/local_policy.h"
#include "sim/batching_options.h"
#include "sim/kv_pool.h"
#include "sim/live_request.h"
#include "sim/worker_stats.h"

namespace servesim {

class Worker final : private AdmissionContext {
 public:
  Worker(WorkerId id, std::unique_ptr<LocalPolicy> policy, std::shared_ptr<const CostModel> cost,
         BatchingOptions opt, std::int64_t kv_capacity_pages, std::int64_t page_size, RequestTable& table);

  WorkerId id() const { return id_; }
  bool busy() const { return busy_; }
  bool has_work() const { return waiting_ > 0 || !running_.empty(); }
  std::int64_t waiting() const { return waiting_; }
  std::int64_t running() const override { return static_cast<std::int64_t>(running_.size()); }
  const KvPool& kv() const { return kv_; }
  const CostModel& cost_model() const { return *cost_; }
  const WorkerStats& stats() const { return stats_; }
  std::int64_t pending_prefill_tokens() const { return pending_prefill_tokens_; }
  std::int64_t running_context_tokens() const;
  // True when the request could run on this worker alone (else the engine rejects it).
  bool fits_alone(const RequestSpec& spec) const;

  // A routed request joins the waiting queue. REQUIRES: phase kPending/kQueued.
  void enqueue(RequestHandle h, Time now);
  // Builds and starts the next iteration; returns its duration, or 0 when
  // there is nothing to run (the worker goes idle). REQUIRES: !busy().
  Time start_iteration(Time now);
  // Applies the iteration that just ended; appends finished handles to `done`.
  void finish_iteration(Time now, std::vector<RequestHandle>& done);
  const BatchShape& last_batch() const { return shape_; }

 private:
  struct Item {
    RequestHandle h;
    std::int64_t tokens;
    bool prefill;
  };
  // AdmissionContext
  Time now() const override { return now_; }
  AdmitResult try_admit(const QueuedRequest& r) override;
  std::int64_t cached_tokens(const QueuedRequest& r) const override { return 0; }

  void schedule_decodes();
  void schedule_prefill_chunks();
  void add_prefill_chunk(RequestHandle h);
  void preempt(RequestHandle h);
  std::int64_t private_tokens_after_step(const LiveRequest& r) const;
  void check_invariants() const;

  WorkerId id_;
  std::unique_ptr<LocalPolicy> policy_;
  std::shared_ptr<const CostModel> cost_;
  BatchingOptions opt_;
  KvPool kv_;
  RequestTable& table_;

  std::vector<RequestHandle> running_;  // admission order (the back is preempted first)
  std::int64_t waiting_ = 0;
  std::int64_t pending_prefill_tokens_ = 0;
  bool busy_ = false;
  Time now_ = 0;
  std::int64_t budget_ = 0;  // tokens left in the iteration being built
  std::vector<Item> items_;
  BatchShape shape_;
  WorkerStats stats_;
};

}  // namespace servesim
