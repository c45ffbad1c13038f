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

LengthDistribution fixed_length(std::int64_t n) {
  LengthDistribution d;
  d.value = static_cast<double>(n);
  return d;
}

std::vector<AgentNodeTemplate> default_nodes() {
  AgentNodeTemplate plan{"plan", 1, {}, fixed_length(200), fixed_length(150), {}};
  DurationDistribution tool_time;
  tool_time.kind = DurationDistribution::Kind::kExponential;
  tool_time.mean = 1.5;
  AgentNodeTemplate tool{"tool", 4, {"plan"}, fixed_length(150), fixed_length(100), tool_time};
  AgentNodeTemplate answer{"answer", 1, {"tool"}, fixed_length(100), fixed_length(300), {}};
  return {plan, tool, answer};
}

}  // namespace

AgentWorkload::AgentWorkload(AgentSpec spec, const std::string& where)
    : spec_(std::move(spec)), dag_(spec_.nodes, where) {}

YAML::Node AgentWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "agent_dag";
  spec_.starts.resolve_into(n, "workflows");
  n["system_prompt_tokens"] = spec_.system_prompt_tokens;
  n["task"] = spec_.task.resolved();
  n["block_size"] = spec_.block_size;
  n["clients"] = spec_.clients;
  for (const auto& node : spec_.nodes) {
    YAML::Node x;
    x["name"] = node.name;
    x["count"] = node.count;
    YAML::Node after(YAML::NodeType::Sequence);
    for (const auto& a : node.after) after.push_back(a);
    x["after"] = after;
    x["prompt"] = node.prompt.resolved();
    x["output"] = node.output.resolved();
    x["think_time_s"] = node.think_time.resolved();
    n["nodes"].push_back(x);
  }
  return n;
}

std::unique_ptr<RequestSource> AgentWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<AgentSource>(spec_, dag_, clients, seed);
}

std::unique_ptr<Workload> parse_agent_workload(YamlMap& m) {
  AgentSpec s;
  s.starts = parse_arrival_spec(m, "workflows", 0.2);
  s.system_prompt_tokens = m.get<std::int64_t>("system_prompt_tokens", 1024);
  if (s.system_prompt_tokens < 0) m.fail("system_prompt_tokens", "must be >= 0");
  LengthDistribution task;
  task.kind = LengthDistribution::Kind::kLognormal;
  task.median = 400;
  task.sigma = 0.6;
  task.max = 8192;
  s.task = parse_length(m, "task", task);
  s.block_size = static_cast<std::int32_t>(m.positive_int("block_size", 16));
  s.clients = static_cast<std::int32_t>(m.positive_int("clients", 1));
  const bool has_nodes = m.has("nodes");
  YAML::Node list = m.raw("nodes");
  if (!has_nodes) {
    s.nodes = default_nodes();
  } else {
    if (!list.IsSequence() || list.size() == 0) m.fail("nodes", "expected a non-empty list of nodes");
    for (std::size_t i = 0; i < list.size(); ++i) {
      YamlMap nm(list[i], m.file(), m.key_path(fmt::format("nodes[{}]", i)));
      AgentNodeTemplate node;
      node.name = nm.require<std::string>("name");
      node.count = static_cast<std::int32_t>(nm.positive_int("count", 1));
      node.after = nm.list<std::string>("after");
      node.prompt = parse_length(nm, "prompt", fixed_length(200));
      node.output = parse_length(nm, "output", fixed_length(100));
      node.think_time = parse_duration(nm, "think_time_s", DurationDistribution{});
      nm.finish();
      s.nodes.push_back(std::move(node));
    }
  }
  m.finish();
  return std::make_unique<AgentWorkload>(std::move(s), fmt::format("{}: {}", m.file(), m.key_path("nodes")));
}

}  // namespace servesim
