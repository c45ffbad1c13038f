// AgentDag: the call graph of one agent/tool workflow, expanded from a
// template of named nodes. A node with `count: N` stands for N parallel calls
// (fan-out); a node listing `after: [a, b]` depends on every call of a and b
// (fan-in). The graph is a Boost.Graph adjacency list; construction checks
// names and acyclicity (boost::topological_sort) and orders the calls so
// every call comes after all of its parents.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "traces/generators/duration_distribution.h"
#include "traces/generators/length_distribution.h"

namespace servesim {

struct AgentNodeTemplate {
  std::string name;
  std::int32_t count = 1;                // parallel calls of this node
  std::vector<std::string> after;        // names of parent nodes
  LengthDistribution prompt = LengthDistribution::fixed(200);  // the call's own instruction tokens
  LengthDistribution output = LengthDistribution::fixed(100);
  DurationDistribution think_time;       // tool/execution time after the last parent finishes
};

class AgentDag {
 public:
  struct Call {
    std::int32_t node;                   // index into the template
    std::vector<std::int32_t> parents;   // indices into calls(), all smaller than this call's
    std::int32_t children = 0;           // calls that list this one as a parent
  };

  // Expands and checks the template; throws InputError (prefixed by `where`)
  // on an unknown or duplicate name, a bad count, or a cycle.
  AgentDag(const std::vector<AgentNodeTemplate>& nodes, const std::string& where);

  const std::vector<Call>& calls() const { return calls_; }  // topological order

 private:
  std::vector<Call> calls_;
};

}  // namespace servesim
