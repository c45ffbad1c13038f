// Prefix cache tests: the radix cache (with its incremental match memos)
// against a naive reference matcher, its invariants under random operations,
// and the engine's hit counts against a naive replay.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>

#include "sim/prefix_cache.h"
#include "sim/core/rng.h"
#include "sim/test_harness.h"

using namespace servesim;
using namespace servesim::testing;

namespace {

// Random prompts: one of a few templates (a shared block chain, used up to a
// random length) followed by unique blocks; the last block may be partial.
RequestSpec random_prompt(Rng& rng, RequestId id, std::int32_t block, int templates) {
  RequestSpec r = req(id, 0, 1, 1);
  r.prefix_block_size = block;
  const auto t = static_cast<BlockHash>(rng.below(static_cast<std::uint64_t>(templates)));
  const auto shared = static_cast<std::int64_t>(rng.below(12));
  const auto unique = static_cast<std::int64_t>(rng.below(4));
  for (std::int64_t i = 0; i < shared; ++i) r.prefix_blocks.push_back(1000 * (t + 1) + static_cast<BlockHash>(i));
  for (std::int64_t i = 0; i < unique; ++i) r.prefix_blocks.push_back(rng.next_u64());
  if (r.prefix_blocks.empty()) r.prefix_blocks.push_back(rng.next_u64());
  const auto n = static_cast<std::int64_t>(r.prefix_blocks.size());
  r.prompt_tokens = (n - 1) * block + 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(block)));
  // A partial last block is different content from the full block (as with
  // content hashes): give it its own id.
  const std::int64_t last = r.prompt_tokens - (n - 1) * block;
  if (last < block) r.prefix_blocks.back() ^= 0x5bd1e995ull * static_cast<BlockHash>(last);
  return r;
}

// Naive reference: every live node's full path of block ids (and its token
// count), rebuilt from scratch; a match is the longest chain of the request's
// blocks equal to some live path (token lengths equal too), capped at `cap`:
// a block past the cap stops the match, except the prompt's last block, which
// then matches its first cap - (tokens before it) tokens.
using PathSet = std::map<std::vector<BlockHash>, std::int64_t>;

PathSet live_paths(const PrefixCache& c) {
  PathSet paths;
  for (CacheNodeId n : c.live_nodes()) paths[c.path_blocks(n)] = c.path_tokens(n);
  return paths;
}

std::int64_t naive_match(const PathSet& paths, const RequestSpec& r, std::int64_t cap) {
  std::int64_t best = 0, tokens = 0;
  std::vector<BlockHash> prefix;
  for (std::size_t i = 0; i < r.prefix_blocks.size(); ++i) {
    prefix.push_back(r.prefix_blocks[i]);
    tokens += PrefixCache::block_tokens(r, i);
    auto it = paths.find(prefix);
    if (it == paths.end() || it->second != tokens) break;
    if (tokens > cap) {
      if (tokens == r.prompt_tokens && cap > best) best = cap;
      break;
    }
    best = tokens;
  }
  return best;
}

}  // namespace

