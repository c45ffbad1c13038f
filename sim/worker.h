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
//
// Prefix cache (sim/prefix_cache.h; one KV capacity shared with running
// requests): at admission a request locks its matched prefix and computes only
// the rest (the cost model sees the match as context). When its prefill
// completes, its prompt blocks join the cache (its private pages for them move
// to the cache, or are freed where another request inserted the same blocks
// first) and stay locked while it runs; at finish or preemption it unlocks
// them (evictable, not lost). Generated tokens have no block ids, so nothing
// could ever match them: their KV is freed at finish. Allocation evicts
// unlocked cache leaves (LRU) before it preempts anyone.
// KV eviction (optional, costmodel/kv_eviction.h; docs/simulation.md): when a request's
// prefill completes it keeps kept_tokens(n) of its n context tokens as a
// private compacted copy and frees the rest; its uncompressed prompt blocks
// stay in the prefix cache, unlocked (shared, evictable). Decode steps then
// read and grow the compacted copy.
// Tiered KV cache (optional, set_kv_tiers; sim/kv_tier.h, docs/simulation.md):
// cache leaves evicted from HBM are demoted to a host tier (then SSD) instead
// of dropped. At admission the match continues past the HBM part through the
// lower tiers (contiguous blocks of the prompt, each found in host or SSD);
// those tokens get HBM pages like computed ones but are loaded, not computed:
// the request's first chunk starts after them, and the iteration that admits
// it takes max(compute, loads) with overlap on, compute + loads with it off
// (loads of one iteration are summed: they share the PCIe link).
// PD hand-off (docs/simulation.md, "Prefill/decode disaggregation"): a request
// whose decode_worker is another worker leaves the running set when the
// iteration completing its prefill ends (its first token is produced here);
// its KV pages and cache lock stay here, held, until the engine reports its
// transfer ended (release_handoff). The decode worker reserves pages for the
// incoming KV before the transfer (reserve_incoming: its own prefix cache is
// matched first, only the missing tokens are reserved and moved) and adds the
// request to its running set in decode phase when the KV arrived
// (accept_incoming); its prompt blocks then join that worker's cache.
// Memory invariant (checked): pool use = private pages of running requests +
// pages held for hand-off + pages reserved for incoming KV + cache pages <= capacity;
// each lower tier's use <= its capacity.
// Where KV lives (pool, cache, tiers, hand-off pages) is the KvManager's
// (sim/kv_manager.h): the worker asks it and applies its answers.
// Hot state (a speed contract, sim/live_request.h): the running set is two
// parallel arrays, the handles and their RequestHot lines, and the iteration
// passes read and write only those (contiguous memory, no LiveRequest line per
// request). While a request runs here its RequestHot in hot_ is authoritative;
// the worker writes it back to the LiveRequest before the KvManager, a policy's
// preemption, the engine (finish, hand-off, layer-wise streaming: final_chunks)
// or anything else reads it, and write_back() does so for every running request
// (the engine calls it before reporting in-flight requests at a horizon).
// Decode lane (a speed contract; mixed mode only; sim/worker_lane.cc): the
// decoding requests' step-dependent values are kept as integers over a step
// counter (steps_), so a decode step neither reads nor writes their RequestHot
// lines: the decode items stay at the front of items_ from one iteration to
// the next, contexts are base + steps_ (with their sums for the pricer,
// BatchShape::decode_sums), a page is allocated when steps_
// reaches the request's page step, and `generated` is deferred (a member's true
// count is hot_[i].generated + steps_ - the steps_ at which it joined).
// Completed prefills and accepted hand-offs join, finishes leave, in running
// order, with the step-by-step order of KV allocations, policy calls and
// finishes (a step in which no member finishes tells the policy its tokens per
// client, LocalPolicy::on_decode_token_each: each client's calls in the same
// sequence, clients in lane_clients_' order; so does a step with finishes, before
// them, for a policy whose on_finish ignores those tokens:
// LocalPolicy::finish_ignores_decode_tokens; a policy that reads them only in a
// schedule() with requests waiting, LocalPolicy::defers_decode_tokens, hears them
// per client just before such a schedule() and at the run's end, merged over the
// steps between: most steps then make no policy call). The lane is flushed (every
// member's generated written to hot_) and dropped when KV runs out (the
// step-by-step pass redoes the iteration), when a member cannot be one (a page
// count past the exact multiplication bound),
// when more requests decode than the token budget holds, and before anything
// else reads a member: a policy that reads the running set or preempts (the
// lane then stays off on this worker) and write_back(). The next iteration
// rebuilds it from hot_. Outputs are those of the step-by-step passes bit for
// bit (tools/scenario_hashes.sh; configs/decode_lane_test.cc).
// Cluster KV store (optional, set_store; sim/kv_store.h, docs/kv.md): the
// admission match continues into the store after the worker's own tiers; a
// request with store tokens is admitted (its pages allocated, the store tokens
// counted as computed) but computes nothing until the engine reports its load
// finished (store_loaded): the engine drains store_loads() after each
// start_iteration and moves the bytes over the transfer network. A preempted
// request's load is forgotten (its completion is ignored: load_serial).
#pragma once
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "costmodel/kv_eviction.h"
#include "costmodel/batch_shape.h"
#include "costmodel/cost_model.h"
#include "policies/local_policy.h"
#include "sim/batching_options.h"
#include "sim/kv_manager.h"
#include "sim/live_request.h"
#include "sim/prefix_cache.h"
#include "sim/run_observer.h"
#include "sim/worker_stats.h"

