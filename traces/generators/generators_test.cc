// Generators beyond the synthetic one: multi-turn sessions, agent DAGs,
// empirical length resampling, and their exact replay through the native
// format (what `servesim trace gen` writes).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>

#include "traces/generators/agent_workload.h"
#include "traces/generators/arrival_spec.h"
#include "traces/generators/empirical_workload.h"
#include "traces/native_writer.h"
#include "traces/generators/session_workload.h"
#include "traces/test_files.h"
#include "traces/generators/token_sequence.h"
#include "traces/trace_workload.h"

using namespace servesim;
using servesim::testing::input_error;
using servesim::testing::TempDir;

namespace {

std::unique_ptr<Workload> parse(const std::string& yaml) {
  YamlMap m(YAML::Load(yaml), "test.yaml", "workload");
  return parse_workload(m);
}

std::vector<RequestSpec> drain(const Workload& w, ClientTable& clients, std::uint64_t seed = 1) {
  auto src = w.open(clients, seed);
  std::vector<RequestSpec> out;
  RequestSpec r;
  while (src->next(r)) out.push_back(r);
  return out;
}

std::size_t shared_leading(const std::vector<BlockHash>& a, const std::vector<BlockHash>& b) {
  std::size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  return k;
}

// Stream contract: unique ids, parents earlier in the stream with exact
// dependents counts, independent arrivals non-decreasing.
void check_stream_contract(const std::vector<RequestSpec>& reqs) {
  std::map<RequestId, std::int32_t> declared, seen_children;
  Time last = 0;
  for (const auto& r : reqs) {
    REQUIRE(declared.count(r.id) == 0);
    for (RequestId p : r.parents) {
      REQUIRE(declared.count(p) == 1);
      ++seen_children[p];
    }
    if (r.parents.empty()) {
      CHECK(r.arrival >= last);
      last = r.arrival;
    }
    CHECK(r.prompt_tokens >= 1);
    CHECK(r.output_tokens >= 1);
    CHECK(static_cast<std::int64_t>(r.prefix_blocks.size()) ==
          (r.prompt_tokens + r.prefix_block_size - 1) / r.prefix_block_size);
    declared[r.id] = r.dependents;
  }
  for (const auto& [id, n] : declared) CHECK(seen_children[id] == n);
}

}  // namespace

TEST_CASE("token sequences share a block exactly when every token up to its end is shared") {
  TokenSequence a(16), b(16);
  a.append(1, 40);
  b.append(1, 40);
  b.append(2, 30);
  std::vector<BlockHash> ba, bb, bb_short;
  a.blocks(40, ba);
  b.blocks(70, bb);
  b.blocks(40, bb_short);
  CHECK(ba.size() == 3);
  CHECK(bb.size() == 5);
  CHECK(shared_leading(ba, bb) == 2);  // block 2 is partial in a (tokens 32..39), full in b
  CHECK(ba == bb_short);
}

TEST_CASE("each session turn extends the previous prompt and answer and waits for it plus a think time") {
  auto w = parse("{type: sessions, sessions: 40, rate: 1, turns: {dist: uniform, min: 2, max: 6}, "
                 "system_prompt_tokens: 64, think_time_s: {dist: exponential, mean: 5}, clients: 3}");
  ClientTable clients;
  auto reqs = drain(*w, clients);
  check_stream_contract(reqs);
  CHECK(clients.size() == 3);
  std::map<RequestId, const RequestSpec*> by_id;
  int follow_ups = 0;
  std::set<std::uint64_t> sessions;
  for (const auto& r : reqs) {
    by_id[r.id] = &r;
    sessions.insert(r.session);
    if (r.turn == 0) {
      CHECK(r.parents.empty());
      continue;
    }
    ++follow_ups;
    REQUIRE(r.parents.size() == 1);
    const RequestSpec& prev = *by_id.at(r.parents[0]);
    CHECK(prev.session == r.session);
    CHECK(prev.turn == r.turn - 1);
    CHECK(prev.client == r.client);
    CHECK(prev.dependents == 1);
    CHECK(r.prompt_tokens > prev.prompt_tokens + prev.output_tokens);
    CHECK(r.think_time > 0);
    // Every full block of the previous prompt is reused.
    CHECK(shared_leading(prev.prefix_blocks, r.prefix_blocks) >= static_cast<std::size_t>(prev.prompt_tokens / 16));
  }
  CHECK(sessions.size() == 40);
  CHECK(follow_ups >= 40);
  // Sessions share the system prompt's 4 full blocks, and nothing past it.
  const RequestSpec* first_turns[2] = {nullptr, nullptr};
  for (const auto& r : reqs)
    if (r.turn == 0) first_turns[first_turns[0] ? 1 : 0] = &r;
  CHECK(shared_leading(first_turns[0]->prefix_blocks, first_turns[1]->prefix_blocks) == 4);
  // Same seed, same stream; another seed, another stream.
  ClientTable c2, c3;
  auto again = drain(*w, c2, 1), other = drain(*w, c3, 2);
  REQUIRE(again.size() == reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) CHECK(again[i].prefix_blocks == reqs[i].prefix_blocks);
  CHECK((other.size() != reqs.size() || other[0].prompt_tokens != reqs[0].prompt_tokens ||
         other[1].arrival != reqs[1].arrival));
}

