// Simulation: the discrete-event engine. It pulls requests from a
// RequestSource, routes them with the GlobalPolicy, runs each Worker's
// iterations, releases dependent requests (sessions, DAGs) when their parents
// finish, and reports every request exactly once to the RunObserver.
//
// The engine names no concrete policy or cost model: everything arrives
// through SimulationSetup (built by the one wiring function in configs/).
//
// Event handling (order defined by EventQueue):
//  - kArrival: every source request with the current arrival time is taken
//    together (so same-instant arrivals are all routed before any idle worker
//    starts), then the next arrival is scheduled.
//  - kWake: an idle worker that received work starts an iteration at once.
//  - kIterationEnd: apply the iteration, report finished requests, release
//    their dependents, start the next iteration.
//  - kRelease: a dependent request whose parents finished (plus think time)
//    arrives and is routed.
//  - kTimer: the global policy's periodic hook.
//  - kTransferLatency: PD: a KV transfer's fixed latency has passed; its
//    bytes join the transfer network (target = request handle).
//  - kTransferProgress: PD: some transfer may have finished (re-checked;
//    stale ones find nothing).
//  Layer-wise streaming (PdSetup::streaming): when an iteration that completes
//  a hand-off request's prefill starts, its decode worker reserves at once
//  (no room, or others queued there: today's path); the KV then moves as two
//  flows, the bulk from latency after the iteration start and the last
//  layer's share of the final chunk from latency after its end; the transfer
//  ends when both have (docs/simulation.md, "Layer-wise streaming").
// Cluster KV store (SimulationSetup::store; sim/kv_store.h, docs/kv.md): one
// store shared by every worker. A worker admitting a request whose KV is
// partly in the store reports the load (Worker::store_loads); after the
// store's latency its bytes join the transfer network as a flow from the
// store's node (one more network node: egress = the store's bandwidth) to
// the worker (ingress = its link; in PD mode the same NIC as KV transfers),
// and when the flow ends the worker is told (Worker::store_loaded) and woken.
// PD disaggregation (SimulationSetup::pd; docs/simulation.md): prefills are
// routed by the global policy over the prefill-capable workers, the decode
// worker by pd.decode_global over the decode-capable ones; a request
// prefilled on a prefill-role worker is handed off at its first token: it
// waits (back-pressure, kv_wait) until the decode worker reserved pages for
// its KV, then its missing KV moves over the transfer network, then it decodes.
#pragma once
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "policies/global_policy.h"
#include "sim/dependency_tracker.h"
#include "sim/event_queue.h"
#include "sim/pool_view.h"
#include "sim/transfer_network.h"
#include "sim/live_request.h"
#include "sim/pd_modes.h"
#include "sim/core/request_source.h"
#include "sim/run_observer.h"
#include "sim/worker.h"

