// KvManager: where one worker's KV lives (docs/kv.md). It owns the
// worker's HBM page pool (sim/kv_pool.h), its radix prefix cache
// (sim/prefix_cache.h), its lower tiers (host, SSD: sim/kv_tier.h), the pages
// held for PD hand-offs and the pages reserved for incoming KV. The Worker
// (sim/worker.h) decides what runs; it asks this object what is where and
// applies its answers to the request's fields and the worker's counters.
//
// Contract:
//  - What is where: match(r) is r's prompt prefix in HBM (capped at
//    prefill_target - 1: one token is always computed; the prompt's last block
//    may match in part); at admission it continues through the host / SSD
//    tiers and the cluster store (sim/kv_store.h), block by block, each from
//    the nearest tier that holds it. probe(spec) reports the same split by
//    tier without changing anything (routers read it: ClusterView::locality).
//  - What it costs to bring to HBM: a tier hit costs the tier's
//    load_time(tokens) (bandwidth + latency, summed per iteration on the
//    worker's PCIe link); store tokens move over the transfer network (the
//    engine moves them; Admitted::store), estimated for routers as
//    KvStore::estimate_ns over this worker's link.
//  - Memory: every page of the pool is a running request's private page
//    (private_pages()), a page held for hand-off or reserved for incoming KV
//    (also counted as private), or a cache page: used = private + cache pages
//    <= capacity (check_invariants). Allocation evicts unlocked cache leaves
//    (LRU) first; evicted blocks go down to the host tier, then SSD, then
//    the cluster store when there is one, else they are dropped. With a
//    write-through store every prompt block is also written to it when the
//    prompt joins the cache.
//  - The manager never changes a request's phase, the running set or the
//    token counters: the Worker does.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "policies/global_policy.h"
#include "sim/kv_pool.h"
#include "sim/kv_store.h"
#include "sim/kv_tier.h"
#include "sim/live_request.h"
#include "sim/prefix_cache.h"
#include "sim/worker_stats.h"

namespace servesim {

class KvManager {
 public:
  KvManager(WorkerId id, std::int64_t capacity_pages, std::int64_t page_size, RequestTable& table,
            WorkerStats& stats);
  KvManager(const KvManager&) = delete;
  KvManager& operator=(const KvManager&) = delete;

  // Adds lower tiers (c.enabled() required); see Worker::set_kv_tiers.
  void set_tiers(const KvTiersConfig& c, double kv_bytes_per_token, double default_host_gbps);
  // Joins the cluster store (shared by every worker), read over a link of
  // link_gbps. Call after set_tiers: evicted blocks reach the store below this
  // worker's lowest tier (HBM when it has none).
  void set_store(KvStore* store, double link_gbps);

  const KvPool& pool() const { return kv_; }
  const PrefixCache& cache() const { return cache_; }
  const KvTier* host_tier() const { return host_.get(); }
  const KvTier* ssd_tier() const { return ssd_.get(); }
  const KvStore* store() const { return store_; }
  std::int64_t private_pages() const { return private_pages_; }
  std::int64_t pages_for(std::int64_t tokens) const { return kv_.pages_for(tokens); }
  std::int64_t held() const { return static_cast<std::int64_t>(held_.size()); }

  // --- Matching -----------------------------------------------------------
  const PrefixMatch& match(RequestHandle h) const;  // r.match refreshed, cap prefill_target - 1
  std::uint64_t uncached_prefix_key(RequestHandle h) const;
  std::int64_t cached_prefix(const RequestSpec& spec) const;  // HBM, cap prompt (PD decider)
  KvLocality probe(const RequestSpec& spec) const;            // every tier, cap prompt - 1