TEST_CASE("a session ends before a turn would exceed the context limit") {
  auto w = parse("{type: sessions, sessions: 20, turns: 50, first_prompt: 1000, user_prompt: 500, output: 500, "
                 "max_context_tokens: 8000}");
  ClientTable clients;
  auto reqs = drain(*w, clients);
  for (const auto& r : reqs) CHECK(r.prompt_tokens + r.output_tokens <= 8000);
  // Turn k's prompt is 1000 + 1000k tokens; turn 7 would need 8000 + 500 output.
  CHECK(reqs.size() == 20 * 7);
}

TEST_CASE("an agent workflow fans out from the plan to parallel tools and fans in to the answer") {
  auto w = parse("{type: agent_dag, workflows: 5, rate: 1}");
  ClientTable clients;
  auto reqs = drain(*w, clients);
  check_stream_contract(reqs);
  REQUIRE(reqs.size() == 5 * 6);
  const RequestSpec& plan = reqs[0];
  CHECK(plan.parents.empty());
  CHECK(plan.dependents == 4);
  for (int t = 1; t <= 4; ++t) {
    CHECK(reqs[t].parents == std::vector<RequestId>{plan.id});
    CHECK(reqs[t].dependents == 1);
    CHECK(reqs[t].think_time > 0);  // the tool runs after the plan finishes
    CHECK(reqs[t].category == 2);
    // Siblings share the system prompt + task + plan output prefix.
    CHECK(shared_leading(reqs[1].prefix_blocks, reqs[t].prefix_blocks) >= 1024 / 16);
  }
  const RequestSpec& answer = reqs[5];
  CHECK(answer.parents.size() == 4);
  CHECK(answer.dependents == 0);
  CHECK(answer.prompt_tokens >= plan.prompt_tokens - 200 + 4 * 100 + 100);  // reads all four tool outputs
  CHECK(reqs[6].session == 2);
  CHECK(reqs[6].arrival > reqs[0].arrival);
}

TEST_CASE("an agent workflow with a cycle or an unknown node is rejected") {
  std::string err = input_error([] {
    parse("{type: agent_dag, workflows: 1, nodes: [{name: a, after: [b]}, {name: b, after: [a]}]}");
  });
  CHECK(err.find("cycle") != std::string::npos);
  err = input_error([] { parse("{type: agent_dag, workflows: 1, nodes: [{name: a, after: [nope]}]}"); });
  CHECK(err.find("unknown node 'nope'") != std::string::npos);
}

TEST_CASE("empirical lengths are resampled as (prompt, output) pairs of the trace") {
  std::string path = servesim::testing::shared_trace("vtc_lmsys/real_trace.csv");
  auto w = parse("{type: empirical, path: " + path + ", requests: 2000, rate: 10}");
  ClientTable clients;
  auto reqs = drain(*w, clients);
  REQUIRE(reqs.size() == 2000);
  std::set<std::pair<std::int64_t, std::int64_t>> pairs;
  auto reader = open_trace(path, {});
  TraceRow row;
  while (reader->next(row)) pairs.insert({row.spec.prompt_tokens, row.spec.output_tokens});
  for (const auto& r : reqs) CHECK(pairs.count({r.prompt_tokens, r.output_tokens}) == 1);
  CHECK(reqs.back().arrival == doctest::Approx(200e9).epsilon(0.1));
}

