// kv_cache: parsing and writing back; see kv_tiers_config.h.
#include "configs/kv_tiers_config.h"

#include "configs/option_tables.h"

namespace servesim {

KvTiersConfig parse_kv_tiers(YamlMap& parent, const KvTiersConfig& def) {
  KvTiersConfig c = def;
  if (!parent.has("kv_cache")) return c;
  YamlMap m = parent.map("kv_cache");
  for (auto [key, tier] : {std::pair{"host", &c.host}, std::pair{"ssd", &c.ssd}}) {
    YamlMap t = m.map(key);
    read_options(t, kv_tier_options(), *tier);
    if (std::string(key) == "ssd" && tier->enabled() && !(tier->bandwidth_gbps > 0))
      t.fail(t.has("bandwidth_gbps") ? "bandwidth_gbps" : "capacity_gb",
             "an SSD tier needs its bandwidth_gbps (> 0; e.g. 7 for one PCIe Gen4 NVMe drive)");
    t.finish();
  }
  c.overlap = m.get<bool>("overlap", c.overlap);
  if (c.ssd.enabled() && !c.host.enabled())
    m.fail("ssd", "an SSD tier sits below a host tier: set host.capacity_gb > 0 too");
  m.finish();
  return c;
}

YAML::Node kv_tiers_node(const KvTiersConfig& c) {
  YAML::Node n;
  YAML::Node host, ssd;
  write_options(host, kv_tier_options(), c.host);
  write_options(ssd, kv_tier_options(), c.ssd);
  n["host"] = host;
  n["ssd"] = ssd;
  n["overlap"] = c.overlap;
  return n;
}

}  // namespace servesim
