// kv_cache: parsing and writing back; see kv_tiers_config.h.
#include "configs/kv_tiers_config.h"

#include "configs/option_tables.h"

namespace servesim {

KvTiersConfig parse_kv_tiers(YamlMap& parent, const KvTiersConfig& def) {
  KvTiersConfig c = def;
  if (!parent.has("kv_cache")) return c;
  YamlMap m = parent.map("kv_cache");
  read_options(m, kv_cache_options(), c);
  if (c.ssd.enabled() && !(c.ssd.bandwidth_gbps > 0)) {
    YamlMap t = m.map("ssd");
    t.fail(t.has("bandwidth_gbps") ? "bandwidth_gbps" : "capacity_gb",
           "an SSD tier needs its bandwidth_gbps (> 0; e.g. 7 for one PCIe Gen4 NVMe drive)");
  }
  if (c.ssd.enabled() && !c.host.enabled())
    m.fail("ssd", "an SSD tier sits below a host tier: set host.capacity_gb > 0 too");
  m.finish();
  return c;
}

YAML::Node kv_tiers_node(const KvTiersConfig& c) {
  YAML::Node n;
  write_options(n, kv_cache_options(), c);
  return n;
}

}  // namespace servesim
