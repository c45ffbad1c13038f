// KvStore: the cluster-wide KV store (cluster.kv_store; docs/kv.md), in the
// style of Mooncake's distributed KV store, LMCache's shared backend or
// SGLang HiCache's storage layer: cluster DRAM/SSD that every worker can read
// over the network.
//
// Contract:
//  - Contents: prefix blocks by path key (tier_block_key, as the per-worker
//    tiers of sim/kv_tier.h), LRU, capacity in KV pages of the cluster's page
//    size; a full store drops its least recently used blocks. One store for
//    the whole cluster: a block put by one worker is found by every worker.
//  - Placement (how blocks get in):
//      evicted       blocks leaving a worker's lowest tier (HBM when the worker
//                    has no host tier, else host / SSD) go to the store instead
//                    of being dropped;
//      write_through every prompt block is written at its prefill's end (as a
//                    Mooncake prefill node does), and evictions as above.
//    Writes cost no simulated time (asynchronous, off the critical path, as
//    the tiers' demotions).
//  - Reads: at admission a worker's match continues block by block through
//    HBM, its own host and SSD tiers, then the store (the nearest copy of each
//    block). Store tokens are moved as one transfer from the store's node to
//    the worker over the cluster's TransferNetwork (max-min fair with every
//    other flow: other store loads and PD transfers; the store's egress is
//    `bandwidth_gbps`, each worker's ingress its link) after `latency_us`; the
//    request computes nothing until its KV arrived (sim/worker.h).
//  - estimate_ns(tokens): latency + bytes / min(link, store bandwidth), the
//    uncontended time routers are told (ClusterView::locality).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/kv_tier.h"

namespace servesim {

enum class KvStorePlacement : std::uint8_t { kEvicted, kWriteThrough };

// cluster.kv_store as configured (configs/kv_store_config.h).
struct KvStoreConfig {
  double capacity_gb = 0;     // the whole cluster's store, GB; 0 = no store
  double bandwidth_gbps = 100;  // the store's egress, GB/s (all loads share it)
  double link_gbps = 0;       // each worker's ingress from the store, GB/s; 0 = tp x hardware rdma_nic_gbps
  double latency_us = 20;     // fixed cost of one load
  KvStorePlacement placement = KvStorePlacement::kEvicted;
  bool enabled() const { return capacity_gb > 0; }
  bool operator==(const KvStoreConfig&) const = default;
};

class KvStore {
 public:
  KvStore(std::int64_t capacity_pages, std::int64_t page_size, double bytes_per_token, double bandwidth_gbps,
          Time latency, KvStorePlacement placement)
      : tier_("store", capacity_pages, page_size, bytes_per_token, bandwidth_gbps, latency, nullptr),
        bytes_per_token_(bytes_per_token), bandwidth_gbps_(bandwidth_gbps), latency_(latency), placement_(placement) {}
  KvStore(const KvStore&) = delete;
  KvStore& operator=(const KvStore&) = delete;
  KvTier& tier() { return tier_; }
  const KvTier& tier() const { return tier_; }
  bool write_through() const { return placement_ == KvStorePlacement::kWriteThrough; }
  Time latency() const { return latency_; }
  double bandwidth_gbps() const { return bandwidth_gbps_; }
  double bytes(std::int64_t tokens) const { return static_cast<double>(tokens) * bytes_per_token_; }
  // Uncontended load time of `tokens` over a link of link_gbps: latency +
  // ceil(bytes / min(link, store bandwidth)) ns.
  Time estimate_ns(std::int64_t tokens, double link_gbps) const {
    if (tokens <= 0) return 0;
    const double bw = std::min(link_gbps, bandwidth_gbps_);
    return latency_ + static_cast<Time>(std::ceil(bytes(tokens) / bw));
  }

 private:
  KvTier tier_;
  double bytes_per_token_;
  double bandwidth_gbps_;
  Time latency_;
  KvStorePlacement placement_;
};

}  // namespace servesim
