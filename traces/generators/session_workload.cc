// Multi-turn session generator; see session_workload.h.
#include "traces/generators/session_workload.h"

#include <deque>

#include <fmt/format.h>

#include "traces/generators/group_source.h"
#include "traces/generators/token_sequence.h"

namespace servesim {
namespace {

constexpr std::uint64_t kSystemKey = 0x5E55'0000'0000'0001ULL;

class SessionSource final : public GroupSource {
 public:
  SessionSource(const SessionSpec& spec, ClientTable& clients, std::uint64_t seed)
      : GroupSource(spec.starts, spec.clients, clients, seed, 0x5E55, "workload (sessions)"), spec_(spec) {}

  std::string describe() const override {
    return fmt::format("sessions: {} generated, {} requests", groups(), requests());
  }

 private:
  void generate(std::uint64_t session, Time start, ClientId client, Rng& rng) override {
    std::deque<RequestSpec>& queue = this->queue();
    const std::int64_t turns = spec_.turns.sample(rng);
    TokenSequence seq(spec_.block_size);
    if (spec_.system_prompt_tokens > 0) seq.append(kSystemKey, spec_.system_prompt_tokens);
    const std::uint64_t key_base = mix_key(session);
    for (std::int64_t t = 0; t < turns; ++t) {
      const std::int64_t user = (t == 0 ? spec_.first_prompt : spec_.user_prompt).sample(rng);
      const std::int64_t answer = spec_.output.sample(rng);
      const Time think = t == 0 ? 0 : spec_.think_time.sample(rng);
      if (t > 0 && seq.tokens() + user + answer > spec_.max_context_tokens) break;
      seq.append(key_base + 2 * static_cast<std::uint64_t>(t), user);  // user message of turn t
      RequestSpec r;
      r.id = take_id();
      r.client = client;
      r.arrival = start;
      r.prompt_tokens = seq.tokens();
      r.output_tokens = answer;
      r.prefix_block_size = spec_.block_size;
      seq.blocks(seq.tokens(), r.prefix_blocks);
      if (t > 0) {
        r.parents = {queue.back().id};
        r.think_time = think;
        queue.back().dependents = 1;
      }
      r.session = session;
      r.turn = static_cast<std::int32_t>(t);
      queue.push_back(std::move(r));
      seq.append(key_base + 2 * static_cast<std::uint64_t>(t) + 1, answer);  // the answer joins the context
    }
  }

  static std::uint64_t mix_key(std::uint64_t session) { return (session * 0x9E3779B97F4A7C15ULL) & ~0xFFFFULL; }

  const SessionSpec& spec_;
};

}  // namespace

YAML::Node SessionWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "sessions";
  spec_.starts.resolve_into(n, "sessions");
  n["turns"] = spec_.turns.resolved();
  n["system_prompt_tokens"] = spec_.system_prompt_tokens;
  n["first_prompt"] = spec_.first_prompt.resolved();
  n["user_prompt"] = spec_.user_prompt.resolved();
  n["output"] = spec_.output.resolved();
  n["think_time_s"] = spec_.think_time.resolved();
  n["max_context_tokens"] = spec_.max_context_tokens;
  n["block_size"] = spec_.block_size;
  n["clients"] = spec_.clients;
  return n;
}

std::unique_ptr<RequestSource> SessionWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<SessionSource>(spec_, clients, seed);
}

std::unique_ptr<Workload> parse_session_workload(YamlMap& m) {
  SessionSpec s;
  s.starts = parse_arrival_spec(m, "sessions", 0.5);
  LengthDistribution turns;
  turns.kind = LengthDistribution::Kind::kUniform;
  turns.min = 1;
  turns.max = 8;
  s.turns = parse_length(m, "turns", turns);
  LengthDistribution first;
  first.kind = LengthDistribution::Kind::kLognormal;
  first.median = 600;
  first.sigma = 0.8;
  first.max = 16384;
  s.first_prompt = parse_length(m, "first_prompt", first);
  LengthDistribution user = first;
  user.median = 120;
  user.max = 4096;
  s.user_prompt = parse_length(m, "user_prompt", user);
  LengthDistribution output = first;
  output.median = 200;
  output.sigma = 0.7;
  output.max = 2048;
  s.output = parse_length(m, "output", output);
  DurationDistribution think;
  think.kind = DurationDistribution::Kind::kExponential;
  think.mean = 20;
  s.think_time = parse_duration(m, "think_time_s", think);
  s.system_prompt_tokens = m.get<std::int64_t>("system_prompt_tokens", 0);
  if (s.system_prompt_tokens < 0) m.fail("system_prompt_tokens", "must be >= 0");
  s.max_context_tokens = m.positive_int("max_context_tokens", 32768);
  s.block_size = static_cast<std::int32_t>(m.positive_int("block_size", 16));
  s.clients = static_cast<std::int32_t>(m.positive_int("clients", 1));
  m.finish();
  return std::make_unique<SessionWorkload>(std::move(s));
}

}  // namespace servesim