namespace servesim {

class Worker final : private AdmissionContext {
 public:
  Worker(WorkerId id, std::unique_ptr<LocalPolicy> policy, std::shared_ptr<const CostModel> cost,
         BatchingOptions opt, std::int64_t kv_capacity_pages, std::int64_t page_size, RequestTable& table,
         RunObserver* observer = nullptr, std::shared_ptr<const KvEviction> kv_eviction = nullptr);

  WorkerId id() const { return id_; }
  bool busy() const { return busy_; }
  bool has_work() const { return waiting_ > 0 || !running_.empty(); }
  std::int64_t waiting() const { return waiting_; }
  std::int64_t running() const override { return static_cast<std::int64_t>(running_.size()); }
  // From now on the worker keeps waiting() + running() also in *slot (the cluster's
  // array of them: routing reads its workers' counts there, in a line or two, not
  // in each worker's own lines). REQUIRES: slot outlives the worker.
  void set_load_slot(std::int64_t* slot) {
    load_slot_ = slot;
    sync_load();
  }
  const KvPool& kv() const { return kvm_.pool(); }
  const PrefixCache& cache() const { return kvm_.cache(); }
  const KvManager& kv_manager() const { return kvm_; }
  const CostModel& cost_model() const { return *cost_; }
  const LocalPolicy& policy() const { return *policy_; }
  const WorkerStats& stats() const { return stats_; }
  std::int64_t pending_prefill_tokens() const { return pending_prefill_tokens_; }
  // KV tokens of running requests (computed + generated), kept incrementally.
  std::int64_t running_context_tokens() const { return context_tokens_; }
  // Adds lower KV tiers (c.enabled() required). kv_bytes_per_token: the KV of one
  // token, all layers (costmodel/kv_capacity.h); default_host_gbps: the host
  // bandwidth when c.host.bandwidth_gbps is 0 (tp × hardware pcie_gbps).
  void set_kv_tiers(const KvTiersConfig& c, double kv_bytes_per_token, double default_host_gbps);
  const KvTier* host_tier() const { return kvm_.host_tier(); }
  const KvTier* ssd_tier() const { return kvm_.ssd_tier(); }
  // Joins the cluster store (after set_kv_tiers), read over link_gbps.
  void set_store(KvStore* store, double link_gbps) { kvm_.set_store(store, link_gbps); }
  struct StoreLoad {
    RequestHandle h;
    std::uint32_t serial;
    double bytes;
  };
  // Store loads of requests admitted by the last start_iteration; the engine takes (and clears) them.
  std::vector<StoreLoad>& store_loads() { return store_loads_; }
  // A store load ended: the request may compute (stale loads: nothing happens).
  void store_loaded(RequestHandle h, std::uint32_t serial, Time now);
  // True when the request could run on this worker alone (else the engine rejects it).
  bool fits_alone(const RequestSpec& spec) const;

