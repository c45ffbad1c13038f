// LiveRequest and RequestTable: the engine's state of every request between its
// arrival and its report. Slots are reused after a request is reported, so
// memory is proportional to requests in flight, not to requests seen.
// Addresses are stable (std::deque), so policies may hold `const RequestSpec*`
// while a request is queued.
#pragma once
#include <cstdint>
#include <deque>
#include <new>
#include <optional>
#include <vector>

#include "policies/local_policy.h"
#include "sim/core/error.h"
#include "sim/prefix_cache.h"
#include "sim/core/request.h"

namespace servesim {

enum class Phase : std::uint8_t {
  kPending,   // waiting for parent requests to finish (sessions, DAGs)
  kQueued,    // in a worker's waiting queue
  kPrefill,   // admitted; prompt (or recompute) chunks in progress
  kDecode,    // generating tokens
  kHandoff,   // PD: prefilled, its KV held by the prefill worker until its transfer to the decode worker ends
  kFinished,
};

// The fields the per-request passes of an iteration read or write (sim/worker.cc:
// batch building, prefill chunks, applying the iteration), in one cache line.
// While a request runs on a worker (phases kPrefill and kDecode), the worker's
// copy of these fields, in a contiguous array beside its running set, is the
// authoritative one and its LiveRequest's copy is stale: the worker writes it
// back before anything else reads the request (KvManager calls, preemption,
// finish, hand-off, streaming, Worker::write_back at the horizon) and copies it
// in when the request starts running (admission, accepted hand-off).
// live_request_test.cc checks the size and alignment.
struct alignas(64) RequestHot {
  Phase phase = Phase::kPending;
  bool kv_loading = false;  // admitted; its KV from the cluster store is on its way (computes nothing yet)
  // Copies of spec.client and spec.output_tokens (set by RequestTable::add;
  // the spec does not change while the request lives).
  ClientId client = 0;
  std::int64_t prefill_target = 0;  // tokens to compute before the next token
  std::int64_t computed = 0;        // of prefill_target, including cached tokens
  std::int64_t generated = 0;       // output tokens produced so far
  std::int64_t kv_pages = 0;        // private KV pages held (not counting the locked cache path)
  // KV eviction (KvEviction): prompt tokens kept per KV head after the prefill, as
  // a private compacted copy; 0 = not compressed (the whole context is held).
  std::int64_t compressed = 0;
  std::int64_t shared_tokens = 0;   // tokens of its KV held by the cache path it locks
  std::int64_t output_tokens = 0;   // spec.output_tokens (above)
};

// The hot fields come first (RequestHot, one aligned line); the rest is read
// once or a few times per request. Order and alignment only affect speed.
struct alignas(64) LiveRequest : RequestHot {
  bool routed = false;
  WorkerId worker = 0;
  // PD disaggregation (docs/simulation.md, "Prefill/decode disaggregation"):
  // the worker the global policy routed the prefill to and the worker that
  // decodes (equal when colocated).
  WorkerId prefill_worker = 0;
  WorkerId decode_worker = 0;
  std::optional<Time> first_token;
  RequestSpec spec;
  Time arrival = 0;                 // effective arrival (release time for dependents)
  std::optional<Time> admitted;     // first admission
  std::int64_t cached = 0;          // prompt tokens served from the prefix cache at first admission (reported)
  // Prefix cache state on the routed worker: the path this request locks
  // (its matched prefix, then its whole inserted prompt once prefilled; its
  // tokens are shared_tokens above) and the memo of its current match while it waits.
  CacheNodeId cache_node = kCacheRoot;
  std::uint32_t cache_where = 0;     // where cache_node was when locked (PrefixCache::lock's hint; 0: none)
  std::int32_t shared_blocks = 0;
  PrefixMatch match;
  std::int32_t preemptions = 0;
  std::int32_t parents_left = 0;
  std::int32_t dependents_unseen = 0;  // dependents not yet pulled from the source
  Time ready_at = 0;                // max over finished parents of finish + think time
  // The PD hand-off's times and bytes.
  std::optional<Time> prefill_end;     // the prefill worker produced the first token (hand-off asked)
  std::optional<Time> transfer_start;  // the decode worker had room; the transfer began
  std::optional<Time> transfer_end;    // the KV arrived; decoding may start
  std::int64_t transfer_bytes = 0;
  std::int64_t transfer_tokens = 0;    // KV tokens moved (the decode worker's cache held the rest)
  bool routed_by_global = false;       // PD: the global policy chose prefill_worker (it hears on_finish)
  bool routed_by_decode = false;       // PD: the decode policy chose a decode worker (it hears on_finish)
  std::uint32_t load_serial = 0;       // the worker's number of its current store load (stale loads are ignored)
  Time load_start = 0;                 // its current store load's admission
};

class RequestTable {
 public:
  RequestHandle add(RequestSpec&& spec) {
    RequestHandle h;
    LiveRequest* r;
    if (!free_.empty()) {
      h = free_.back();
      free_.pop_back();
      r = &slots_[h];
      // A fresh request in the reused slot, built where it lives (no temporary
      // to zero and then move in); its released block list was emptied already.
      r->~LiveRequest();
      ::new (static_cast<void*>(r)) LiveRequest{};
    } else {
      h = static_cast<RequestHandle>(slots_.size());
      r = &slots_.emplace_back();
    }
    r->spec = std::move(spec);
    r->client = r->spec.client;
    r->output_tokens = r->spec.output_tokens;
    ++live_;
    return h;
  }
  // Frees the slot. Its block list's buffer (emptied) is kept for spare_blocks();
  // the slot's list is left empty (a moved-from vector is).
  void release(RequestHandle h) {
    SIM_CHECK(h < slots_.size(), "handle {} out of range", h);
    std::vector<BlockHash>& blocks = slots_[h].spec.prefix_blocks;
    if (blocks.capacity() > 0) {
      blocks.clear();
      spare_.push_back(std::move(blocks));
    }
    slots_[h].spec.parents = {};
    free_.push_back(h);
    --live_;
  }
  // An empty block list with a released request's buffer (none left: a new one).
  // The engine has the source copy the next request into it, so a workload with
  // prefix blocks allocates no buffer per request. At most one per released slot,
  // so the spares never outnumber the peak of live requests.
  std::vector<BlockHash> spare_blocks() {
    if (spare_.empty()) return {};
    std::vector<BlockHash> v = std::move(spare_.back());
    spare_.pop_back();
    return v;
  }
  LiveRequest& operator[](RequestHandle h) { return slots_[h]; }
  const LiveRequest& operator[](RequestHandle h) const { return slots_[h]; }
  std::size_t live() const { return live_; }
  std::size_t slots() const { return slots_.size(); }

 private:
  std::deque<LiveRequest> slots_;
  std::vector<RequestHandle> free_;
  std::vector<std::vector<BlockHash>> spare_;  // emptied block lists of released slots
  std::size_t live_ = 0;
};

}  // namespace servesim
