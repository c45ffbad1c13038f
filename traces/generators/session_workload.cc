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

const OptionTable<SessionSpec>& session_options() {
  // The distributions' parameters are hand-read by their columns (their keys depend on dist:).
  using R = OptionRange;
  static const OptionTable<SessionSpec> t = concat<SessionSpec>({
      lift(&SessionSpec::starts, arrival_spec_options("sessions")),
      {{"turns", length_column(&SessionSpec::turns), R::kAny, "turns per session"},
       {"system_prompt_tokens", &SessionSpec::system_prompt_tokens, R::kNonNegative, "shared by every session (0 = none)"},
       {"first_prompt", length_column(&SessionSpec::first_prompt), R::kAny, "turn 0's user message"},
       {"user_prompt", length_column(&SessionSpec::user_prompt), R::kAny, "a later turn's new user message"},
       {"output", length_column(&SessionSpec::output), R::kAny, "answer tokens"},
       {"think_time_s", duration_column(&SessionSpec::think_time), R::kAny, "between an answer and the next turn, s"},
       {"max_context_tokens", &SessionSpec::max_context_tokens, R::kPositive, "a session ends before a turn past it"},
       {"block_size", &SessionSpec::block_size, R::kPositive, "tokens per prefix block"},
       {"clients", &SessionSpec::clients, R::kPositive, "sessions split at random over client-0..N-1"}},
  });
  return t;
}

YAML::Node SessionWorkload::resolved() const {
  YAML::Node n;
  n["type"] = "sessions";
  write_options(n, session_options(), spec_);
  return n;
}

std::unique_ptr<RequestSource> SessionWorkload::open(ClientTable& clients, std::uint64_t seed) const {
  return std::make_unique<SessionSource>(spec_, clients, seed);
}

std::unique_ptr<Workload> parse_session_workload(YamlMap& m) {
  SessionSpec s;
  read_options(m, session_options(), s);
  check_stop_rule(m, s.starts.stop, "sessions");
  m.finish();
  return std::make_unique<SessionWorkload>(std::move(s));
}

}  // namespace servesim
