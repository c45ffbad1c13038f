// The registry of workload types: one line per type. Adding a workload type is
// one class file plus one line here.
#include "traces/workload.h"
#include "sim/core/option_table.h"
#include "traces/readers/trace_reader.h"

#include "traces/generators/agent_workload.h"
#include "traces/generators/empirical_workload.h"
#include "traces/generators/session_workload.h"
#include "traces/generators/synthetic_workload.h"
#include "traces/generators/template_workload.h"
#include "traces/trace_workload.h"

namespace servesim {

const std::vector<WorkloadType>& workload_types() {
  static const std::vector<WorkloadType> types = {
      {"synthetic", "clients with Poisson/Gamma arrivals and fixed/uniform/lognormal lengths",
       parse_synthetic_workload},
      {"templates", "clients sharing Zipf-popular prefix templates (prefix blocks), per-client rates, on/off phases",
       parse_template_workload},
      {"trace", "replay of a trace file (" + trace_format_choices() + ") with transformations", parse_trace_workload},
      {"empirical", "Poisson/Gamma arrivals with lengths resampled from a trace", parse_empirical_workload},
      {"sessions", "multi-turn conversations: each turn extends the last and waits for it plus think time",
       parse_session_workload},
      {"agent_dag", "agent/tool workflows: DAGs of dependent calls with fan-out and fan-in", parse_agent_workload},
  };
  return types;
}

std::unique_ptr<Workload> parse_workload(YamlMap& m) {
  std::string type = m.get<std::string>("type", "synthetic");
  for (const auto& t : workload_types())
    if (t.name == type) return t.parse(m);
  std::vector<std::string> known;
  for (const auto& t : workload_types()) known.push_back(t.name);
  m.fail("type", unknown_name_message("workload type", type, known));
}

}  // namespace servesim
