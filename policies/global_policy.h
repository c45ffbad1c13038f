// GlobalPolicy: routes each arriving request to one worker. It sees the
// cluster through ClusterView (queue lengths, KV use, cost models) and may
// keep its own — possibly stale — state, updated through the hooks or through
// periodic timers it asks for. It never moves requests after routing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "sim/core/request.h"
#include "sim/core/time.h"

namespace servesim {

class CostModel;

struct WorkerLoad {
  std::int64_t waiting = 0;              // requests queued on the worker
  std::int64_t running = 0;              // requests admitted and not finished
  std::int64_t kv_used_pages = 0;          // private KV of running requests + prefix cache
  std::int64_t kv_capacity_pages = 0;
  std::int64_t kv_evictable_pages = 0;     // of kv_used_pages, unlocked prefix cache (free on demand)
  std::int64_t page_size = 16;             // tokens per KV page
  std::int64_t pending_prefill_tokens = 0;  // prompt tokens not yet computed (waiting + running)
  std::int64_t running_context_tokens = 0;  // KV tokens of running requests (decode cost driver)
};

// What one worker holds of a request's prompt prefix, by tier (tokens; the
// match is capped at prompt - 1 as at admission, and each block counts at the
// nearest tier holding it), and the uncontended time to bring the non-HBM
// part to that worker's HBM (ns). docs/kv.md.
struct KvLocality {
  std::int64_t hbm = 0, host = 0, ssd = 0, store = 0;
  Time load_ns = 0;
  std::int64_t total() const { return hbm + host + ssd + store; }
};

class ClusterView {
 public:
  virtual ~ClusterView() = default;
  virtual Time now() const = 0;
  virtual std::size_t workers() const = 0;
  virtual WorkerLoad load(WorkerId w) const = 0;
  // load(w).waiting + load(w).running, which views can answer without filling a
  // whole WorkerLoad (least-outstanding routing asks it of every worker per request).
  virtual std::int64_t outstanding(WorkerId w) const {
    const WorkerLoad l = load(w);
    return l.waiting + l.running;
  }
  // The worker with the fewest outstanding() requests, the lowest id among ties
  // (least-outstanding routing asks it per request: one call, not one per worker).
  // REQUIRES: workers() > 0.
  virtual WorkerId least_outstanding() const {
    return least_of(workers(), [this](WorkerId w) { return outstanding(w); });
  }
  // The w in [0, n) with the smallest count(w), the lowest among ties (n > 0).
  template <class Count>
  static WorkerId least_of(std::size_t n, Count count) {
    WorkerId best = 0;
    std::int64_t best_n = INT64_MAX;
    for (WorkerId w = 0; w < n; ++w) {
      const std::int64_t o = count(w);
      if (o < best_n) {
        best_n = o;
        best = w;
      }
    }
    return best;
  }
  virtual const CostModel& cost_model(WorkerId w) const = 0;
  // The real KV placement of r's prompt for worker w (the engine's view);
  // views that know nothing of KV report nothing.
  virtual KvLocality locality(WorkerId, const RequestSpec&) const { return {}; }
};

class GlobalPolicy {
 public:
  virtual ~GlobalPolicy() = default;
  virtual WorkerId route(const RequestSpec& r, const ClusterView& cluster) = 0;
  virtual void on_finish(const RequestSpec& r, WorkerId w, Time now) {}
  // A policy that needs periodic work returns its period; on_timer is then
  // called at every multiple of it while the simulation has work left.
  virtual std::optional<Time> timer_period() const { return std::nullopt; }
  virtual void on_timer(const ClusterView& cluster) {}
};

}  // namespace servesim
