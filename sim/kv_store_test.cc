// Cluster KV store tests (sim/kv_store.h, docs/kv.md): a store hit on another
// worker priced to the nanosecond (latency + bytes / link, then the compute of
// the one token left), concurrent loads sharing the store's bandwidth
// max-min fairly, evicted blocks reaching the store, what routers see
// (ClusterView::locality through KvManager::probe), and a random workload with
// preemptions finishing everything within every capacity, deterministically.
#include <doctest/doctest.h>

#include "sim/core/rng.h"
#include "policies/kv_aware_policy.h"
#include "sim/kv_manager.h"
#include "sim/test_harness.h"

using namespace servesim;
using namespace servesim::testing;

namespace {

constexpr double kBytesPerToken = 1000;

RequestSpec prompt_of(RequestId id, double arrival_s, std::vector<BlockHash> blocks, std::int64_t output = 1) {
  RequestSpec r = req(id, arrival_s, static_cast<std::int64_t>(blocks.size()) * 64, output);
  r.prefix_block_size = 64;
  r.prefix_blocks = std::move(blocks);
  return r;
}

// `workers` workers, round robin, fixed cost 1 ms + 10 us per prefill token;
// a store of `store_pages` pages, egress `store_gbps`, links `link_gbps`, 5 us.
SimulationSetup store_setup(int workers, std::int64_t kv_pages, std::int64_t store_pages, double store_gbps,
                            double link_gbps, KvStorePlacement placement) {
  TinyCluster c;
  c.workers = workers;
  c.kv_pages = kv_pages;
  c.cost = FixedCostOptions{kNsPerMs, 10 * kNsPerUs, 0};
  SimulationSetup s = make_setup(c);
  KvStoreSetup st;
  st.capacity_pages = store_pages;
  st.page_size = 16;
  st.kv_bytes_per_token = kBytesPerToken;
  st.bandwidth_gbps = store_gbps;
  st.link_gbps.assign(static_cast<std::size_t>(workers), link_gbps);
  st.latency = 5 * kNsPerUs;
  st.placement = placement;
  s.store = st;
  return s;
}

Time ttft(const CollectingObserver& o, RequestId id) { return *o.by_id.at(id).first_token - *o.by_id.at(id).arrival; }

}  // namespace

TEST_CASE("a store hit on another worker costs latency + bytes / link, then one token's compute, to the nanosecond") {
  // A runs on worker 0 and is written through to the store; C, the same
  // prompt, runs on worker 1 (round robin), whose HBM holds nothing: it loads
  // 255 of its 256 tokens from the store (the cap: one token is computed).
  VectorSource src({prompt_of(0, 0, {1, 2, 3, 4}), prompt_of(1, 1.0, {1, 2, 3, 4})});
  CollectingObserver obs;
  Simulation sim(store_setup(2, 1000, 1000, 100, 10, KvStorePlacement::kWriteThrough), src, obs);
  CHECK(sim.run().finished == 2);
  const Time load = 5 * kNsPerUs + 255 * 1000 / 10;  // latency + ceil(bytes / (GB/s)) ns
  CHECK(ttft(obs, 0) == kNsPerMs + 256 * 10 * kNsPerUs);
  CHECK(ttft(obs, 1) == load + kNsPerMs + 10 * kNsPerUs);
  const WorkerStats& w1 = sim.worker_list()[1]->stats();
  CHECK(w1.store.hit_tokens == 255);
  CHECK(w1.store.loaded_tokens == 255);
  CHECK(w1.prefill_tokens == 1);
  CHECK(w1.cached_tokens == 0);
  CHECK(w1.store_load_ns == load);
  CHECK(sim.kv_store()->tier().blocks() == 4);
}

TEST_CASE("concurrent store loads share the store's bandwidth max-min fairly") {
  // Store egress 10 GB/s, links 10 GB/s: C and D load at once (workers 1 and 2), 5 GB/s each.
  VectorSource src({prompt_of(0, 0, {1, 2, 3, 4}), prompt_of(1, 1.0, {1, 2, 3, 4}), prompt_of(2, 1.0, {1, 2, 3, 4})});
  CollectingObserver obs;
  Simulation sim(store_setup(3, 1000, 1000, 10, 10, KvStorePlacement::kWriteThrough), src, obs);
  CHECK(sim.run().finished == 3);
  const Time shared = 5 * kNsPerUs + 255 * 1000 / 5;
  CHECK(ttft(obs, 1) == shared + kNsPerMs + 10 * kNsPerUs);
  CHECK(ttft(obs, 2) == shared + kNsPerMs + 10 * kNsPerUs);
  // A wider store (40 GB/s): each load is bound by its own 10 GB/s link.
  VectorSource src2({prompt_of(0, 0, {1, 2, 3, 4}), prompt_of(1, 1.0, {1, 2, 3, 4}), prompt_of(2, 1.0, {1, 2, 3, 4})});
  CollectingObserver obs2;
  Simulation sim2(store_setup(3, 1000, 1000, 40, 10, KvStorePlacement::kWriteThrough), src2, obs2);
  sim2.run();
  CHECK(ttft(obs2, 1) == 5 * kNsPerUs + 255 * 1000 / 10 + kNsPerMs + 10 * kNsPerUs);
}

