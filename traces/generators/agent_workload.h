// AgentWorkload: agent / tool workflows as DAGs of dependent LLM calls
// (AgentDag). Workflows start at the arrivals of a Poisson/Gamma process;
// each instantiates the node template. A call's prompt is
//   [shared system prompt][the workflow's task][outputs of its parent calls,
//   in order][its own instruction]
// so calls of one workflow share the system+task prefix, and a fan-in call
// reads what its parents produced. Root calls arrive when the workflow
// starts; a call with parents is released when all of them have finished,
// plus its node's think time (the tool's execution time).
//
//   workload:
//     type: agent_dag
//     workflows: 100               # and/or duration_s (workflow starts)
//     rate: 0.2                    # workflow starts per second
//     arrival: poisson             # or {process: gamma, cv: 2}
//     system_prompt_tokens: 1024   # shared by every call of every workflow
//     task: {dist: lognormal, median: 400, sigma: 0.6}   # per workflow
//     block_size: 16
//     clients: 1                   # workflows split at random over client-0..N-1
//     nodes:                       # default: plan -> 4 parallel tools -> answer
//       - {name: plan, prompt: 200, output: 150}
//       - {name: tool, count: 4, after: [plan], prompt: 150, output: 100,
//          think_time_s: {dist: exponential, mean: 1.5}}
//       - {name: answer, after: [tool], prompt: 100, output: 300}
//
// Stream order: a workflow's calls come together, in topological order;
// workflows come in start order. Ids count from 0; session = 1 + workflow
// index; turn = the call's position in its workflow; category = 1 + node index.
#pragma once
#include <memory>
#include <vector>

#include "traces/generators/agent_dag.h"
#include "traces/generators/arrival_spec.h"
#include "traces/workload.h"

namespace servesim {

// plan -> 4 parallel tools -> answer: the nodes when `nodes:` is absent.
std::vector<AgentNodeTemplate> default_agent_nodes();

struct AgentSpec {
  ArrivalSpec starts{.rate = 0.2, .process = {}, .stop = {}};
  std::int64_t system_prompt_tokens = 1024;
  LengthDistribution task = LengthDistribution::lognormal(400, 0.6, 8192);
  std::int32_t block_size = 16;
  std::int32_t clients = 1;
  std::vector<AgentNodeTemplate> nodes = default_agent_nodes();
};

// rate, arrival, workflows, duration_s, system_prompt_tokens, task, block_size,
// clients; `nodes` (a list of maps, each read by agent_node_options()) is read
// and written by hand after them.
const OptionTable<AgentSpec>& agent_options();
// One item of `nodes`: name (required), count, after, prompt, output, think_time_s.
const OptionTable<AgentNodeTemplate>& agent_node_options();

class AgentWorkload final : public Workload {
 public:
  // Throws InputError if the node template is not a valid DAG.
  explicit AgentWorkload(AgentSpec spec, const std::string& where);
  YAML::Node resolved() const override;
  std::unique_ptr<RequestSource> open(ClientTable& clients, std::uint64_t seed) const override;
  const AgentDag& dag() const { return dag_; }

 private:
  AgentSpec spec_;
  AgentDag dag_;
};

std::unique_ptr<Workload> parse_agent_workload(YamlMap& m);

}  // namespace servesim