namespace servesim {

struct WorkerSetup {
  std::unique_ptr<LocalPolicy> policy;
  std::shared_ptr<const CostModel> cost;
  // What global policies see through ClusterView::cost_model (an estimate that
  // may differ from the truth, e.g. NoisyCostModel); null = `cost`.
  std::shared_ptr<const CostModel> estimate_cost;
  BatchingOptions batching;
  std::int64_t kv_capacity_pages = 0;
  std::int64_t page_size = 16;
  std::shared_ptr<const KvEviction> kv_eviction;  // KV eviction after prefill, or null (worker.h)
  // Tiered KV cache (Worker::set_kv_tiers), used when kv_tiers.enabled().
  KvTiersConfig kv_tiers;
  double kv_bytes_per_token = 0;
  double host_default_gbps = 0;  // host tier bandwidth when kv_tiers.host.bandwidth_gbps is 0
};

enum class WorkerRole : std::uint8_t { kMixed, kPrefill, kDecode };

// Prefill/decode disaggregation. Absent: every worker is mixed and routing is
// the global policy's alone (today's behaviour).
struct PdSetup {
  std::vector<WorkerRole> roles;                 // per worker
  std::unique_ptr<GlobalPolicy> decode_global;   // picks the decode worker (over the decode-capable pool)
  std::vector<double> egress_gbps, ingress_gbps; // per worker: link bandwidth, GB/s (= bytes/ns)
  Time latency = 0;                              // per transfer
  std::vector<double> kv_bytes_per_token;        // per worker: KV bytes of one token (the sender's)
  PdDecider decider = PdDecider::kAlways;
  std::int64_t threshold_tokens = 0;
  PdStreaming streaming = PdStreaming::kNone;
  std::vector<std::int64_t> layers;              // per worker: model layers (layerwise streaming only)
};

// The cluster KV store (absent: none).
struct KvStoreSetup {
  std::int64_t capacity_pages = 0;
  std::int64_t page_size = 16;
  double kv_bytes_per_token = 0;
  double bandwidth_gbps = 0;        // the store's egress
  std::vector<double> link_gbps;    // per worker: its ingress from the store (colocated; PD uses the PD links)
  Time latency = 0;
  KvStorePlacement placement = KvStorePlacement::kEvicted;
};

struct SimulationSetup {
  std::vector<WorkerSetup> workers;
  std::optional<PdSetup> pd;
  std::optional<KvStoreSetup> store;
  std::unique_ptr<GlobalPolicy> global;
  std::int64_t max_context = 0;       // prompt + output beyond this is rejected (model limit)
  std::optional<Time> horizon;        // stop here; in-flight requests are reported unfinished
};

struct SimulationTotals {
  std::uint64_t requests = 0;         // reported (all statuses)
  std::uint64_t finished = 0;
  std::uint64_t rejected = 0;
  std::uint64_t unfinished = 0;
  std::uint64_t not_arrived = 0;
  std::uint64_t events = 0;
  Time end_time = 0;                  // time of the last processed event
  Time first_arrival = 0;
  std::size_t peak_live_requests = 0;
};

class Simulation final : private ClusterView {
 public:
  Simulation(SimulationSetup setup, RequestSource& source, RunObserver& observer);
  SimulationTotals run();
  const std::vector<std::unique_ptr<Worker>>& worker_list() const { return workers_; }
  const KvStore* kv_store() const { return store_.get(); }

 private:
  // ClusterView
  Time now() const override { return now_; }
  std::size_t workers() const override { return workers_.size(); }
  WorkerLoad load(WorkerId w) const override;
  std::int64_t outstanding(WorkerId w) const override {  // load(w)'s waiting + running
    return outstanding_[w] + decodes_on_the_way(w);
  }
  // The base's loop with outstanding() bound directly (this class is final).
  WorkerId least_outstanding() const override {
    return least_of(workers_.size(), [this](WorkerId w) { return Simulation::outstanding(w); });
  }
  // WorkerLoad::running of w: PD decodes on their way there count as running.
  std::int64_t running_load(WorkerId w) const { return workers_[w]->running() + decodes_on_the_way(w); }
  // PD: decodes assigned to w whose KV has not arrived yet.
  std::int64_t decodes_on_the_way(WorkerId w) const { return pd_ ? decode_pending_[w] : 0; }
  KvLocality locality(WorkerId w, const RequestSpec& r) const override {
    return workers_[w]->kv_manager().probe(r);
  }
  const CostModel& cost_model(WorkerId w) const override {
    return estimate_costs_[w] ? *estimate_costs_[w] : workers_[w]->cost_model();
  }