  // --- Admission ------------------------------------------------------------
  struct Admitted {
    std::int64_t cached = 0;  // HBM match
    std::int64_t loaded = 0;  // lower tiers + store: HBM pages allocated, loaded instead of computed
    std::int64_t store = 0;   // of loaded, from the cluster store (moved by the engine)
    std::int64_t dropped = 0;  // alone: the HBM match it could not keep (computed instead; see admit)
  };
  // Locks r's match and allocates pages for the rest of its prefill target,
  // keeping `reserve` pages free beyond it; false (nothing changed) without
  // room. On success r's placement fields are set and lower-tier hits are
  // taken (touched, counted in the stats; `first`: its first admission).
  // alone: the worker runs nothing else (work conservation). If the match's
  // pages plus the rest of the prompt do not fit - possible only when the cache
  // rounds each block up to whole pages (page_size larger than, or not dividing,
  // the trace's block size: prefix_cache.h) - the request is admitted without
  // its match (cached 0, out.dropped = the match's tokens, no lower-tier hits)
  // when its whole prefill target fits, rather than leave the worker idle.
  bool admit(RequestHandle h, std::int64_t reserve, bool first, Admitted& out, bool alone = false);
  // Loads of the iteration being built (lower tiers).
  void begin_iteration() { iter_load_ns_ = 0; }
  Time iteration_load() const { return iter_load_ns_; }
  bool overlap() const { return tier_overlap_; }

  // --- Running requests -----------------------------------------------------
  // Private pages; evicts unlocked cache leaves if needed. Inline: the decode
  // lane allocates a page per member every page-size steps.
  bool alloc(std::int64_t pages) {
    if (kv_.free() < pages) cache_.make_room(pages);
    if (!kv_.try_alloc(pages)) return false;
    private_pages_ += pages;
    return true;
  }
  void release_private(LiveRequest& r);  // frees private pages, unlocks the cache path
  void cache_prompt(LiveRequest& r);     // at prefill completion: prompt blocks join the cache
  // KV eviction: r keeps `kept` tokens as a private compacted copy (fresh pages);
  // false (nothing changed) without room.
  bool compact(LiveRequest& r, std::int64_t kept);

  // --- PD hand-off ------------------------------------------------------------
  void hold(RequestHandle h, LiveRequest& r);  // prefill side: r's KV stays until release_handoff
  void release_handoff(RequestHandle h);
  // Decode side: pages for r's incoming KV (matched against this cache first);
  // sets r.transfer_tokens. False (nothing changed) without room.
  bool reserve_incoming(LiveRequest& r);
  bool reserve_early(RequestHandle h, LiveRequest& r);
  void adopt_early(RequestHandle h, LiveRequest& r);

  void check_invariants() const;  // capacities; used = private + cache pages
  void set_now(Time now) { now_ = now; }

 private:
  // The lower-tier continuation of HBM match m (kv_tier.h, kv_store.h) for a
  // prefill target of `target` tokens; the hits go to *hits when given.
  struct LowerMatch {
    std::int64_t tokens = 0, host_tokens = 0, ssd_tokens = 0, store_tokens = 0;
    Time load = 0;  // host + SSD (the store's part moves over the network)
  };
  using Hits = std::vector<std::pair<KvTier*, std::uint64_t>>;
  LowerMatch match_lower(const RequestSpec& s, std::int64_t target, const PrefixMatch& m, Hits* hits) const;
  void write_through(const RequestSpec& s);  // every prompt block into the store
  void take_lower(const LowerMatch& lm, bool first);

  WorkerId id_;
  KvPool kv_;
  PrefixCache cache_;
  RequestTable& table_;
  WorkerStats& stats_;
  Time now_ = 0;
  std::int64_t private_pages_ = 0;  // running requests' kv_pages + held + reserved
  std::unique_ptr<KvTier> ssd_, host_;
  KvStore* store_ = nullptr;
  double store_link_gbps_ = 0;
  bool tier_overlap_ = true;
  Time iter_load_ns_ = 0;
  Hits lower_hits_;  // of the last admission's match_lower
  struct Held {
    RequestHandle h;
    std::int64_t pages;
    CacheNodeId node;
  };
  std::vector<Held> held_;
  struct KvPlacement {
    std::int64_t pages;
    CacheNodeId node;
    std::uint32_t where;
    std::int64_t shared_tokens;
    std::int32_t shared_blocks;
  };
  static KvPlacement placement_of(const LiveRequest& r) {
    return {r.kv_pages, r.cache_node, r.cache_where, r.shared_tokens, r.shared_blocks};
  }
  static void place(LiveRequest& r, const KvPlacement& p) {
    r.kv_pages = p.pages;
    r.cache_node = p.node;
    r.cache_where = p.where;
    r.shared_tokens = p.shared_tokens;
    r.shared_blocks = p.shared_blocks;
  }
  struct Early {
    RequestHandle h;
    KvPlacement kv;
  };
  std::vector<Early> early_;
};

}  // namespace servesim