  // A routed request joins the waiting queue. REQUIRES: phase kPending/kQueued.
  void enqueue(RequestHandle h, Time now);
  // Builds and starts the next iteration; returns its duration, or 0 when
  // there is nothing to run (the worker goes idle). REQUIRES: !busy().
  Time start_iteration(Time now);
  // Applies the iteration that just ended; appends finished handles to `done`.
  void finish_iteration(Time now, std::vector<RequestHandle>& done);
  // The batch of the iteration in progress (from start_iteration until its
  // finish_iteration), decode context values included: a decode lane that left them
  // unwritten (lane_elides_contexts_) writes them now.
  const BatchShape& last_batch() {
    write_lane_contexts();
    SIM_CHECK(!contexts_gone_, "worker {}: last_batch() read after its iteration ended", id_);
    return shape_;
  }

  // PD hand-off (see the header comment). Requests handed off by the last
  // finish_iteration(); the engine takes (and clears) them.
  std::vector<RequestHandle>& handoffs() { return handoffs_; }
  // The transfer of a held request ended: its pages here are freed.
  void release_handoff(RequestHandle h, Time now);
  // Decode side: reserves this worker's pages for the request's KV (matching
  // its prompt against this worker's cache first); sets r.transfer_tokens to
  // the tokens to move. False (nothing changed) when there is no room or no
  // running slot: back-pressure.
  bool reserve_incoming(RequestHandle h, Time now);
  // The KV arrived: the request runs here in decode phase.
  void accept_incoming(RequestHandle h, Time now);
  // A request whose prefill ran here finished on its decode worker: this worker's
  // local policy hears LocalPolicy::on_finish once, as it would for a request that
  // finished here (LTR frees its entry and learns the true output length).
  void finished_elsewhere(const RequestSpec& spec) { policy_->on_finish(spec); }
  // Layer-wise streaming (docs/simulation.md). Prefill side: the requests whose
  // prefill the iteration just started completes and that will be handed off,
  // with their final chunk's tokens (none with KV eviction: the moved copy is
  // only known at prefill completion). Decode side: reserve_incoming while the
  // request still runs on its prefill worker; the reservation is kept here
  // (counted like one in transit) and moved into the request at its hand-off
  // (adopt_early; REQUIRES: reserve_early succeeded for h).
  // final_chunks writes the listed requests' hot state back (the decode worker reads it).
  void final_chunks(std::vector<std::pair<RequestHandle, std::int64_t>>& out);
  bool reserve_early(RequestHandle h, Time now);
  void adopt_early(RequestHandle h);
  // Requests held for hand-off plus requests whose KV is on its way here.
  std::int64_t parked() const { return kvm_.held() + incoming_; }
  // Prompt tokens of `spec` this worker's prefix cache holds now (PD decider).
  std::int64_t cached_prefix(const RequestSpec& spec) const { return kvm_.cached_prefix(spec); }
  // Writes every running request's hot state back to its LiveRequest (see the
  // header comment); the engine calls it before reading running requests.
  void write_back();
  // Tells the local policy the decode tokens held for it (see holds_tokens_);
  // the engine calls it when the run ends, so the policy's final state is whole.
  void report_held_tokens();

 private:
  struct Item {  // 16 bytes: tokens first, so the index and the flag share the second word
    std::int64_t tokens;
    std::uint32_t i;  // index in running_ / hot_ (kept in step when a request leaves them)
    bool prefill;
  };
  // AdmissionContext
  Time now() const override { return now_; }
  AdmitResult try_admit(const QueuedRequest& r) override;
  std::int64_t cached_tokens(const QueuedRequest& r) const override;
  std::uint64_t uncached_prefix_key(const QueuedRequest& r) const override;
  // Counts the slots reserved for KV in transit (PD), as try_admit does: otherwise DLPM
  // would refill deficits for a slot try_admit then refuses.
  bool has_room() const override { return budget_ > 0 && !slots_full(); }
  void running_requests(std::vector<RunningRequest>& out) const override;
  bool preempt(RequestHandle h) override;

