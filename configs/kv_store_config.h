// cluster.kv_store: the cluster-wide KV store section of a scenario
// (sim/kv_store.h; docs/kv.md, docs/configuration.md "Cluster KV store").
//   cluster: {kv_store: {capacity_gb, bandwidth_gbps, link_gbps, latency_us,
//                        placement: evicted | write_through}}
// The store is on when capacity_gb > 0; link_gbps 0 means each worker's
// tp x hardware rdma_nic_gbps. Errors name file, line and key (InputError).
#pragma once
#include <yaml-cpp/yaml.h>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "sim/kv_store.h"

namespace servesim {

const OptionTable<KvStoreConfig>& kv_store_options();
// Reads cluster's `kv_store` map (absent: no store).
KvStoreConfig parse_kv_store(YamlMap& cluster);
// The section as config.resolved.yaml writes it (every key).
YAML::Node kv_store_node(const KvStoreConfig& c);

}  // namespace servesim
