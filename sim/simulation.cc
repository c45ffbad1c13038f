// The event loop; see simulation.h for the event semantics.
#include "sim/simulation.h"

#include <algorithm>

#include <fmt/format.h>

namespace servesim {

Simulation::Simulation(SimulationSetup setup, RequestSource& source, RunObserver& observer)
    : global_(std::move(setup.global)), max_context_(setup.max_context), horizon_(setup.horizon), source_(source),
      observer_(observer), observes_iterations_(observer.wants_iterations()) {
  SIM_CHECK(!setup.workers.empty(), "a simulation needs at least one worker");
  SIM_CHECK(global_ != nullptr, "a simulation needs a global policy");
  for (std::size_t i = 0; i < setup.workers.size(); ++i) {
    WorkerSetup& w = setup.workers[i];
    workers_.push_back(std::make_unique<Worker>(static_cast<WorkerId>(i), std::move(w.policy), std::move(w.cost),
                                                w.batching, w.kv_capacity_pages, w.page_size, table_, &observer_,
                                                w.kv_eviction));
    if (w.kv_tiers.enabled()) workers_.back()->set_kv_tiers(w.kv_tiers, w.kv_bytes_per_token, w.host_default_gbps);
    estimate_costs_.push_back(std::move(w.estimate_cost));
  }
  wake_pending_.assign(workers_.size(), false);
  outstanding_.assign(workers_.size(), 0);  // (not resized again: the workers point into it)
  for (std::size_t i = 0; i < workers_.size(); ++i) workers_[i]->set_load_slot(&outstanding_[i]);
  if (setup.pd) {
    pd_ = std::move(setup.pd);
    const std::size_t n = workers_.size();
    SIM_CHECK(pd_->roles.size() == n && pd_->egress_gbps.size() == n && pd_->ingress_gbps.size() == n &&
                  pd_->kv_bytes_per_token.size() == n && pd_->decode_global,
              "PD setup does not describe all {} workers", n);
    std::vector<WorkerId> pre, dec;
    for (WorkerId w = 0; w < n; ++w) {
      if (pd_->roles[w] != WorkerRole::kDecode) pre.push_back(w);
      if (pd_->roles[w] != WorkerRole::kPrefill) dec.push_back(w);
    }
    SIM_CHECK(!pre.empty() && !dec.empty(), "a PD cluster needs a prefill-capable and a decode-capable worker");
    prefill_view_ = std::make_unique<PoolView>(static_cast<const ClusterView&>(*this), std::move(pre));
    decode_view_ = std::make_unique<PoolView>(static_cast<const ClusterView&>(*this), std::move(dec));
    std::vector<double> egress = pd_->egress_gbps, ingress = pd_->ingress_gbps;
    if (setup.store) {  // the store's node (its ingress is never used)
      egress.push_back(setup.store->bandwidth_gbps);
      ingress.push_back(setup.store->bandwidth_gbps);
    }
    network_ = std::make_unique<TransferNetwork>(std::move(egress), std::move(ingress));
    SIM_CHECK(pd_->streaming == PdStreaming::kNone || pd_->layers.size() == n,
              "PD layer-wise streaming needs the layers of all {} workers", n);
    for (std::int64_t l : pd_->layers) SIM_CHECK(l >= 1, "PD layer-wise streaming: a model with {} layers", l);
    kv_wait_.resize(n);
    decode_pending_.assign(n, 0);
  }
  if (setup.store) {
    const KvStoreSetup& s = *setup.store;
    const std::size_t n = workers_.size();
    SIM_CHECK(s.link_gbps.size() == n, "KV store setup does not describe all {} workers", n);
    store_ = std::make_unique<KvStore>(s.capacity_pages, s.page_size, s.kv_bytes_per_token, s.bandwidth_gbps, s.latency,
                                       s.placement);
    for (WorkerId w = 0; w < n; ++w) workers_[w]->set_store(store_.get(), pd_ ? pd_->ingress_gbps[w] : s.link_gbps[w]);
    store_node_ = static_cast<WorkerId>(n);
    if (!network_) {
      std::vector<double> egress = s.link_gbps, ingress = s.link_gbps;
      egress.push_back(s.bandwidth_gbps);
      ingress.push_back(s.bandwidth_gbps);
      network_ = std::make_unique<TransferNetwork>(std::move(egress), std::move(ingress));
    }
  }
}

WorkerLoad Simulation::load(WorkerId w) const {
  const Worker& wk = *workers_[w];
  WorkerLoad l;
  l.waiting = wk.waiting();
  l.running = running_load(w);
  l.kv_used_pages = wk.kv().used();
  l.kv_capacity_pages = wk.kv().capacity();
  l.kv_evictable_pages = wk.cache().evictable_pages();
  l.page_size = wk.kv().page_size();
  l.pending_prefill_tokens = wk.pending_prefill_tokens();
  l.running_context_tokens = wk.running_context_tokens();
  return l;
}

bool Simulation::pull_next() {
  if (lookahead_) return true;
  if (source_done_) return false;
  RequestSpec spec;
  spec.prefix_blocks = table_.spare_blocks();  // a released request's buffer: the copy allocates nothing
  if (!source_.next(spec)) {
    source_done_ = true;
    return false;
  }
  SIM_CHECK(spec.prompt_tokens >= 1 && spec.output_tokens >= 1,
            "source produced request {} with prompt {} / output {} tokens", spec.id, spec.prompt_tokens,
            spec.output_tokens);
  lookahead_ = std::move(spec);
  return true;
}

// Takes every source request up to and including the current instant;
// dependent requests are registered (not routed) as they come.
void Simulation::take_arrivals() {
  while (pull_next()) {
    if (lookahead_->parents.empty() && lookahead_->arrival > now_) break;
    SIM_CHECK(!lookahead_->parents.empty() || lookahead_->arrival == now_,
              "source went back in time: request {} arrives at {} ns, now is {} ns", lookahead_->id,
              lookahead_->arrival, now_);
    RequestHandle h = table_.add(std::move(*lookahead_));
    lookahead_.reset();
    LiveRequest& r = table_[h];
    r.dependents_unseen = r.spec.dependents;
    totals_.peak_live_requests = std::max(totals_.peak_live_requests, table_.live());
    if (r.spec.dependents > 0) deps_.add_parent(r.spec.id, h);
    if (r.spec.parents.empty()) {
      r.arrival = now_;
      admit_to_cluster(h);
    } else {
      register_dependent(h);
    }
  }
  if (lookahead_) events_.push(lookahead_->arrival, EventKind::kArrival);
}

void Simulation::register_dependent(RequestHandle h) {
  if (!deps_.add_child(h, table_, now_)) {
    report(h, RequestStatus::kRejected,
           "a parent request was rejected or unfinished, or did not appear before it in the input");
    return;
  }
  if (table_[h].parents_left == 0) schedule_release(h);
}

void Simulation::schedule_release(RequestHandle h) {
  ++pending_releases_;
  events_.push(table_[h].ready_at, EventKind::kRelease, h);
}

void Simulation::admit_to_cluster(RequestHandle h) {
  LiveRequest& r = table_[h];
  // on_arrival for exactly the requests whose outcome will carry an arrival (see report()).
  if (r.spec.parents.empty()) observer_.on_arrival(now_);
  if (r.spec.prompt_tokens + r.spec.output_tokens > max_context_) {
    report(h, RequestStatus::kRejected, "prompt + output tokens exceed the model's max_context");
    return;
  }
  if (pd_) {
    route_pd(h);
    return;
  }
  WorkerId w = global_->route(r.spec, *this);
  SIM_CHECK(w < workers_.size(), "global policy routed request {} to worker {} of {}", r.spec.id, w, workers_.size());
  r.worker = w;
  r.prefill_worker = w;
  r.decode_worker = w;
  r.routed = true;
  if (!r.spec.parents.empty()) observer_.on_arrival(now_);
  if (!workers_[w]->fits_alone(r.spec)) {
    report(h, RequestStatus::kRejected, "prompt + output tokens exceed the worker's whole KV capacity");
    return;
  }
  workers_[w]->enqueue(h, now_);
  wake(w);
}

// PD routing: the global policy sees only the prefill-capable workers, the
// decode policy only the decode-capable ones (PoolView maps the indices).
// A request prefilled on a mixed worker decodes there; only prefill-role
// workers hand off (so no two workers can wait on each other's memory).
void Simulation::route_pd(RequestHandle h) {
  LiveRequest& r = table_[h];
  auto pick_prefill = [&] { return prefill_view_->global(global_->route(r.spec, *prefill_view_)); };
  auto pick_decode = [&] { return decode_view_->global(pd_->decode_global->route(r.spec, *decode_view_)); };
  WorkerId p = 0, d = 0;
  if (pd_->decider == PdDecider::kPrefixAware) {
    d = pick_decode();
    r.routed_by_decode = true;
    const std::int64_t uncached = r.spec.prompt_tokens - workers_[d]->cached_prefix(r.spec);
    if (uncached <= pd_->threshold_tokens) {
      p = d;
    } else {
      p = pick_prefill();
      r.routed_by_global = true;
    }
  } else {
    p = pick_prefill();
    r.routed_by_global = true;
    if (pd_->roles[p] == WorkerRole::kPrefill) {
      d = pick_decode();
      r.routed_by_decode = true;
    } else {
      d = p;
    }
  }
  // Prefilled on a decode-capable worker: decodes there. A first token that
  // is the last: nothing to hand off.
  if ((pd_->roles[p] != WorkerRole::kPrefill || r.spec.output_tokens <= 1) && d != p) {
    d = p;
    r.routed_by_decode = false;
  }
  r.worker = p;
  r.prefill_worker = p;
  r.decode_worker = d;
  r.routed = true;
  if (!workers_[p]->fits_alone(r.spec) || !workers_[d]->fits_alone(r.spec)) {
    report(h, RequestStatus::kRejected, "prompt + output tokens exceed the worker's whole KV capacity");
    return;
  }
  if (d != p) decode_pending_[d]++;
  workers_[p]->enqueue(h, now_);
  wake(p);
}

// The prefill worker produced the first token: the request waits for room on
// its decode worker (FIFO per decode worker).
void Simulation::queue_handoff(RequestHandle h) {
  const WorkerId d = table_[h].decode_worker;
  if (auto it = streams_.find(h); it != streams_.end()) {  // layerwise: reserved when this iteration started
    workers_[d]->adopt_early(h);
    it->second.handed_off = true;
    if (it->second.flows_left == 0) {  // nothing to move: the decode worker's cache held it all
      streams_.erase(it);
      end_transfer(h);
    } else {  // the last layer of the final chunk leaves now
      events_.push(now_ + pd_->latency, EventKind::kTransferLatency, h | kTailFlow);
    }
    return;
  }
  kv_wait_[d].push_back(h);
  start_transfers(d);
}

// Bytes of the KV a reservation set to move (r.transfer_tokens), at the prefill worker's KV size per token.
std::int64_t Simulation::transfer_bytes(const LiveRequest& r) const {
  return static_cast<std::int64_t>(
      std::llround(static_cast<double>(r.transfer_tokens) * pd_->kv_bytes_per_token[r.prefill_worker]));
}

void Simulation::start_transfers(WorkerId d) {
  std::deque<RequestHandle>& q = kv_wait_[d];
  while (!q.empty() && workers_[d]->reserve_incoming(q.front(), now_)) {
    const RequestHandle h = q.front();
    q.pop_front();
    LiveRequest& r = table_[h];
    r.transfer_start = now_;
    r.transfer_bytes = transfer_bytes(r);
    if (r.transfer_bytes == 0) {  // the decode worker's cache held all of it
      end_transfer(h);
      continue;
    }
    events_.push(now_ + pd_->latency, EventKind::kTransferLatency, h);
  }
}

// target: the request's handle (a whole transfer, or a stream's bulk) or the
// handle | kTailFlow (a stream's tail).
void Simulation::on_transfer_latency(RequestHandle target) {
  if (store_ && (target & kStoreFlow) && !(target & kTailFlow)) {  // a store load's bytes start moving
    const StoreFlow& f = store_flows_[target & ~kStoreFlow];
    network_->start(target, store_node_, f.worker, f.bytes, now_);
    schedule_transfer_check();
    return;
  }
  const RequestHandle h = target & ~kTailFlow;
  const LiveRequest& r = table_[h];
  double bytes = static_cast<double>(r.transfer_bytes);
  if (auto it = streams_.find(h); it != streams_.end())
    bytes = (target & kTailFlow) ? it->second.tail_bytes : it->second.bulk_bytes;
  network_->start(target, r.prefill_worker, r.decode_worker, bytes, now_);
  schedule_transfer_check();
}

void Simulation::schedule_transfer_check() {
  const std::optional<Time> t = network_->next_finish();
  if (!t || std::find(checks_.begin(), checks_.end(), *t) != checks_.end()) return;
  checks_.push_back(*t);
  events_.push(*t, EventKind::kTransferProgress);
}

void Simulation::on_transfer_progress() {
  std::erase(checks_, now_);
  transfers_done_.clear();
  network_->complete(now_, transfers_done_);
  for (std::uint32_t id : transfers_done_) end_flow(id);
  schedule_transfer_check();
}

void Simulation::end_flow(std::uint32_t id) {
  if (store_ && (id & kStoreFlow) && !(id & kTailFlow)) {
    end_store_load(id & ~kStoreFlow);
    return;
  }
  const RequestHandle h = id & ~kTailFlow;
  auto it = streams_.find(h);
  if (it == streams_.end()) {
    end_transfer(h);
    return;
  }
  if (--it->second.flows_left > 0) return;
  // The tail starts only after the hand-off, so the request is no longer on the prefill worker's running set.
  SIM_CHECK(it->second.handed_off, "request {}: streamed KV arrived before its prefill ended", table_[h].spec.id);
  streams_.erase(it);
  end_transfer(h);
}

// Layer-wise streaming (docs/simulation.md): for each request whose prefill
// the iteration starting now on p completes and that p hands off, its decode
// worker reserves now, unless others wait for it there (FIFO) or it has no
// room (both: today's path at the hand-off). Of the B bytes to move, the last
// layer's share of the final chunk (final chunk's moved tokens x bytes per
// token / layers) leaves at the iteration end, the rest (bulk) now; each after
// the link latency, as max-min fair flows.
void Simulation::start_streams(WorkerId p) {
  final_chunks_.clear();
  workers_[p]->final_chunks(final_chunks_);
  for (const auto& [h, chunk] : final_chunks_) {
    LiveRequest& r = table_[h];
    const WorkerId d = r.decode_worker;
    SIM_CHECK(h < kTailFlow, "request handle {} too large for layer-wise streaming", h);
    if (!kv_wait_[d].empty() || !workers_[d]->reserve_early(h, now_)) continue;
    r.transfer_start = now_;
    const double per_token = pd_->kv_bytes_per_token[p];
    r.transfer_bytes = transfer_bytes(r);
    Stream s;
    if (r.transfer_bytes > 0) {
      const double final_tokens = static_cast<double>(std::min(chunk, r.transfer_tokens));
      s.tail_bytes = final_tokens * per_token / static_cast<double>(pd_->layers[p]);
      s.bulk_bytes = static_cast<double>(r.transfer_bytes) - s.tail_bytes;
      s.flows_left = 1;
      if (s.bulk_bytes > 0) {
        s.flows_left = 2;
        events_.push(now_ + pd_->latency, EventKind::kTransferLatency, h);
      }
    }
    streams_.emplace(h, s);
  }
}

// The KV arrived: the prefill worker frees its copy (and may admit again),
// the decode worker starts decoding the request.
void Simulation::end_transfer(RequestHandle h) {
  LiveRequest& r = table_[h];
  r.transfer_end = now_;
  const WorkerId p = r.prefill_worker, d = r.decode_worker;
  workers_[p]->release_handoff(h, now_);
  wake(p);
  decode_pending_[d]--;
  workers_[d]->accept_incoming(h, now_);
  wake(d);
}

void Simulation::start_store_loads(WorkerId w) {
  std::vector<Worker::StoreLoad>& loads = workers_[w]->store_loads();
  for (const Worker::StoreLoad& l : loads) {
    std::uint32_t slot;
    if (!free_store_flows_.empty()) {
      slot = free_store_flows_.back();
      free_store_flows_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(store_flows_.size());
      store_flows_.emplace_back();
    }
    SIM_CHECK(slot < kStoreFlow, "{} store loads in flight", slot);
    store_flows_[slot] = StoreFlow{l.h, w, l.serial, l.bytes};
    events_.push(now_ + store_->latency(), EventKind::kTransferLatency, kStoreFlow | slot);
  }
  loads.clear();
}

void Simulation::end_store_load(std::uint32_t slot) {
  const StoreFlow f = store_flows_[slot];
  free_store_flows_.push_back(slot);
  workers_[f.worker]->store_loaded(f.h, f.serial, now_);
  wake(f.worker);
}

void Simulation::wake(WorkerId w) {
  if (workers_[w]->busy() || wake_pending_[w]) return;
  wake_pending_[w] = true;
  events_.push(now_, EventKind::kWake, w);
}

void Simulation::start_iteration(WorkerId w) {
  Worker& wk = *workers_[w];
  const Time t = wk.start_iteration(now_);
  if (store_ && !wk.store_loads().empty()) start_store_loads(w);
  if (t > 0) {
    if (observes_iterations_) observer_.on_iteration(w, now_, t, wk.last_batch());
    events_.push(now_ + t, EventKind::kIterationEnd, w);
    if (pd_ && pd_->streaming == PdStreaming::kLayerwise) start_streams(w);
  }
}

void Simulation::on_iteration_end(WorkerId w) {
  done_.clear();
  workers_[w]->finish_iteration(now_, done_);
  for (RequestHandle h : done_) finish_request(h);
  if (pd_) {
    std::vector<RequestHandle>& out = workers_[w]->handoffs();
    for (RequestHandle h : out) queue_handoff(h);
    out.clear();
    if (!kv_wait_[w].empty()) start_transfers(w);  // requests finished here may have made room
  }
  start_iteration(w);
}

void Simulation::retire_parent(LiveRequest& r, bool ok) {
  deps_.retire(
      r, ok, now_, table_, [&](RequestHandle c) { schedule_release(c); },
      [&](RequestHandle c) { report(c, RequestStatus::kRejected, "a parent request was rejected or unfinished"); });
}

void Simulation::finish_request(RequestHandle h) {
  LiveRequest& r = table_[h];
  if (!pd_) {
    global_->on_finish(r.spec, r.worker, now_);
  } else {
    // Each policy hears of the requests it routed, by its pool's index.
    if (prefill_view_->contains(r.prefill_worker) && r.routed_by_global)
      global_->on_finish(r.spec, prefill_view_->local(r.prefill_worker), now_);
    if (r.routed_by_decode) pd_->decode_global->on_finish(r.spec, decode_view_->local(r.decode_worker), now_);
    // The local policy that scheduled the prefill hears of the finish too.
    if (r.prefill_worker != r.decode_worker) workers_[r.prefill_worker]->finished_elsewhere(r.spec);
  }
  report(h, RequestStatus::kFinished, "");
}

void Simulation::report(RequestHandle h, RequestStatus status, std::string_view reason) {
  LiveRequest& r = table_[h];
  RequestOutcome o;
  o.spec = &r.spec;
  o.status = status;
  o.reason = reason;
  o.routed = r.routed;
  o.worker = r.prefill_worker;
  if (r.routed) {
    o.prefill_worker = r.prefill_worker;
    o.decode_worker = r.decode_worker;
  }
  o.transfer_start = r.transfer_start;
  o.transfer_end = r.transfer_end;
  if (r.transfer_start) {
    o.transfer_bytes = r.transfer_bytes;
    // Layerwise streaming reserves before the prefill ends (no wait), possibly
    // even before a horizon cut it short (no prefill end).
    if (r.prefill_end) o.kv_wait = std::max<Time>(0, *r.transfer_start - *r.prefill_end);
  }
  if (r.routed || r.spec.parents.empty()) o.arrival = r.arrival;
  o.admitted = r.admitted;
  o.first_token = r.first_token;
  if (status == RequestStatus::kFinished) o.finish = now_;
  o.cached_tokens = r.cached;
  o.generated_tokens = r.generated;
  o.preemptions = r.preemptions;
  observer_.on_request(o);
  totals_.requests++;
  switch (status) {
    case RequestStatus::kFinished: totals_.finished++; break;
    case RequestStatus::kRejected: totals_.rejected++; break;
    case RequestStatus::kUnfinished: totals_.unfinished++; break;
    case RequestStatus::kNotArrived: totals_.not_arrived++; break;
  }
  // Dependents learn their parent's fate; failed ones are reported recursively.
  retire_parent(r, status == RequestStatus::kFinished);
  r.phase = Phase::kFinished;
  table_.release(h);
}

void Simulation::report_spec(const RequestSpec& spec, RequestStatus status, std::string_view reason) {
  RequestOutcome o;
  o.spec = &spec;
  o.status = status;
  o.reason = reason;
  observer_.on_request(o);
  totals_.requests++;
  if (status == RequestStatus::kNotArrived) totals_.not_arrived++;
}

void Simulation::sample_until(Time t) {
  if (!sample_interval_ || next_sample_ > t) return;
  const Time step = *sample_interval_;
  // No event happens in [next_sample_, t], so every sample there is the same
  // state. A stretch of more than kMaxIdleSamples instants is written as its
  // first and last instant only: the cost follows the events, not the
  // simulated time (an epoch-seconds trace would otherwise write ~10^9 rows).
  const Time count = (t - next_sample_) / step + 1;
  if (count > kMaxIdleSamples) {
    observer_.on_sample(next_sample_, *this);
    next_sample_ += (count - 1) * step;
  }
  for (; next_sample_ <= t; next_sample_ += step) observer_.on_sample(next_sample_, *this);
}

bool Simulation::work_left() const { return !source_done_ || lookahead_.has_value() || table_.live() > 0; }

void Simulation::drain_at_horizon() {
  // Running requests' hot state lives in their workers until written back (sim/worker.h).
  for (auto& w : workers_) w->write_back();
  // In-flight requests, in slot order (deterministic).
  for (RequestHandle h = 0; h < table_.slots(); ++h) {
    LiveRequest& r = table_[h];
    if (r.phase == Phase::kFinished) continue;  // free slot or already reported
    if (r.phase == Phase::kPending)
      report(h, RequestStatus::kUnfinished, "waiting for parent requests at the horizon");
    else
      report(h, RequestStatus::kUnfinished, "in flight at the horizon");
  }
  // Requests the source still holds never arrived.
  while (pull_next()) {
    RequestSpec spec = std::move(*lookahead_);
    lookahead_.reset();
    report_spec(spec, RequestStatus::kNotArrived, "arrives after the horizon");
  }
}

SimulationTotals Simulation::run() {
  if (pull_next()) {
    totals_.first_arrival = lookahead_->parents.empty() ? lookahead_->arrival : 0;
    events_.push(totals_.first_arrival, EventKind::kArrival);
  }
  if (auto period = global_->timer_period()) {
    SIM_CHECK(*period > 0, "global policy timer period must be > 0");
    events_.push(totals_.first_arrival + *period, EventKind::kTimer, 0);
  }
  if (pd_) {  // the decode policy's own timer (target 1)
    if (auto period = pd_->decode_global->timer_period()) {
      SIM_CHECK(*period > 0, "decode policy timer period must be > 0");
      events_.push(totals_.first_arrival + *period, EventKind::kTimer, 1);
    }
  }
  sample_interval_ = observer_.sample_interval();
  if (sample_interval_) SIM_CHECK(*sample_interval_ > 0, "sample interval must be > 0");
  bool stopped_at_horizon = false;
  while (!events_.empty()) {
    const Event& top = events_.top();
    if (horizon_ && top.time > *horizon_) {
      stopped_at_horizon = true;
      break;
    }
    Event e = events_.pop();
    SIM_CHECK(e.time >= now_, "time went backwards: event at {} ns after {} ns", e.time, now_);
    // The state just before this instant (sample_until's own test, inline: most events pass no sample).
    if (e.time > now_ && sample_interval_ && next_sample_ < e.time) sample_until(e.time - 1);
    now_ = e.time;
    ++totals_.events;
    switch (e.kind) {
      case EventKind::kArrival: take_arrivals(); break;
      case EventKind::kRelease: {
        --pending_releases_;
        LiveRequest& r = table_[e.target];
        r.arrival = now_;
        admit_to_cluster(e.target);
        break;
      }
      case EventKind::kWake: {
        wake_pending_[e.target] = false;
        if (!workers_[e.target]->busy()) start_iteration(e.target);
        break;
      }
      case EventKind::kIterationEnd: on_iteration_end(e.target); break;
      case EventKind::kTransferLatency: on_transfer_latency(e.target); break;
      case EventKind::kTransferProgress: on_transfer_progress(); break;
      case EventKind::kTimer: {
        // Each routing policy's timer sees the workers it routes over.
        GlobalPolicy& g = e.target == 0 ? *global_ : *pd_->decode_global;
        const ClusterView& view = !pd_ ? static_cast<const ClusterView&>(*this)
                                  : e.target == 0 ? static_cast<const ClusterView&>(*prefill_view_)
                                                  : static_cast<const ClusterView&>(*decode_view_);
        g.on_timer(view);
        if (work_left()) events_.push(now_ + *g.timer_period(), EventKind::kTimer, e.target);
        break;
      }
    }
    if ((totals_.events & 0xFFFF) == 0) observer_.on_progress(now_, totals_.requests, table_.live());
  }
  if (stopped_at_horizon || work_left()) {
    SIM_CHECK(stopped_at_horizon, "event queue ran dry with {} live requests (a request would be lost)",
              table_.live());
    drain_at_horizon();
  }
  totals_.end_time = stopped_at_horizon ? *horizon_ : now_;
  sample_until(totals_.end_time);
  SIM_CHECK(table_.live() == 0, "{} requests were never reported", table_.live());
  for (auto& w : workers_) w->report_held_tokens();  // the local policies' final state, whole
  observer_.on_progress(now_, totals_.requests, 0);
  return totals_;
}

}  // namespace servesim