  void release_private(LiveRequest& r) { kvm_.release_private(r); }
  void drop_from_batch(std::size_t i);   // undoes running_[i]'s item in the batch being built
  void schedule_decodes();
  // Decode lane (header comment; worker_lane.cc). lane_build: from hot_, when every
  // decoding request can be a member (false: not built). lane_schedule: this
  // iteration's decode items from the lane, which are items_' prefix already (false:
  // it was flushed and its items removed, lane_abandon; the caller runs
  // schedule_decodes). lane_finish: applies the lane's items (finishes go to `done`,
  // `gone` set as the step pass does). lane_add: running_[i] (decoding, hot state
  // current) joins at position pos as of steps_ = b (false: it cannot be a member).
  bool lane_build();
  bool lane_schedule();
  void lane_finish(std::vector<RequestHandle>& done, bool& gone);
  void lane_flush();
  void lane_abandon();
  // Members; their decode items are items_[0, lane_size()) while the lane is on
  // (start_iteration keeps that prefix; .i: the running index).
  std::size_t lane_size() const { return ln_b_.size(); }
  bool lane_add(std::size_t pos, std::uint32_t i, std::int64_t b);
  void lane_client_left(ClientId c);
  bool lane_join(const std::vector<std::uint32_t>& indices);
  bool lane_take_accepted();
  void lane_remap(const std::vector<std::uint32_t>& to, std::size_t first);
  void schedule_prefill_chunks();
  void add_prefill_chunk(std::size_t i);
  void preempt_now(std::size_t i);
  void finish_here(std::size_t i, std::vector<RequestHandle>& done);  // running_[i] produced its last token
  // Hot state (header comment): running_[i]'s LiveRequest, made current from hot_[i];
  // copy_in puts the LiveRequest's hot state into hot_[i] again after it changed there.
  LiveRequest& sync_out(std::size_t i) {
    LiveRequest& r = table_[running_[i]];
    static_cast<RequestHot&>(r) = hot_[i];
    return r;
  }
  void copy_in(std::size_t i, const LiveRequest& r) { hot_[i] = static_cast<const RequestHot&>(r); }
  void push_running(RequestHandle h, const LiveRequest& r);  // joins the running set (r's state current)
  std::size_t index_of(RequestHandle h) const;                // in running_; running_.size() when absent
  // n output tokens of client c in this iteration (inline: called per token).
  // REQUIRES: c < client_slot_.size() (push_running sizes it for every running client).
  [[gnu::always_inline]] void count_output_token(ClientId c, std::int64_t n = 1) {
    std::uint32_t& slot = client_slot_[c];
    if (slot == 0) {
      client_tokens_.emplace_back(c, 0);
      slot = static_cast<std::uint32_t>(client_tokens_.size());
    }
    client_tokens_[slot - 1].second += n;
  }
  // The most pages whose token count (pages x page size) is exact in int64.
  std::int64_t max_exact_pages() const { return std::numeric_limits<std::int64_t>::max() / kv().page_size(); }
  static std::int64_t private_tokens_after_step(const RequestHot& r);
  static std::int64_t kv_tokens(const RequestHot& r);  // context held: computed (or compressed) + generated
  void evict_after_prefill(LiveRequest& r);             // KV eviction at prefill completion
  void check_invariants() const;
  // Every running slot is taken; requests whose KV is on its way here (PD) hold one already.
  bool slots_full() const { return static_cast<std::int64_t>(running_.size()) + incoming_ >= opt_.max_running; }
  WorkerId id_;
  std::unique_ptr<LocalPolicy> policy_;
  bool counts_tokens_;  // policy_->counts_decode_tokens(), asked once
  bool tokens_first_;   // and policy_->finish_ignores_decode_tokens(): the lane reports a step's tokens before its finishes
  // And policy_->defers_decode_tokens(): decode tokens are held per client
  // (held_tokens_; the clients in held_clients_, in first-held order) and reported,
  // one on_decode_token_each per client, just before a schedule() while requests
  // wait (and at the run's end) instead of every step.
  bool holds_tokens_;
  std::vector<std::int64_t> held_tokens_;  // by client
  std::vector<ClientId> held_clients_;
  void hold_tokens(ClientId c, std::int64_t n) {  // n >= 0 (0: nothing held, no entry)
    if (n == 0) return;
    if (c >= held_tokens_.size()) held_tokens_.resize(c + 1, 0);
    if (held_tokens_[c] == 0) held_clients_.push_back(c);
    held_tokens_[c] += n;
  }
  // One decode token of client c for the policy (the step-by-step passes).
  void tell_token(ClientId c) {
    if (holds_tokens_)
      hold_tokens(c, 1);
    else
      policy_->on_decode_tokens(c, 1);
  }
  // The local policy's scheduling step, told the held tokens first when it may read them
  // (requests wait: some may have just been preempted back into the queue).
  void policy_schedule() {
    if (waiting_ > 0 && !held_clients_.empty()) report_held_tokens();
    policy_->schedule(*this);
  }
  std::shared_ptr<const CostModel> cost_;
  BatchingOptions opt_;
  RequestTable& table_;
  RunObserver* observer_;
  std::shared_ptr<const KvEviction> eviction_;  // KV eviction after prefill, or null