TEST_CASE("a generated workload written in the native format replays exactly") {
  for (const char* name : {"gen.csv", "gen.jsonl"}) {
    for (const char* yaml : {"{type: sessions, sessions: 15, clients: 3}", "{type: agent_dag, workflows: 4, clients: 2}",
                             "{type: synthetic, requests: 50, clients: [{name: b, rate: 1}, {name: a, rate: 3}]}"}) {
      TempDir dir;
      std::string path = dir.file(name);
      auto w = parse(yaml);
      ClientTable gen_clients;
      auto src = w->open(gen_clients, 9);
      std::int64_t n = write_native_trace(*src, gen_clients, path);
      ClientTable c1, c2;
      auto original = drain(*w, c1, 9);
      auto replayed = drain(*parse("{type: trace, path: " + path + "}"), c2, 123);
      CHECK(n == static_cast<std::int64_t>(original.size()));
      CHECK(c2.names() == c1.names());
      REQUIRE(replayed.size() == original.size());
      for (std::size_t i = 0; i < original.size(); ++i) {
        const RequestSpec& a = original[i];
        const RequestSpec& b = replayed[i];
        CHECK((a.id == b.id && a.client == b.client && a.arrival == b.arrival && a.prompt_tokens == b.prompt_tokens &&
               a.output_tokens == b.output_tokens && a.prefix_blocks == b.prefix_blocks &&
               a.prefix_block_size == b.prefix_block_size && a.parents == b.parents && a.think_time == b.think_time &&
               a.dependents == b.dependents && a.session == b.session && a.turn == b.turn &&
               a.category == b.category));
      }
    }
  }
}

TEST_CASE("generator numbers are bounded where they are read, and a derived arrival past the clock is an error (issue 34)") {
  auto error = [](const std::string& yaml) {
    try {
      parse(yaml);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto has = [](const std::string& s, const char* part) { return s.find(part) != std::string::npos; };
  // rate 1e-10 arrived at -9.2e18 ns; gamma cv 1e-300 hung, 1e300 was exit 3; 2^63-1 requests ran forever.
  CHECK(has(error("{type: synthetic, requests: 10, clients: [{rate: 1e-10}]}"),
            "clients[0].rate: must be at least 1e-06, got 1e-10"));
  CHECK(has(error("{type: sessions, sessions: 4, rate: 1e-10}"), "workload.rate: must be at least 1e-06"));
  CHECK(has(error("{type: synthetic, requests: 10, clients: [{rate: 1, arrival: {process: gamma, cv: 1e-300}}]}"),
            "clients[0].arrival.cv: must be at least 0.001"));
  CHECK(has(error("{type: synthetic, requests: 10, clients: [{rate: 1, arrival: {process: gamma, cv: 1e300}}]}"),
            "clients[0].arrival.cv: must be at most 1000 in magnitude"));
  CHECK(has(error("{type: synthetic, requests: 9223372036854775807, clients: [{rate: 1}]}"),
            "workload.requests: must be at most 1000000000 in magnitude"));
  CHECK(has(error("{type: sessions, sessions: 9223372036854775807, rate: 1}"), "workload.sessions: must be at most 1000000000"));
  CHECK(has(error("{type: synthetic, duration_s: 1e300, clients: [{rate: 1}]}"), "workload.duration_s: must be at most 1000000000 in magnitude"));
  // think_time_s: 1e300 silently became 1e7 s.
  CHECK(has(error("{type: sessions, sessions: 4, rate: 1, think_time_s: 1e300}"),
            "think_time_s: must be in [0, 10000000] s, got 1e+300"));
  CHECK(has(error("{type: sessions, sessions: 4, rate: 1, think_time_s: {dist: exponential, mean: 1e300}}"),
            "mean: must be at most"));
  CHECK(has(error("{type: sessions, sessions: 4, rate: 1, think_time_s: {dist: uniform, min: 0, max: 1e9}}"),
            "max: must be in [0, 10000000] s"));
  CHECK(has(error("{type: sessions, sessions: 4, rate: 1, clients: 1e10}"), "workload.clients: must be at most 1000000000"));
  // In range, yet the arrivals pass the 1e9 s the generators cover: an error, not a wrap.
  auto w = parse("{type: synthetic, requests: 1000000000, clients: [{rate: 1e-6}]}");
  ClientTable clients;
  auto src = w->open(clients, 1);
  RequestSpec r;
  std::string e = "no error";
  try {
    while (src->next(r)) {
    }
  } catch (const InputError& x) {
    e = x.what();
  }
  CHECK(has(e, "workload (synthetic): arrival "));
  CHECK(has(e, "past the 1e+09 s the generators cover"));
  CHECK(arrival_time(1e9, "w", 0) == 1'000'000'000'000'000'000);
  CHECK_THROWS_AS(arrival_time(1e10, "w", 0), InputError);
  CHECK_THROWS_AS(arrival_time(std::nan(""), "w", 0), InputError);
}
