// The trace replay chain: time window, rate scaling, sampling, max_requests,
// spreading of quantized timestamps and client assignment, composed from YAML.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "traces/test_files.h"
#include "traces/trace_source.h"
#include "traces/trace_workload.h"

using namespace servesim;
using servesim::testing::shared_trace;
using servesim::testing::TempDir;

namespace {

std::unique_ptr<Workload> workload_from(const std::string& yaml) {
  YamlMap m(YAML::Load(yaml), "test.yaml", "workload");
  m.get<std::string>("type", "trace");
  return parse_trace_workload(m);
}

std::vector<RequestSpec> replay(const Workload& w, ClientTable& clients, std::uint64_t seed = 1) {
  auto src = w.open(clients, seed);
  std::vector<RequestSpec> out;
  RequestSpec r;
  while (src->next(r)) out.push_back(r);
  return out;
}

const std::string kConv = shared_trace("azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
const std::string kMooncake = shared_trace("mooncake/conversation_trace.jsonl");

}  // namespace

TEST_CASE("an Azure replay starts at zero and max_requests keeps the first requests in order") {
  ClientTable clients;
  auto reqs = replay(*workload_from("{type: trace, path: " + kConv + ", max_requests: 10000}"), clients);
  REQUIRE(reqs.size() == 10000);
  CHECK(reqs[0].arrival == 0);
  CHECK(reqs[1].arrival == 4'314'579'000);  // 18:15:50.9951690 - 18:15:46.6805900
  CHECK(reqs[0].prompt_tokens == 374);
  for (std::size_t i = 1; i < reqs.size(); ++i) REQUIRE(reqs[i].arrival >= reqs[i - 1].arrival);
  CHECK(clients.size() == 1);
  CHECK(clients.name(0) == "default");
}

TEST_CASE("a time window with rate scaling keeps the window's requests and compresses their times") {
  ClientTable c1, c2;
  auto all = replay(*workload_from("{type: trace, path: " + kConv + "}"), c1);
  auto win = replay(*workload_from("{type: trace, path: " + kConv +
                                   ", window: {start_s: 600, end_s: 1200}, rate_scale: 2}"),
                    c2);
  std::vector<RequestSpec> expect;
  for (const auto& r : all)
    if (r.arrival >= 600 * kNsPerSec && r.arrival < 1200 * kNsPerSec) expect.push_back(r);
  REQUIRE(win.size() == expect.size());
  REQUIRE(!win.empty());
  for (std::size_t i = 0; i < win.size(); ++i) {
    CHECK(win[i].id == expect[i].id);
    CHECK(win[i].arrival == (expect[i].arrival - 600 * kNsPerSec) / 2);
  }
  CHECK(win.back().arrival < 300 * kNsPerSec);
}

TEST_CASE("sampling keeps about the asked fraction, the same rows for the same seed") {
  auto w = workload_from("{type: trace, path: " + kConv + ", sample: 0.25}");
  ClientTable c1, c2, c3;
  auto a = replay(*w, c1, 7), b = replay(*w, c2, 7), c = replay(*w, c3, 8);
  CHECK(a.size() == doctest::Approx(19366 * 0.25).epsilon(0.05));
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].id == b[i].id);
  bool differs = a.size() != c.size();
  for (std::size_t i = 0; !differs && i < a.size(); ++i) differs = a[i].id != c[i].id;
  CHECK(differs);
}

TEST_CASE("even spreading turns Mooncake's 3-second buckets into distinct increasing arrivals") {
  ClientTable clients;
  auto raw = replay(*workload_from("{type: trace, path: " + kMooncake + "}"), clients);
  auto spread = replay(*workload_from("{type: trace, path: " + kMooncake + ", spread: {mode: even, bucket_s: 3}}"), clients);
  REQUIRE(raw.size() == spread.size());
  std::set<Time> distinct;
  for (std::size_t i = 0; i < spread.size(); ++i) {
    distinct.insert(spread[i].arrival);
    CHECK(spread[i].arrival >= raw[i].arrival);
    CHECK(spread[i].arrival < raw[i].arrival + 3 * kNsPerSec);
    if (i) CHECK(spread[i].arrival >= spread[i - 1].arrival);
  }
  CHECK(distinct.size() == spread.size());
  CHECK(raw[0].arrival == 0);
  CHECK(spread[0].arrival == 0);  // a bucket keeps its start
  // The first bucket (timestamp 0) holds n rows spaced 3000 ms / n apart (the gap to the next is 3000 ms).
  std::size_t n = 0;
  while (raw[n].arrival == 0) ++n;
  CHECK(spread[1].arrival == 3000 * kNsPerMs / static_cast<Time>(n));
}

TEST_CASE("uniform spreading is seeded and stays inside each bucket") {
  auto w = workload_from("{type: trace, path: " + kMooncake + ", spread: {mode: uniform}, max_requests: 500}");
  ClientTable c1, c2;
  auto a = replay(*w, c1, 3), b = replay(*w, c2, 3);
  REQUIRE(a.size() == 500);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].arrival == b[i].arrival);
    if (i) CHECK(a[i].arrival >= a[i - 1].arrival);
  }
}

