// KvTier: one lower tier of a worker's KV cache (host memory or SSD) below
// the HBM radix prefix cache (sim/prefix_cache.h); docs/simulation.md,
// "Tiered KV cache".
//
// Contract:
//  - A tier stores prefix blocks, each named by its path key: a hash of the
//    chain of (block id, block tokens) from the prompt's first block to it
//    (tier_block_key), so a block is found only under the same whole prefix,
//    as in the HBM tree. Capacity and use are counted in KV pages of the
//    worker's page size (a block of B tokens = ceil(B / page_size) pages).
//  - put() (demotion): a block evicted from the tier above enters this tier
//    as its most recently used entry; a block already stored is only
//    touched. To make room, least recently used entries leave first: to the
//    tier below when there is one (the same put(), recursively), else they
//    are dropped. A block larger than the whole tier passes straight down.
//  - touch() (a hit that is loaded up): the entry becomes the most recently
//    used; the tier keeps its copy (inclusive: a block loaded into HBM stays
//    here too, so its later HBM eviction costs no write).
//  - Invariant (checked): used pages = sum of stored blocks' pages <= capacity.
//  - LRU order is the order of put()/touch() calls (no time ties), so runs
//    are deterministic.
//  - load_time(tokens) = ceil(tokens × bytes_per_token / bandwidth) + latency,
//    in ns: what loading that many tokens' KV from this tier to HBM costs.
#pragma once
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/request.h"
#include "sim/core/time.h"

namespace servesim {

// One tier's settings as configured (kv_cache.host / kv_cache.ssd; docs/configuration.md).
struct KvTierSpec {
  double capacity_gb = 0;     // per worker, GB (1e9 bytes); 0 = no tier
  double bandwidth_gbps = 0;  // load bandwidth to HBM, GB/s; host: 0 = tp × hardware pcie_gbps
  double latency_us = 0;      // fixed cost of one request's load from this tier
  bool enabled() const { return capacity_gb > 0; }
  bool operator==(const KvTierSpec&) const = default;
};

// kv_cache: the lower tiers of every worker (overridable per worker).
struct KvTiersConfig {
  KvTierSpec host;
  KvTierSpec ssd;       // below host; only with a host tier
  bool overlap = true;  // loads overlap the iteration's compute (layer-wise loading)
  bool enabled() const { return host.enabled(); }
  bool operator==(const KvTiersConfig&) const = default;
};

// Path key of block i given the key of blocks 0..i-1 (0 for the first block).
std::uint64_t tier_block_key(std::uint64_t prev, BlockHash block, std::int64_t tokens);

struct KvTierStats {
  std::int64_t capacity_pages = 0;
  std::int64_t peak_pages = 0;
  std::int64_t stored_blocks = 0;   // put() calls that stored a new block
  std::int64_t demoted_blocks = 0;  // blocks this tier evicted to the tier below
  std::int64_t dropped_blocks = 0;  // blocks this tier evicted with no tier below
  std::int64_t hit_tokens = 0;      // prompt tokens served from this tier at first admissions (as cached_tokens)
  std::int64_t loaded_tokens = 0;   // tokens loaded up from this tier (all admissions, re-admissions included)
};

// The longest one load from a tier may take, in seconds (checked at construction for
// the whole tier: a slower tier is an input error naming kv_cache.<tier>.bandwidth_gbps).
inline constexpr double kMaxTierLoadS = 1e9;

class KvTier {
 public:
  // bytes_per_token: KV bytes of one token (all layers); below may be null;
  // counters go to *stats when given (a worker's WorkerStats), else to the tier's own.
  KvTier(std::string name, std::int64_t capacity_pages, std::int64_t page_size, double bytes_per_token,
         double bandwidth_gbps, Time latency, KvTier* below, KvTierStats* stats = nullptr);
  KvTier(const KvTier&) = delete;  // stats_ may point into the object
  KvTier& operator=(const KvTier&) = delete;

  bool contains(std::uint64_t key) const { return index_.count(key) != 0; }
  void put(std::uint64_t key, std::int64_t tokens);
  void touch(std::uint64_t key);
  Time load_time(std::int64_t tokens) const;

  const std::string& name() const { return name_; }
  // The tier its evicted blocks go down to (null: dropped); e.g. the cluster store.
  void set_below(KvTier* below) { below_ = below; }
  std::int64_t used_pages() const { return used_; }
  std::int64_t capacity_pages() const { return capacity_; }
  std::size_t blocks() const { return lru_.size(); }
  KvTierStats& stats() { return *stats_; }
  const KvTierStats& stats() const { return *stats_; }
  // Keys from least to most recently used (tests).
  std::vector<std::uint64_t> lru_keys() const;
  void check_invariants() const;

 private:
  struct Entry {
    std::uint64_t key;
    std::int64_t tokens;
    std::int64_t pages;
  };
  std::int64_t pages_for(std::int64_t tokens) const { return tokens / page_size_ + (tokens % page_size_ > 0); }

  std::string name_;
  std::int64_t capacity_;
  std::int64_t page_size_;
  double bytes_per_token_;
  double bandwidth_gbps_;
  Time latency_;
  KvTier* below_;
  std::list<Entry> lru_;  // front: least recently used
  std::unordered_map<std::uint64_t, std::list<Entry>::iterator> index_;
  std::int64_t used_ = 0;
  KvTierStats own_stats_;
  KvTierStats* stats_;
};

}  // namespace servesim
