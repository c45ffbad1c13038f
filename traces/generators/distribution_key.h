// How the generators read a distribution-valued key (LengthDistribution,
// DurationDistribution): absent gives `def` (the key still counts as known); a
// bare number is read by `scalar(m, key)`; a map (its `dist:` key required) is
// read by `named(map)`, which reads `dist:` by its one_of table, and any key of
// the map left unread is an error.
// distribution_yaml() writes one back: `dist:` then its parameters in order.
#pragma once
#include <initializer_list>
#include <string>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_map.h"

namespace servesim {

template <class D, class Scalar, class Named>
D parse_distribution(YamlMap& m, const std::string& key, const D& def, Scalar scalar, Named named) {
  if (!m.has(key)) {
    m.get<std::string>(key, "");  // mark as known
    return def;
  }
  if (m.node()[key].IsScalar()) return scalar(m, key);
  YamlMap s = m.map(key);
  if (!s.has("dist")) s.require<std::string>("dist");  // "missing required key 'dist'"
  D d = named(s);
  s.finish();
  return d;
}

inline YAML::Node distribution_yaml(const char* dist,
                                    std::initializer_list<std::pair<const char*, YAML::Node>> params) {
  YAML::Node n;
  n["dist"] = dist;
  for (const auto& [key, value] : params) n[key] = value;
  return n;
}

}  // namespace servesim
