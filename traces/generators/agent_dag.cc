// Workflow DAG expansion and ordering with Boost.Graph; see agent_dag.h.
#include "traces/generators/agent_dag.h"

#include <algorithm>
#include <map>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

AgentDag::AgentDag(const std::vector<AgentNodeTemplate>& nodes, const std::string& where) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  if (nodes.empty()) throw InputError(fmt::format("{}: a workflow needs at least one node", where));
  std::map<std::string, std::int32_t> index;
  std::vector<std::int32_t> first_call;  // template node -> its first vertex
  std::int32_t vertices = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!index.emplace(nodes[i].name, static_cast<std::int32_t>(i)).second)
      throw InputError(fmt::format("{}: duplicate node name '{}'", where, nodes[i].name));
    if (nodes[i].count < 1 || nodes[i].count > 10000)
      throw InputError(fmt::format("{}: node '{}': count must be in [1, 10000]", where, nodes[i].name));
    first_call.push_back(vertices);
    vertices += nodes[i].count;
  }
  Graph g(static_cast<std::size_t>(vertices));
  std::vector<std::int32_t> node_of(static_cast<std::size_t>(vertices));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::int32_t c = 0; c < nodes[i].count; ++c) node_of[first_call[i] + c] = static_cast<std::int32_t>(i);
    for (const auto& p : nodes[i].after) {
      auto it = index.find(p);
      if (it == index.end())
        throw InputError(fmt::format("{}: node '{}': unknown node '{}' in after", where, nodes[i].name, p));
      for (std::int32_t a = 0; a < nodes[it->second].count; ++a)
        for (std::int32_t c = 0; c < nodes[i].count; ++c)
          boost::add_edge(first_call[it->second] + a, first_call[i] + c, g);
    }
  }
  std::vector<Graph::vertex_descriptor> reverse_order;
  try {
    boost::topological_sort(g, std::back_inserter(reverse_order));
  } catch (const boost::not_a_dag&) {
    throw InputError(fmt::format("{}: the workflow's `after` links form a cycle", where));
  }
  std::vector<std::int32_t> position(static_cast<std::size_t>(vertices));
  std::int32_t pos = 0;
  for (auto it = reverse_order.rbegin(); it != reverse_order.rend(); ++it) position[*it] = pos++;
  calls_.resize(static_cast<std::size_t>(vertices));
  for (auto it = reverse_order.rbegin(); it != reverse_order.rend(); ++it) {
    Call& call = calls_[position[*it]];
    call.node = node_of[*it];
    for (auto [e, end] = boost::in_edges(*it, g); e != end; ++e) call.parents.push_back(position[boost::source(*e, g)]);
    std::sort(call.parents.begin(), call.parents.end());
    call.children = static_cast<std::int32_t>(boost::out_degree(*it, g));
  }
}

}  // namespace servesim
