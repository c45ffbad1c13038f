// cluster.kv_store: parsing and writing back; see kv_store_config.h.
#include "configs/kv_store_config.h"

namespace servesim {

const OptionTable<KvStoreConfig>& kv_store_options() {
  using R = OptionRange;
  static const OptionTable<KvStoreConfig> t = {
      {"capacity_gb", &KvStoreConfig::capacity_gb, R::kNonNegative, "the whole cluster's store, GB; 0 = no store",
       1e9},
      {"bandwidth_gbps", &KvStoreConfig::bandwidth_gbps, R::kPositive,
       "the store's egress, GB/s, shared by all concurrent loads", 1e6, 1e-3},
      {"link_gbps", &KvStoreConfig::link_gbps, R::kNonNegative,
       "each worker's ingress from the store, GB/s; 0 = tp x hardware rdma_nic_gbps", 1e6},
      {"latency_us", &KvStoreConfig::latency_us, R::kNonNegative, "fixed cost of one load from the store, us", 1e9},
      {"placement", one_of(&KvStoreConfig::placement, "placement", {"evicted", "write_through"}), R::kAny,
       "evicted: blocks a worker drops go to the store; write_through: also every prompt block at its prefill's end"},
  };
  return t;
}

KvStoreConfig parse_kv_store(YamlMap& cluster) {
  KvStoreConfig c;
  if (!cluster.has("kv_store")) return c;
  YamlMap m = cluster.map("kv_store");
  read_options(m, kv_store_options(), c);
  if (!c.enabled()) {
    if (m.has("capacity_gb")) m.fail("capacity_gb", "a KV store needs capacity_gb > 0 (omit kv_store for none)");
    m.fail_here("a KV store needs capacity_gb > 0");
  }
  m.finish();
  return c;
}

YAML::Node kv_store_node(const KvStoreConfig& c) {
  YAML::Node n;
  write_options(n, kv_store_options(), c);
  return n;
}

}  // namespace servesim
