// Workload: the `workload:` section of a scenario, parsed into a typed object
// that can (1) state itself back as YAML for config.resolved.yaml and (2) open
// a fresh RequestSource. Each workload type (synthetic, trace, sessions, agent
// DAGs, ...) is one class plus one line in the registry (workload_registry.cc).
//
// Contract: open() may be called more than once (e.g. a sweep point, a test)
// and yields the same request stream for the same seed; it registers client
// names in `clients` in a deterministic order.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/yaml_map.h"
#include "sim/core/request_source.h"

namespace servesim {

class Workload {
 public:
  virtual ~Workload() = default;
  // The fully resolved settings (defaults filled in), including `type:`.
  virtual YAML::Node resolved() const = 0;
  virtual std::unique_ptr<RequestSource> open(ClientTable& clients, std::uint64_t seed) const = 0;
};

// Parses the keys of a `workload:` map whose `type` was already read.
// Must call m.finish() (unknown keys are errors).
using WorkloadParser = std::function<std::unique_ptr<Workload>(YamlMap& m)>;

struct WorkloadType {
  std::string name;
  std::string help;  // one line, shown in errors and docs
  WorkloadParser parse;
};

// All workload types, in a fixed order (defined in workload_registry.cc).
const std::vector<WorkloadType>& workload_types();

// Reads `type:` (default "synthetic") and dispatches; an unknown type is an
// InputError listing the known ones.
std::unique_ptr<Workload> parse_workload(YamlMap& m);

}  // namespace servesim
