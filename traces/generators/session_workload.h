// SessionWorkload: multi-turn conversations. Each session starts at an
// arrival of a Poisson/Gamma process; turn 0's prompt is an optional shared
// system prompt plus a first user message; turn k's prompt is turn k-1's
// whole context (its prompt + its answer) plus a new user message, so its
// prefix blocks extend the previous turn's (prefix reuse, TokenSequence).
// Turn k lists turn k-1 as its parent with a sampled think time: the engine
// releases it only after turn k-1 finishes plus that think time. A session
// ends after its sampled number of turns, or before a turn whose prompt +
// output would exceed max_context_tokens.
//
//   workload:
//     type: sessions
//     sessions: 200                # and/or duration_s (session starts)
//     rate: 0.5                    # session starts per second
//     arrival: poisson             # or {process: gamma, cv: 2}
//     turns: {dist: uniform, min: 1, max: 8}
//     system_prompt_tokens: 0      # shared by every session (0 = none)
//     first_prompt: {dist: lognormal, median: 600, sigma: 0.8}
//     user_prompt: {dist: lognormal, median: 120, sigma: 0.8}
//     output: {dist: lognormal, median: 200, sigma: 0.7, max: 2048}
//     think_time_s: {dist: exponential, mean: 20}
//     max_context_tokens: 32768
//     block_size: 16               # tokens per prefix block (a KV page)
//     clients: 1                   # sessions split at random over client-0..N-1
//
// Stream order: a session's turns are emitted together, right after its turn
// 0 (later turns carry parents, so their `arrival` — set to the session's
// start — is ignored); sessions come in start order. Ids count from 0 in
// that order; session = 1 + session index, turn = 0-based turn.
// Determinism: session i's content draws from its own Rng stream.
#pragma once
#include <cstdint>
#include <memory>

#include "traces/generators/arrival_spec.h"
#include "traces/generators/duration_distribution.h"
#include "traces/generators/length_distribution.h"
#include "traces/workload.h"

namespace servesim {

struct SessionSpec {
  ArrivalSpec starts{.rate = 0.5, .process = {}, .stop = {}};
  LengthDistribution turns = LengthDistribution::uniform(1, 8);
  LengthDistribution first_prompt = LengthDistribution::lognormal(600, 0.8, 16384);
  LengthDistribution user_prompt = LengthDistribution::lognormal(120, 0.8, 4096);
  LengthDistribution output = LengthDistribution::lognormal(200, 0.7, 2048);
  DurationDistribution think_time = DurationDistribution::exponential(20);
  std::int64_t system_prompt_tokens = 0;
  std::int64_t max_context_tokens = 32768;
  std::int32_t block_size = 16;
  std::int32_t clients = 1;
};

// Every key of `type: sessions`, in the order config.resolved.yaml states them.
const OptionTable<SessionSpec>& session_options();

class SessionWorkload final : public Workload {
 public:
  explicit SessionWorkload(SessionSpec spec) : spec_(std::move(spec)) {}
  YAML::Node resolved() const override;
  std::unique_ptr<RequestSource> open(ClientTable& clients, std::uint64_t seed) const override;
  const SessionSpec& spec() const { return spec_; }

 private:
  SessionSpec spec_;
};

std::unique_ptr<Workload> parse_session_workload(YamlMap& m);

}  // namespace servesim