TEST_CASE("radix matches equal a naive matcher and locked nodes survive eviction (and stay where they were locked) under random operations") {
  for (std::int32_t block : {16, 64, 40}) {
    KvPool kv(400, 16);
    PrefixCache cache(kv);
    Rng rng(11 + static_cast<std::uint64_t>(block));
    struct Held {
      CacheNodeId node;
      std::uint32_t where;  // lock()'s position hint: stays right while the lock is held
      std::vector<BlockHash> path;
      std::int64_t pages;
    };
    std::vector<Held> held;  // "running requests": locked paths with private pages
    std::vector<std::pair<RequestSpec, PrefixMatch>> waiting;
    for (RequestId i = 0; i < 40; ++i) waiting.emplace_back(random_prompt(rng, i, block, 4), PrefixMatch{});
    std::int64_t hits = 0, naive_hits = 0;
    for (int step = 0; step < 2500; ++step) {
      const Time now = step;
      // Every waiting request's memo is refreshed each step (as LPM does).
      const PathSet paths = live_paths(cache);
      for (auto& [spec, memo] : waiting) {
        cache.refresh(memo, spec, spec.prompt_tokens - 1);
        REQUIRE(memo.tokens == naive_match(paths, spec, spec.prompt_tokens - 1));
      }
      const auto op = rng.below(3);
      if (op < 2 && !waiting.empty()) {
        // Admit one: lock its match, take private pages (evicting), insert its prompt.
        const auto k = static_cast<std::size_t>(rng.below(waiting.size()));
        auto [spec, memo] = waiting[k];
        hits += memo.tokens;
        naive_hits += naive_match(paths, spec, spec.prompt_tokens - 1);
        cache.lock(memo.node, now);
        const std::int64_t need = kv.pages_for(spec.prompt_tokens - memo.tokens);
        if (kv.free() + cache.evictable_pages() < need) {
          cache.unlock(memo.node, now);
        } else {
          REQUIRE(cache.make_room(need));
          REQUIRE(kv.try_alloc(need));
          const std::int64_t budget = need + kv.free();
          kv.release(need);
          auto res = cache.insert(spec, memo, spec.prompt_tokens, budget, now);
          const std::uint32_t where = cache.lock(res.node, now);
          cache.unlock(memo.node, now);
          REQUIRE(kv.try_alloc(res.private_pages));
          held.push_back({res.node, where, cache.path_blocks(res.node), res.private_pages});
          waiting[k] = {random_prompt(rng, 1000 + static_cast<RequestId>(step), block, 4), PrefixMatch{}};
        }
      } else if (!held.empty()) {
        // Finish one: unlock (with its position hint, none, or a wrong one: the
        // same unlock), free private pages.
        const auto k = static_cast<std::size_t>(rng.below(held.size()));
        const std::uint64_t hint = rng.below(4);
        const std::uint32_t where = hint == 0   ? held[k].where
                                    : hint == 1 ? 0
                                    : hint == 2 ? held[rng.below(held.size())].where
                                                : static_cast<std::uint32_t>(rng.below(1u << 12));
        cache.unlock(held[k].node, now, where);
        kv.release(held[k].pages);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
      }
      // Invariants: capacity, structure, and every locked path still cached.
      REQUIRE(kv.used() <= kv.capacity());
      if (step % 50 == 0) cache.check_invariants();
      for (const Held& h : held) {
        if (h.node == kCacheRoot) continue;
        REQUIRE(cache.alive(h.node));
        REQUIRE(cache.lock_count(h.node) > 0);
        REQUIRE(cache.where_of(h.node) == h.where);
        REQUIRE(cache.path_blocks(h.node) == h.path);
      }
    }
    cache.check_invariants();
    MESSAGE("block " << block << ": hit tokens radix " << hits << " naive " << naive_hits << ", evicted "
                     << cache.evicted_nodes() << " nodes");
    CHECK(hits == naive_hits);
    CHECK(hits > 0);
    CHECK(cache.evicted_nodes() > 0);
  }
}

