// Agent/tool workflow generator; see agent_workload.h.
#include "traces/generators/agent_workload.h"

#include <fmt/format.h>

#include "traces/generators/group_source.h"
#include "traces/generators/token_sequence.h"

namespace servesim {
namespace {

constexpr std::uint64_t kSystemKey = 0xA6E7'0000'0000'0001ULL;

class AgentSource final : public GroupSource {
 public:
  AgentSource(const AgentSpec& spec, const AgentDag& dag, ClientTable& clients, std::uint64_t seed)
      : GroupSource(spec.starts, spec.clients, clients, seed, 0xA6E7, "workload (agent_dag)"), spec_(spec), dag_(dag) {}

  std::string describe() const override {
    return fmt::format("agent_dag: {} workflows of {} calls", groups(), dag_.calls().size());
  }

 private:
  void generate(std::uint64_t wf, Time start, ClientId client, Rng& rng) override {
    const std::uint64_t base = (wf * 0x9E3779B97F4A7C15ULL) & ~0xFFFFFULL;
    const std::int64_t task = spec_.task.sample(rng);
    const auto& calls = dag_.calls();
    const RequestId first_id = requests();
    std::vector<std::int64_t> outputs(calls.size());
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const AgentDag::Call& call = calls[c];
      const AgentNodeTemplate& node = spec_.nodes[static_cast<std::size_t>(call.node)];
      TokenSequence seq(spec_.block_size);
      if (spec_.system_prompt_tokens > 0) seq.append(kSystemKey, spec_.system_prompt_tokens);
      seq.append(base, task);
      for (std::int32_t p : call.parents) seq.append(base + 1 + 2 * static_cast<std::uint64_t>(p), outputs[p]);
      seq.append(base + 2 + 2 * static_cast<std::uint64_t>(c), node.prompt.sample(rng));
      outputs[c] = node.output.sample(rng);
      RequestSpec r;
      r.id = take_id();
      r.client = client;
      r.arrival = start;
      r.prompt_tokens = seq.tokens();
      r.output_tokens = outputs[c];
      r.prefix_block_size = spec_.block_size;
      seq.blocks(seq.tokens(), r.prefix_blocks);
      for (std::int32_t p : call.parents) r.parents.push_back(first_id + static_cast<RequestId>(p));
      if (!r.parents.empty()) r.think_time = node.think_time.sample(rng);
      r.dependents = call.children;
      r.session = wf;
      r.turn = static_cast<std::int32_t>(c);
      r.category = call.node + 1;
      queue().push_back(std::move(r));
    }
  }

  const AgentSpec& spec_;
  const AgentDag& dag_;
};

}  // namespace

std::vector<AgentNodeTemplate> default_agent_nodes() {
  const auto fixed = LengthDistribution::fixed;
  AgentNodeTemplate plan{"plan", 1, {}, fixed(200), fixed(150), {}};
  AgentNodeTemplate tool{"tool", 4, {"plan"}, fixed(150), fixed(100), DurationDistribution::exponential(1.5)};
  AgentNodeTemplate answer{"answer", 1, {"tool"}, fixed(100), fixed(300), {}};
  return {plan, tool, answer};
}

const OptionTable<AgentSpec>& agent_options() {
  // Hand-read after it: `nodes`, a list of maps (each item by agent_node_options(); absent: default_agent_nodes()).
  using R = OptionRange;
  static const OptionTable<AgentSpec> t = concat<AgentSpec>({
      lift(&AgentSpec::starts, arrival_spec_options("workflows")),
      {{"system_prompt_tokens", &AgentSpec::system_prompt_tokens, R::kNonNegative, "shared by every call of every workflow"},
       {"task", length_column(&AgentSpec::task), R::kAny, "the workflow's task tokens"},
       {"block_size", &AgentSpec::block_size, R::kPositive, "tokens per prefix block"},
       {"clients", &AgentSpec::clients, R::kPositive, "workflows split at random over client-0..N-1"}},
  });
  return t;
}

const OptionTable<AgentNodeTemplate>& agent_node_options() {
  // name: required (checked before the table reads: no default).
  using R = OptionRange;
  static const OptionTable<AgentNodeTemplate> t = {
      {"name", &AgentNodeTemplate::name, R::kAny, "the node's name (required)"},
      {"count", &AgentNodeTemplate::count, R::kPositive, "parallel calls of this node (fan-out)"},
      {"after", list_of(&AgentNodeTemplate::after), R::kAny, "nodes every call of this one waits for (fan-in)"},
      {"prompt", length_column(&AgentNodeTemplate::prompt), R::kAny, "the call's own instruction tokens"},
      {"output", length_column(&AgentNodeTemplate::output), R::kAny, "output tokens"},
      {"think_time_s", duration_column(&AgentNodeTemplate::think_time), R::kAny,
       "tool time after the last parent finishes, s"},
  };
  return t;
}

AgentWorkload::AgentWorkload(AgentSpec spec, const std::string& where)
    : spec_(std::move(spec)), dag_(spec_.nodes, where) {}

YAML::Node AgentWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "agent_dag";
  write_options(n, agent_options(), spec_);
  for (const auto& node : spec_.nodes) {
    YAML::Node x;
    write_options(x, agent_node_options(), node);
    n["nodes"].push_back(x);
  }
  return n;
}

std::unique_ptr<RequestSource> AgentWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<AgentSource>(spec_, dag_, clients, seed);
}

std::unique_ptr<Workload> parse_agent_workload(YamlMap& m) {
  AgentSpec s;
  read_options(m, agent_options(), s);
  check_stop_rule(m, s.starts.stop, "workflows");
  const bool has_nodes = m.has("nodes");
  YAML::Node list = m.raw("nodes");
  if (has_nodes) {  // absent: the spec's default nodes
    if (!list.IsSequence() || list.size() == 0) m.fail("nodes", "expected a non-empty list of nodes");
    s.nodes.clear();
    for (std::size_t i = 0; i < list.size(); ++i) {
      YamlMap nm(list[i], m.file(), m.key_path(fmt::format("nodes[{}]", i)));
      if (!nm.has("name")) nm.require<std::string>("name");  // "missing required key 'name'"
      AgentNodeTemplate node;
      read_options(nm, agent_node_options(), node);
      nm.finish();
      s.nodes.push_back(std::move(node));
    }
  }
  m.finish();
  return std::make_unique<AgentWorkload>(std::move(s), fmt::format("{}: {}", m.file(), m.key_path("nodes")));
}

}  // namespace servesim