TEST_CASE("with placement evicted, only blocks a worker drops reach the store, and others then hit them") {
  // Worker 0 holds 17 pages: A's 4 blocks leave HBM when B is admitted there
  // (requests 0, 2 on worker 0; 1, 3 on worker 1). Request 3 repeats A's
  // prompt on worker 1 and finds it in the store.
  VectorSource src({prompt_of(0, 0, {1, 2, 3, 4}), prompt_of(1, 0.5, {21, 22}), prompt_of(2, 1.0, {11, 12, 13, 14}),
                    prompt_of(3, 2.0, {1, 2, 3, 4})});
  CollectingObserver obs;
  Simulation sim(store_setup(2, 17, 1000, 100, 10, KvStorePlacement::kEvicted), src, obs);
  CHECK(sim.run().finished == 4);
  CHECK(sim.worker_list()[1]->stats().store.hit_tokens == 255);
  // A's 4 blocks, then 21 and 22: worker 1 evicted them to make room for request 3.
  CHECK(sim.kv_store()->tier().blocks() == 6);
  CHECK(sim.kv_store()->tier().contains(tier_block_key(tier_block_key(0, 21, 64), 22, 64)));
  CHECK(ttft(obs, 3) == 5 * kNsPerUs + 255 * 1000 / 10 + kNsPerMs + 10 * kNsPerUs);
}

TEST_CASE("routers see every tier: locality reports HBM, store and the load estimate") {
  VectorSource src({prompt_of(0, 0, {1, 2, 3, 4})});
  CollectingObserver obs;
  Simulation sim(store_setup(2, 1000, 1000, 100, 10, KvStorePlacement::kWriteThrough), src, obs);
  sim.run();
  const RequestSpec again = prompt_of(9, 0, {1, 2, 3, 4});
  const KvLocality on0 = sim.worker_list()[0]->kv_manager().probe(again);
  const KvLocality on1 = sim.worker_list()[1]->kv_manager().probe(again);
  CHECK(on0.hbm == 255);
  CHECK(on0.store == 0);
  CHECK(on0.load_ns == 0);
  CHECK(on1.hbm == 0);
  CHECK(on1.store == 255);
  CHECK(on1.load_ns == 5 * kNsPerUs + 255 * 1000 / 10);
  const RequestSpec half = prompt_of(9, 0, {1, 2, 7});
  CHECK(sim.worker_list()[1]->kv_manager().probe(half).store == 128);
}

TEST_CASE("with a store, a random prefix workload with preemptions finishes everything within capacity, runs repeat") {
  auto run = [](KvStorePlacement placement) {
    Rng rng(17);
    std::vector<RequestSpec> v;
    for (RequestId i = 0; i < 300; ++i) {
      std::vector<BlockHash> blocks;
      const auto t = static_cast<BlockHash>(rng.below(6));
      const auto n = 1 + static_cast<std::int64_t>(rng.below(6));
      for (std::int64_t k = 0; k < n; ++k) blocks.push_back(k < 3 ? 100 * (t + 1) + static_cast<BlockHash>(k) : rng.next_u64());
      v.push_back(prompt_of(i, 0.002 * static_cast<double>(i), blocks, 1 + static_cast<std::int64_t>(rng.below(40))));
    }
    VectorSource src(v);
    CollectingObserver obs;
    Simulation sim(store_setup(3, 60, 80, 2, 1, placement), src, obs);
    const SimulationTotals t = sim.run();
    CHECK(t.finished == v.size());
    for (const auto& [id, n] : obs.reports_per_id) CHECK(n == 1);
    std::int64_t store_hits = 0, preemptions = 0;
    for (const auto& w : sim.worker_list()) {
      store_hits += w->stats().store.hit_tokens;
      preemptions += w->stats().preemptions;
      CHECK(w->kv().used() == w->cache().pages());
    }
    CHECK(store_hits > 0);
    CHECK(sim.kv_store()->tier().stats().peak_pages <= 80);
    sim.kv_store()->tier().check_invariants();
    std::vector<Time> ttfts;
    for (const auto& [id, o] : obs.by_id) ttfts.push_back(*o.first_token);
    return std::make_pair(ttfts, preemptions);
  };
  for (KvStorePlacement p : {KvStorePlacement::kEvicted, KvStorePlacement::kWriteThrough}) {
    const auto a = run(p), b = run(p);
    CHECK(a == b);
    MESSAGE("preemptions: " << a.second);
  }
}

TEST_CASE("kv_aware follows the prefix unless the holder's queue costs more than recomputing elsewhere") {
  // Two workers, no store, fixed cost 1 ms + 10 us per prefill token.
  auto route = [](std::vector<RequestSpec> v) {
    TinyCluster c;
    c.workers = 2;
    c.cost = FixedCostOptions{kNsPerMs, 10 * kNsPerUs, 0};
    SimulationSetup s = make_setup(c);
    s.global = std::make_unique<KvAwarePolicy>(KvAwareOptions{});
    const std::size_t n = v.size();
    VectorSource src(std::move(v));
    CollectingObserver obs;
    Simulation sim(std::move(s), src, obs);
    CHECK(sim.run().finished == n);
    return obs.by_id;
  };
  // B repeats A's prompt when both workers are idle: worker 0 holds 255 of its tokens.
  auto idle = route({prompt_of(0, 0, {1, 2, 3, 4}), prompt_of(1, 1.0, {1, 2, 3, 4})});
  CHECK(idle.at(0).worker == 0);
  CHECK(idle.at(1).worker == 0);
  // A 4096-token prompt (no shared blocks) lands on worker 0 just before B: its
  // queue (4096 + 1 tokens) now costs more than B's 256 tokens on worker 1.
  RequestSpec big = req(2, 1.0, 4096, 1);
  auto busy = route({prompt_of(0, 0, {1, 2, 3, 4}), big, prompt_of(1, 1.0, {1, 2, 3, 4})});
  CHECK(busy.at(2).worker == 0);
  CHECK(busy.at(1).worker == 1);
}
