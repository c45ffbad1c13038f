// kv_cache: the tiered KV cache section of a scenario (and of a
// cluster.overrides entry): lower tiers below each worker's HBM prefix cache
// (sim/kv_tier.h; docs/configuration.md, docs/simulation.md "Tiered KV cache").
//   kv_cache: {host: {capacity_gb, bandwidth_gbps, latency_us},
//              ssd: {capacity_gb, bandwidth_gbps, latency_us}, overlap: true}
// A host tier is on when its capacity_gb > 0; its bandwidth_gbps 0 means
// tp × the worker's hardware pcie_gbps. An SSD tier needs a host tier and an
// explicit bandwidth_gbps. Errors name file, line and key (InputError).
#pragma once
#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_map.h"
#include "sim/kv_tier.h"

namespace servesim {

// Reads parent's `kv_cache` map over `def` (keys not given keep def's values).
KvTiersConfig parse_kv_tiers(YamlMap& parent, const KvTiersConfig& def);
// The section as config.resolved.yaml writes it (every key).
YAML::Node kv_tiers_node(const KvTiersConfig& c);

}  // namespace servesim