  std::vector<RequestHandle> running_;  // admission order (the back is preempted first)
  std::vector<RequestHot> hot_;         // hot_[i]: running_[i]'s hot state, authoritative (header comment)
  std::int64_t waiting_ = 0;
  std::int64_t own_load_ = 0;             // load_slot_'s target until set_load_slot()
  std::int64_t* load_slot_ = &own_load_;  // = waiting_ + running_.size() after every change of either
  void sync_load() { *load_slot_ = waiting_ + static_cast<std::int64_t>(running_.size()); }
  std::int64_t pending_prefill_tokens_ = 0;
  std::int64_t context_tokens_ = 0;
  bool busy_ = false;
  Time now_ = 0;
  std::int64_t budget_ = 0;  // tokens left in the iteration being built
  std::vector<Item> items_;
  BatchShape shape_;
  std::int64_t prefilling_ = 0;  // running requests in phase kPrefill (skips the chunk pass when 0)
  // finish_iteration scratch, reused: the output tokens of the iteration per
  // client (first-seen order; slot+1 by client id).
  std::vector<std::pair<ClientId, std::int64_t>> client_tokens_;
  std::vector<std::uint32_t> client_slot_;
  WorkerStats stats_;
  KvManager kvm_;  // after stats_: it counts into them
  std::vector<RequestHandle> handoffs_;
  std::int64_t incoming_ = 0;         // requests with pages reserved here, KV in transit
  std::vector<StoreLoad> store_loads_;
  std::uint32_t load_serial_ = 0;     // store loads started here
  // Decode lane (header comment): members in running order, one entry each.
  bool lane_allowed_;            // mixed mode, and no policy has read the running set
  bool lane_on_ = false;         // the lane is built and members' generated is deferred
  bool lane_scheduled_ = false;  // this iteration's decode items came from the lane
  // The lane's context values. When the cost model does not read them
  // (CostModel::reads_decode_contexts: it prices from the decode sums), lane_schedule
  // only sizes shape_.decode_contexts, and the values, ln_cb_[j] + contexts_step_, are
  // written by write_lane_contexts() when someone reads or moves them: last_batch()
  // (the observer), drop_from_batch, lane_flush. An iteration that ends with them
  // unwritten has none to show (contexts_gone_ until the next start_iteration).
  bool lane_elides_contexts_ = false;
  bool contexts_due_ = false;
  bool contexts_gone_ = false;
  std::int64_t contexts_step_ = 0;
  void write_lane_contexts() {
    if (!contexts_due_) return;
    contexts_due_ = false;
    std::int64_t* out = shape_.decode_contexts.data();
    const std::int64_t* cb = ln_cb_.data();
    for (std::size_t j = 0, n = shape_.decode_contexts.size(); j < n; ++j) out[j] = cb[j] + contexts_step_;
  }
  bool lane_tokens_direct_ = false;  // lane_finish: the observer hears lane_clients_ as they are
  std::int64_t steps_ = 0;       // decode steps applied since the lane was built
  std::int64_t lane_min_fin_ = 0;  // smallest ln_fin_ (kept by lane_add and lane_finish)
  std::vector<std::int64_t> ln_b_;     // steps_ when it joined (its generated is hot_ + steps_ - ln_b_)
  std::vector<std::int64_t> ln_fin_;   // steps_ once its last token is produced
  std::vector<std::int64_t> ln_cb_;    // context of its step = ln_cb_ + steps_
  std::vector<std::uint32_t> ln_slot_; // its page-calendar slot (below)
  std::vector<ClientId> ln_client_;
  std::vector<std::uint32_t> lane_gone_;  // lane_finish: the members that finish, in running order
  // Page calendar (worker_lane.cc, lane_pages_due). A member's private pages are
  // a function of the step: with P the page size, b the step it joined at, base
  // its pages then and pg0 its first page step (kv_pages * P - tb + 1, tb + s
  // being its private tokens after step s), it holds
  //   pages_at(t) = base                            for t < max(b, pg0),
  //               = base + (t - pg0) / P + 1       from there on
  // once the pages of step t are allocated (a member already late when it joins,
  // pg0 <= b, catches up at b; after that it needs one page at every step
  // s = pg0 (mod P)). So a step's pages are one count: lane_due_count_[s mod P],
  // the members that are active, plus the late joiners' catch-up (lane_now_); a
  // member whose pg0 is a whole page or more ahead waits in lane_pending_ until
  // the step after pg0 - P. Members' kv_pages in hot_ are stale while the lane is
  // on (like generated): lane_flush and lane_finish write lane_pages_held().
  // By slot (lane_slots_, stable while it is a member: ln_slot_).
  enum class PageState : std::uint8_t { kActive, kPending, kNow };
  struct LaneSlot {
    std::int64_t pg0, base, b;
    PageState state;
  };
  static constexpr std::int64_t kLaneMaxPageSize = 4096;  // larger pages: no lane (lane_due_count_'s size)
  std::vector<LaneSlot> lane_slots_;
  std::vector<std::uint32_t> sl_free_;
  std::vector<std::uint32_t> lane_due_count_;                       // by pg0 mod P: active members
  std::vector<std::pair<std::int64_t, std::uint32_t>> lane_pending_;  // (step it becomes active, slot)
  std::vector<std::uint32_t> lane_now_;                             // slots due at the step they joined
  std::int64_t lane_paged_ = -1;  // the last step whose pages are allocated
  std::int64_t lane_mod_ = 0;     // steps_ mod P
  bool lane_pages_written_ = false;  // lane_pages_due's member-order path wrote members' kv_pages
  std::int64_t lane_max_exact_ = 0;  // max_exact_pages(), kept at lane_build
  // pages_at(t) above: what the member holds once step t's pages are given.
  std::int64_t lane_pages_target(std::uint32_t slot, std::int64_t t) const {
    const LaneSlot& d = lane_slots_[slot];
    if (t < d.b || t < d.pg0) return d.base;
    return d.base + (t - d.pg0) / kv().page_size() + 1;
  }
  // What it holds now: pages_at(lane_paged_), or its pages when it joined while
  // its catch-up is still to come (kNow: it may have joined at a step whose
  // count was given already, when an empty iteration asked twice).
  std::int64_t lane_pages_held(std::uint32_t slot) const {
    return lane_slots_[slot].state == PageState::kNow ? lane_slots_[slot].base : lane_pages_target(slot, lane_paged_);
  }
  std::size_t lane_residue(std::int64_t pg0) const {
    const std::int64_t p = kv().page_size(), m = pg0 % p;
    return static_cast<std::size_t>(m < 0 ? m + p : m);
  }
  void lane_slot_free(std::uint32_t slot);  // leaves the count (or a list) and the slot is free
  bool lane_pages_due();  // this step's page allocations (false: abandon, the pages given kept)
  // Members per client, one entry per client with members: appended when its first
  // member joins, removed (the last entry moved into its place) when its last leaves.
  std::vector<std::pair<ClientId, std::int64_t>> lane_clients_;
  std::vector<std::uint32_t> lane_joins_;     // finish_iteration: completed prefills that decode on here
  std::vector<RequestHandle> lane_accepted_;  // hand-offs accepted since the last iteration (join then)
  std::vector<std::uint32_t> lane_to_;        // finish_iteration scratch: old running index -> new (from first_gone_ on)
  std::size_t first_gone_ = 0;                // finish_iteration: the lowest running index that leaves
  std::vector<std::uint32_t> lane_slot_;      // client -> its lane_clients_ entry + 1 (0: none)
  // The dense decode pricer's sums over the members (BatchShape::DecodeSums), kept
  // as members join and leave instead of summed every step: lane_cb_sum_ = Σ ln_cb_;
  // lane_splits_ = Σ (ln_cb_ + lane_splits_at_ + S) / S (S = kDecodeSplitTokenCount),
  // and a member's term grows by one at the steps t with (ln_cb_ + t) % S == 0, so
  // lane_split_due_[r] counts the members with (-ln_cb_) % S == r (lane_sums_to).
  std::int64_t lane_cb_sum_ = 0;
  // max ln_cb_ (the longest member's context is it + steps): raised as members join;
  // stale when a member with that base leaves, then recomputed by the next lane_schedule.
  std::int64_t lane_cb_max_ = std::numeric_limits<std::int64_t>::min();
  bool lane_cb_max_stale_ = false;
  std::int64_t lane_splits_ = 0;
  std::int64_t lane_splits_at_ = 0;
  std::vector<std::uint32_t> lane_split_due_;
  void lane_sums_to(std::int64_t s);  // lane_splits_ as of step s (>= lane_splits_at_)
};

}  // namespace servesim
