// `type: trace` workloads; see trace_workload.h.
#include "traces/trace_workload.h"

#include "traces/trace_source.h"

namespace servesim {

std::unique_ptr<RequestSource> TraceWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<TraceSource>(opt_, clients, seed);
}

std::unique_ptr<Workload> parse_trace_workload(YamlMap& m) {
  return std::make_unique<TraceWorkload>(parse_trace_options(m));
}

}  // namespace servesim