TEST_CASE("clients by prefix block skip the global first block and keep a conversation on one client") {
  ClientTable clients;
  auto w = workload_from("{type: trace, path: " + kMooncake + ", clients: {by: prefix_block, count: 8}}");
  auto src = w->open(clients, 1);
  RequestSpec r;
  std::map<BlockHash, ClientId> by_block;
  std::map<ClientId, int> sizes;
  while (src->next(r)) {
    auto [it, inserted] = by_block.try_emplace(r.prefix_blocks[std::min<std::size_t>(1, r.prefix_blocks.size() - 1)], r.client);
    CHECK(it->second == r.client);
    ++sizes[r.client];
  }
  CHECK(src->describe().find("prefix block 1") != std::string::npos);
  CHECK(clients.size() == 8);
  CHECK(sizes.size() == 8);
}

TEST_CASE("clients by trace column, by seeded random split and by BurstGPT group") {
  {
    ClientTable clients;
    auto reqs = replay(*workload_from("{type: trace, path: " + shared_trace("vtc_lmsys/real_trace.csv") + "}"), clients);
    CHECK(reqs.size() == 1500);
    CHECK(clients.size() == 27);
    CHECK(clients.name(reqs[0].client) == "dummy-lora-7b-rank-8-13");
  }
  {
    ClientTable clients;
    auto reqs = replay(*workload_from("{type: trace, path: " + kConv + ", clients: {by: random, weights: [3, 1]}}"), clients);
    int first = 0;
    for (const auto& r : reqs) first += r.client == 0;
    CHECK(clients.size() == 2);
    CHECK(first == doctest::Approx(0.75 * reqs.size()).epsilon(0.03));
  }
  {
    TempDir dir;
    std::string path = dir.write("b.csv",
                                 "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                                 "5,ChatGPT,472,18,490,Conversation log\n"
                                 "6,GPT-4,417,276,693,API log\n"
                                 "7,ChatGPT,47,18,65,Conversation log\n");
    ClientTable clients;
    auto reqs = replay(*workload_from("{type: trace, path: " + path + ", clients: {by: group}}"), clients);
    REQUIRE(reqs.size() == 3);
    CHECK(clients.name(reqs[0].client) == "ChatGPT/Conversation log");
    CHECK(clients.name(reqs[1].client) == "GPT-4/API log");
    CHECK(reqs[2].client == reqs[0].client);
    CHECK(reqs[1].arrival == kNsPerSec);  // BurstGPT is rebased to its first row
    std::string err = servesim::testing::input_error(
        [&] { replay(*workload_from("{type: trace, path: " + kConv + ", clients: {by: group}}"), clients); });
    CHECK(err.find("AzureLLMInferenceTrace_conv.csv:2:") != std::string::npos);
  }
}

TEST_CASE("a dependent request is dropped with its parent, and limits never split a workflow") {
  TempDir dir;
  std::string path = dir.write("n.csv",
                               "id,arrival_ns,prompt_tokens,output_tokens,parents,dependents\n"
                               "1,0,10,5,,1\n"
                               "2,0,20,5,1,0\n"
                               "3,5000000000,10,5,,1\n"
                               "4,5000000000,30,5,3,0\n"
                               "5,9000000000,10,5,,0\n");
  ClientTable clients;
  auto win = replay(*workload_from("{type: trace, path: " + path + ", window: {start_s: 1}}"), clients);
  REQUIRE(win.size() == 3);
  CHECK(win[0].id == 3);
  CHECK(win[1].id == 4);
  auto lim = replay(*workload_from("{type: trace, path: " + path + ", max_requests: 1}"), clients);
  REQUIRE(lim.size() == 2);
  CHECK(lim[1].parents == std::vector<RequestId>{1});
}

TEST_CASE("the resolved trace settings state every transformation and parse back to themselves") {
  auto w = workload_from("{type: trace, path: x.jsonl, spread: {mode: even}, sample: 0.5, rate_scale: 2, "
                         "window: {start_s: 10}, clients: {by: random, count: 3, zipf: 1.1}}");
  YAML::Node r = w->resolved();
  CHECK(r["format"].as<std::string>() == "auto");
  CHECK(r["spread"]["mode"].as<std::string>() == "even");
  CHECK(r["spread"]["bucket_s"].as<double>() == 3.0);
  CHECK(r["clients"]["by"].as<std::string>() == "random");
  CHECK(r["window"]["end_s"].IsNull());
  YamlMap again(r, "resolved.yaml", "workload");
  again.get<std::string>("type", "");
  auto w2 = parse_trace_workload(again);
  CHECK(YAML::Dump(w2->resolved()) == YAML::Dump(r));
  std::string err = servesim::testing::input_error([&] { workload_from("{type: trace, path: x.csv, smaple: 0.5}"); });
  CHECK(err.find("smaple") != std::string::npos);
  err = servesim::testing::input_error([&] { workload_from("{type: trace, path: x.csv, format: parquet}"); });
  CHECK(err.find("parquet") != std::string::npos);
}

TEST_CASE("a window past the trace's end is an error naming the window and the last arrival, not 0 requests (issue 34)") {
  TempDir dir;
  const std::string path = dir.write("t.csv", "arrival_ns,prompt_tokens,output_tokens\n0,4,4\n2000000000,4,4\n");
  ClientTable clients;
  std::string e = "no error";
  try {
    replay(*workload_from("{type: trace, path: " + path + ", window: {start_s: 100}}"), clients);
  } catch (const InputError& x) {
    e = x.what();
  }
  CHECK(e.find("window.start_s 100 .. end_s (none) selects none of the trace's 2 requests (the latest arrives at 2 s") !=
        std::string::npos);
  ClientTable c2;  // a window inside the trace is fine
  CHECK(replay(*workload_from("{type: trace, path: " + path + ", window: {start_s: 1}}"), c2).size() == 1);
}
