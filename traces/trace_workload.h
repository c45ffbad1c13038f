// TraceWorkload: `workload: {type: trace, path: ..., ...}` — replays a trace
// file (any supported format) through the transformation chain. Settings and
// their order: trace_options.h; formats and rules: docs/traces.md.
//
// The path is used as written: a relative path is relative to the current
// directory (the README's commands run from the repository root, so the
// scenarios' `../shared/traces/...` paths point beside the checkout);
// override it with `--set workload.path=...`.
#pragma once
#include <memory>

#include "traces/trace_options.h"
#include "traces/workload.h"

namespace servesim {

class TraceWorkload final : public Workload {
 public:
  explicit TraceWorkload(TraceOptions opt) : opt_(std::move(opt)) {}
  YAML::Node resolved() const override { return trace_options_yaml(opt_); }
  std::unique_ptr<RequestSource> open(ClientTable& clients, std::uint64_t seed) const override;
  const TraceOptions& options() const { return opt_; }

 private:
  TraceOptions opt_;
};

// Registry entry (workload_registry.cc).
std::unique_ptr<Workload> parse_trace_workload(YamlMap& m);

}  // namespace servesim