TEST_CASE("every eviction takes the least recently used unlocked leaf (ties: lower node id)") {
  // make_room may evict a parent an eviction left as a leaf without queueing it;
  // the order must still be the LRU order over all unlocked leaves: checked at
  // each eviction (the hook runs just before the node is freed). The access
  // times are the test's own: every lock, unlock and insert stamps each block
  // of its whole path (the cache may keep them lazily), kept per path here.
  for (std::int32_t block : {16, 40}) {
    KvPool kv(300, 16);
    PrefixCache cache(kv);
    std::map<std::vector<BlockHash>, Time> accessed;  // path root..node -> last access
    auto stamp = [&](CacheNodeId n, Time now) {
      std::vector<BlockHash> path = cache.path_blocks(n);
      for (; !path.empty(); path.pop_back()) accessed[path] = now;
    };
    std::int64_t evictions = 0;
    cache.set_evict_hook([&](std::uint64_t key, std::int64_t) {
      CacheNodeId victim = kCacheRoot, best = kCacheRoot;
      Time best_at = 0;
      for (CacheNodeId n : cache.live_nodes()) {
        if (cache.lock_count(n) != 0 || cache.child_count(n) != 0) continue;
        const Time at = accessed.at(cache.path_blocks(n));
        CHECK(cache.last_access(n) == at);  // a leaf's own time is exact
        if (cache.path_key(n) == key) victim = n;
        if (best == kCacheRoot || at < best_at || (at == best_at && n < best)) {
          best = n;
          best_at = at;
        }
      }
      REQUIRE(victim != kCacheRoot);
      REQUIRE(victim == best);
      ++evictions;
    });
    Rng rng(5 + static_cast<std::uint64_t>(block));
    std::vector<std::pair<CacheNodeId, std::int64_t>> held;  // locked node, private pages
    for (int step = 0; step < 3000; ++step) {
      const Time now = step / 3;  // equal access times too
      if (rng.below(3) < 2) {
        RequestSpec spec = random_prompt(rng, static_cast<RequestId>(step), block, 3);
        PrefixMatch memo;
        cache.refresh(memo, spec, spec.prompt_tokens - 1);
        cache.lock(memo.node, now);
        stamp(memo.node, now);
        const std::int64_t need = kv.pages_for(spec.prompt_tokens - memo.tokens);
        if (kv.free() + cache.evictable_pages() < need) {
          cache.unlock(memo.node, now);
          continue;
        }
        REQUIRE(cache.make_room(need));
        const std::int64_t budget = kv.free();
        auto res = cache.insert(spec, memo, spec.prompt_tokens, budget, now);
        stamp(res.node, now);
        cache.lock(res.node, now);
        cache.unlock(memo.node, now);
        REQUIRE(kv.try_alloc(res.private_pages));
        held.emplace_back(res.node, res.private_pages);
      } else if (!held.empty()) {
        const auto k = static_cast<std::size_t>(rng.below(held.size()));
        stamp(held[k].first, now);
        cache.unlock(held[k].first, now);
        kv.release(held[k].second);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    cache.check_invariants();
    MESSAGE("block " << block << ": " << evictions << " evictions checked");
    CHECK(evictions > 100);
  }
}

TEST_CASE("one request at a time the engine's cache hits equal a naive replay of earlier prompts") {
  // Capacity far above the workload: nothing is evicted, so request k's match is
  // the longest block chain it shares with any earlier prompt (capped at prompt - 1,
  // the last block taken in part).
  for (std::int32_t block : {16, 64}) {
    Rng rng(5);
    std::vector<RequestSpec> v;
    for (RequestId i = 0; i < 400; ++i) {
      RequestSpec r = random_prompt(rng, i, block, 5);
      r.arrival = seconds_to_time(0.05 * static_cast<double>(i));
      r.output_tokens = 1 + static_cast<std::int64_t>(rng.below(5));
      v.push_back(r);
    }
    std::int64_t naive = 0;
    for (std::size_t k = 0; k < v.size(); ++k) {
      std::int64_t best = 0;
      for (std::size_t j = 0; j < k; ++j) {
        std::int64_t tokens = 0;
        for (std::size_t i = 0; i < v[k].prefix_blocks.size() && i < v[j].prefix_blocks.size(); ++i) {
          if (v[k].prefix_blocks[i] != v[j].prefix_blocks[i]) break;
          const std::int64_t t = PrefixCache::block_tokens(v[k], i);
          if (t != PrefixCache::block_tokens(v[j], i)) break;
          if (tokens + t > v[k].prompt_tokens - 1) {  // the last block: all but its last token
            tokens = v[k].prompt_tokens - 1;
            break;
          }
          tokens += t;
        }
        best = std::max(best, tokens);
      }
      naive += best;
    }
    TinyCluster c;
    c.batching.max_running = 1;
    c.kv_pages = 1 << 16;
    VectorSource src(v);
    CollectingObserver obs;
    Simulation sim(make_setup(c), src, obs);
    CHECK(sim.run().finished == v.size());
    const WorkerStats& s = sim.worker_list()[0]->stats();
    MESSAGE("block " << block << ": engine cached tokens " << s.cached_tokens << ", naive " << naive);
    CHECK(s.cached_tokens == naive);
    CHECK(naive > 0);
  }
}

TEST_CASE("cached prefixes need no prefill compute and are seen as context by the cost model") {
  // Two requests with the same 4-block prefix; the second runs after the first.
  TinyCluster c;
  c.cost = FixedCostOptions{kNsPerMs, kNsPerUs, 0};  // 1 ms + 1 us per prefill token
  RequestSpec a = req(0, 0, 100, 2), b = req(1, 1.0, 100, 2);
  for (RequestSpec* r : {&a, &b}) {
    r->prefix_block_size = 16;
    r->prefix_blocks = {1, 2, 3, 4, 5, 6, 7};
  }
  b.prefix_blocks[5] = 99;  // shares blocks 0..4 = 80 tokens
  VectorSource src({a, b});
  CollectingObserver obs;
  Simulation sim(make_setup(c), src, obs);
  sim.run();
  const WorkerStats& s = sim.worker_list()[0]->stats();
  CHECK(s.cached_tokens == 80);
  CHECK(s.prefill_tokens == 100 + 20);
  // b's prefill iteration computes 20 tokens: 1 ms + 20 us.
  CHECK(obs.by_id[1].first_token.value() - obs.by_id[1].arrival.value() == kNsPerMs + 20 * kNsPerUs);
  // Both prompts stay cached after finishing (evictable, not lost): 7 + 2 nodes of 1 page... in pages:
  CHECK(sim.worker_list()[0]->cache().pages() == 7 + 2);
  CHECK(sim.worker_list()[0]->cache().locked_pages() == 0);
}

TEST_CASE("requests without prefix blocks never hit the cache") {
  TinyCluster c;
  std::vector<RequestSpec> v;
  for (RequestId i = 0; i < 20; ++i) v.push_back(req(i, 0.01 * static_cast<double>(i), 64, 3));
  VectorSource src(v);
  CollectingObserver obs;
  Simulation sim(make_setup(c), src, obs);
  sim.run();
  CHECK(sim.worker_list()[0]->stats().cached_tokens == 0);
  CHECK(sim.worker_list()[0]->cache().pages() == 0);
}

TEST_CASE("under memory pressure with shared prefixes the pool never exceeds capacity and nothing leaks") {
  TinyCluster c;
  c.workers = 2;
  c.kv_pages = 120;
  c.batching.reservation_ratio = 0.0;
  Rng rng(3);
  std::vector<RequestSpec> v;
  for (RequestId i = 0; i < 300; ++i) {
    RequestSpec r = random_prompt(rng, i, 16, 3);
    r.arrival = seconds_to_time(0.002 * static_cast<double>(i));
    r.output_tokens = 1 + static_cast<std::int64_t>(rng.below(300));
    v.push_back(r);
  }
  VectorSource src(v);
  CollectingObserver obs;
  Simulation sim(make_setup(c), src, obs);
  CHECK(sim.run().finished == 300);
  std::int64_t preemptions = 0, cached = 0;
  for (const auto& w : sim.worker_list()) {
    CHECK(w->stats().peak_kv_pages <= w->kv().capacity());
    CHECK(w->kv().used() == w->cache().pages());  // only the (unlocked) cache remains
    CHECK(w->cache().locked_pages() == 0);
    w->cache().check_invariants();
    preemptions += w->stats().preemptions;
    cached += w->stats().cached_tokens;
  }
  MESSAGE("preemptions " << preemptions << ", cached tokens " << cached);
  CHECK(preemptions > 0);
  CHECK(cached > 0);
}

TEST_CASE("a fully cached prompt recomputes one token, not its whole last block (issue 30 regression)") {
  // An identical 1000-token prompt with 256-token blocks (3 full blocks and a
  // partial one of 232) sent twice: the second hits 999 tokens and computes one.
  // Before the fix the cap dropped the whole last block: 768 hits, 232 computed.
  for (std::int64_t prompt : {1000, 1024}) {
    TinyCluster c;
    c.cost = FixedCostOptions{kNsPerMs, kNsPerUs, 0};  // 1 ms + 1 us per prefill token
    RequestSpec a = req(0, 0, prompt, 3), b = req(1, 1.0, prompt, 3);
    for (RequestSpec* r : {&a, &b}) {
      r->prefix_block_size = 256;
      r->prefix_blocks = {1, 2, 3, 4};
    }
    VectorSource src({a, b});
    CollectingObserver obs;
    Simulation sim(make_setup(c), src, obs);
    CHECK(sim.run().finished == 2);
    const Worker& w = *sim.worker_list()[0];
    CHECK(w.stats().cached_tokens == prompt - 1);
    CHECK(w.stats().prefill_tokens == prompt + 1);
    // b's prefill iteration computes one token: 1 ms + 1 us.
    CHECK(obs.by_id[1].first_token.value() - obs.by_id[1].arrival.value() == kNsPerMs + kNsPerUs);
    // Nothing leaked: both prompts' blocks are cached once (4 nodes), unlocked.
    CHECK(w.cache().nodes() == 4);
    CHECK(w.cache().locked_pages() == 0);
    CHECK(w.kv().used() == w.cache().pages());
    w.cache().check_invariants();
  }
}

TEST_CASE("the cap takes the prompt's last block in part, never an earlier block") {
  KvPool kv(1000, 16);
  PrefixCache cache(kv);
  RequestSpec a = req(0, 0, 100, 1);
  a.prefix_block_size = 32;
  a.prefix_blocks = {1, 2, 3, 4};  // 32 + 32 + 32 + 4 tokens
  const PrefixMatch none;
  const auto res = cache.insert(a, none, 100, 1000, 0);
  CHECK(res.tokens == 100);
  PrefixMatch m;
  cache.refresh(m, a, 99);
  CHECK(m.tokens == 99);  // the last 4-token block, less one token
  CHECK(m.blocks == 4);
  CHECK(m.final);
  PrefixMatch mid;
  cache.refresh(mid, a, 50);  // a cap inside block 2: the match stops before it
  CHECK(mid.tokens == 32);
  CHECK(mid.blocks == 1);
  PrefixMatch full;
  cache.refresh(full, a, 100);
  CHECK(full.tokens == 100);
}

TEST_CASE("an insert from a memo that found the next block absent still reuses blocks added since") {
  // Two requests with the same prompt match (nothing cached below their shared
  // first block), then one inserts: the other's memo says "absent", but a block was
  // added below, so its insert must walk and share the new blocks, not copy them.
  KvPool kv(1000, 16);
  PrefixCache cache(kv);
  RequestSpec base = req(0, 0, 32, 1);
  base.prefix_block_size = 32;
  base.prefix_blocks = {7};
  cache.lock(cache.insert(base, PrefixMatch{}, 32, 1000, 0).node, 0);  // block 7 (32 tokens) is cached, locked
  RequestSpec a = req(1, 0, 96, 1), b = req(2, 0, 96, 1);
  a.prefix_block_size = b.prefix_block_size = 32;
  a.prefix_blocks = b.prefix_blocks = {7, 8, 9};
  PrefixMatch ma, mb;
  cache.refresh(ma, a, 95);
  cache.refresh(mb, b, 95);
  REQUIRE(ma.tokens == 32);
  CHECK(ma.absent);  // block 8 is not below block 7
  cache.lock(ma.node, 1);
  cache.lock(mb.node, 1);
  const auto ra = cache.insert(a, ma, 96, 1000, 1);
  cache.lock(ra.node, 1);  // (as the engine does: the longer path is locked instead)
  cache.unlock(ma.node, 1);
  CHECK(ra.tokens == 96);
  const std::size_t nodes = cache.nodes();
  CHECK(nodes == 3);
  const auto rb = cache.insert(b, mb, 96, 1000, 2);  // mb still says absent: stale since ra
  cache.lock(rb.node, 2);
  cache.unlock(mb.node, 2);
  CHECK(rb.node == ra.node);
  CHECK(cache.nodes() == nodes);  // shared, not copied
  // With nothing added below since, the memo's "absent" holds and the insert adds blocks.
  RequestSpec c = req(3, 0, 96, 1);
  c.prefix_block_size = 32;
  c.prefix_blocks = {7, 8, 10};
  PrefixMatch mc;
  cache.refresh(mc, c, 95);
  CHECK(mc.tokens == 64);
  CHECK(mc.absent);
  cache.lock(mc.node, 3);
  const auto rc = cache.insert(c, mc, 96, 1000, 3);
  cache.lock(rc.node, 3);
  cache.unlock(mc.node, 3);
  CHECK(rc.tokens == 96);
  CHECK(cache.nodes() == nodes + 1);
  cache.check_invariants();
}

TEST_CASE("KvPool::pages_for is ceil(tokens / page size) for every sign, with and without the shift") {
  // Power-of-two page sizes take a shift, the others a division; both must be the
  // exact ceiling (negative counts included: callers form differences).
  for (const std::int64_t page : {1, 2, 3, 16, 48, 64, 4096, 4097}) {
    const KvPool kv(1, page);
    for (std::int64_t t = -3 * page - 5; t <= 3 * page + 5; ++t) {
      const std::int64_t q = t / page, want = q * page < t ? q + 1 : q;  // (q truncates toward zero)
      REQUIRE_MESSAGE(kv.pages_for(t) == want, "page ", page, " tokens ", t);
    }
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    CHECK(kv.pages_for(big) == big / page + (big % page > 0 ? 1 : 0));
  }
}

TEST_CASE("insert keeps the longest prefix whose new pages and private remainder fit the budget") {
  // A naive plan (every block visited, no early stop) against insert, with block
  // sizes that are and are not multiples of the page size, a shared prefix cached
  // first or not, and budgets around what the prompt needs.
  Rng rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    KvPool kv(100000, 16);
    PrefixCache cache(kv);
    const std::int32_t block = std::array<std::int32_t, 4>{16, 20, 48, 64}[rng.below(4)];
    RequestSpec spec = req(static_cast<RequestId>(trial), 0, 1, 1);
    spec.prefix_block_size = block;
    spec.prompt_tokens = 1 + static_cast<std::int64_t>(rng.below(400));
    const auto nblocks = static_cast<std::size_t>((spec.prompt_tokens + block - 1) / block);
    for (std::size_t b = 0; b < nblocks; ++b) spec.prefix_blocks.push_back(rng.next_u64());
    const auto shared = static_cast<std::size_t>(rng.below(nblocks + 1));
    if (shared > 0) {  // its first `shared` blocks cached already (whole blocks)
      RequestSpec pre = spec;
      pre.prefix_blocks.resize(shared);
      pre.prompt_tokens = std::min<std::int64_t>(spec.prompt_tokens, static_cast<std::int64_t>(shared) * block);
      const auto r = cache.insert(pre, PrefixMatch{}, pre.prompt_tokens, 1 << 20, 0);
      cache.lock(r.node, 0);  // (as the engine does: the path is locked, then released)
      cache.unlock(r.node, 0);
    }
    PrefixMatch memo;  // the request's match, or none (insert then walks the cached blocks itself)
    if (rng.below(2) == 0) cache.refresh(memo, spec, spec.prompt_tokens - 1);
    const std::int64_t kv_tokens = spec.prompt_tokens + static_cast<std::int64_t>(rng.below(40));
    const std::int64_t need = kv.pages_for(kv_tokens) + static_cast<std::int64_t>(nblocks);
    const std::int64_t budget = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(need + 4)));
    // The naive plan: existing blocks add no pages; the first missing one and all after it are new.
    std::size_t want_end = static_cast<std::size_t>(memo.blocks);
    std::int64_t want_priv = kv.pages_for(kv_tokens - memo.tokens), new_pages = 0, tokens = memo.tokens;
    for (std::size_t i = static_cast<std::size_t>(memo.blocks); i < nblocks; ++i) {
      const std::int64_t t = PrefixCache::block_tokens(spec, i);
      if (i >= shared) new_pages += kv.pages_for(t);
      tokens += t;
      const std::int64_t priv = kv.pages_for(kv_tokens - tokens);
      if (new_pages + priv <= budget) {
        want_end = i + 1;
        want_priv = priv;
      }
    }
    const auto res = cache.insert(spec, memo, kv_tokens, budget, 1);
    REQUIRE_MESSAGE(static_cast<std::size_t>(res.blocks) == want_end, "trial ", trial);
    REQUIRE(res.private_pages == want_priv);
    cache.lock(res.node, 1);
    cache.unlock(res.node, 1);
    cache.check_invariants();
  }
}