  bool pull_next();  // fills lookahead_; false at end of stream
  void take_arrivals();
  void admit_to_cluster(RequestHandle h);
  void wake(WorkerId w);
  void start_iteration(WorkerId w);  // the one place an iteration starts
  void on_iteration_end(WorkerId w);
  void finish_request(RequestHandle h);
  void report(RequestHandle h, RequestStatus status, std::string_view reason);
  void report_spec(const RequestSpec& spec, RequestStatus status, std::string_view reason);
  void drain_at_horizon();
  // PD (see the header comment).
  void route_pd(RequestHandle h);
  void queue_handoff(RequestHandle h);
  std::int64_t transfer_bytes(const LiveRequest& r) const;
  void start_transfers(WorkerId d);  // back-pressure queue of decode worker d, in order
  void on_transfer_latency(RequestHandle target);  // handle, or handle | kTailFlow
  void on_transfer_progress();
  void end_transfer(RequestHandle h);
  void start_streams(WorkerId p);     // layerwise: early reservations for p's final prefill chunks
  void end_flow(std::uint32_t id);    // one network flow finished
  void schedule_transfer_check();
  void start_store_loads(WorkerId w);  // the loads w's last start_iteration admitted
  void end_store_load(std::uint32_t slot);
  void register_dependent(RequestHandle h);
  void retire_parent(LiveRequest& r, bool ok);
  void schedule_release(RequestHandle h);
  bool work_left() const;
  // Emits observer samples at multiples of the interval <= t; a stretch of
  // more than kMaxIdleSamples instants without an event gets its first and
  // last instant only (docs/reports.md, "timeline.csv").
  void sample_until(Time t);
  static constexpr Time kMaxIdleSamples = 100;

  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::shared_ptr<const CostModel>> estimate_costs_;  // per worker; null = the worker's own
  std::unique_ptr<GlobalPolicy> global_;
  std::int64_t max_context_;
  std::optional<Time> horizon_;
  RequestSource& source_;
  RunObserver& observer_;
  bool observes_iterations_ = true;  // observer_.wants_iterations(), asked once

  EventQueue events_;
  RequestTable table_;
  Time now_ = 0;
  std::optional<RequestSpec> lookahead_;
  bool source_done_ = false;
  std::vector<bool> wake_pending_;
  std::vector<RequestHandle> done_;
  DependencyTracker deps_;
  std::uint64_t pending_releases_ = 0;
  std::optional<Time> sample_interval_;
  Time next_sample_ = 0;
  SimulationTotals totals_;
  // PD state (pd_ absent: colocated).
  std::optional<PdSetup> pd_;
  std::unique_ptr<PoolView> prefill_view_, decode_view_;
  std::unique_ptr<TransferNetwork> network_;
  std::vector<std::deque<RequestHandle>> kv_wait_;  // per decode worker: hand-offs without room yet
  std::vector<std::int64_t> decode_pending_;        // per worker: assigned decodes not yet arrived
  std::vector<std::int64_t> outstanding_;  // per worker: its waiting + running, kept by the worker (set_load_slot)
  std::vector<Time> checks_;                        // times of pending kTransferProgress events
  std::vector<std::uint32_t> transfers_done_;
  // Layer-wise streaming: per streamed request, its flows (network id = handle
  // for the bulk, handle | kTailFlow for the last layer's share).
  struct Stream {
    double bulk_bytes = 0, tail_bytes = 0;
    int flows_left = 0;       // bulk (if any) + tail, until each finished
    bool handed_off = false;  // the prefill iteration ended
  };
  static constexpr std::uint32_t kTailFlow = 1u << 31;
  std::unordered_map<RequestHandle, Stream> streams_;
  // Cluster KV store: network node store_node_; each load in flight has a slot
  // (network id = kStoreFlow | slot).
  std::unique_ptr<KvStore> store_;
  WorkerId store_node_ = 0;
  struct StoreFlow {
    RequestHandle h;
    WorkerId worker;
    std::uint32_t serial;
    double bytes;
  };
  std::vector<StoreFlow> store_flows_;
  std::vector<std::uint32_t> free_store_flows_;
  static constexpr std::uint32_t kStoreFlow = 1u << 30;
  std::vector<std::pair<RequestHandle, std::int64_t>> final_chunks_;  // scratch
};

}  // namespace servesim
