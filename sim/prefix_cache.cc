// Radix prefix cache; see prefix_cache.h for the contracts.
#include "sim/prefix_cache.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "sim/core/error.h"
#include "sim/kv_tier.h"

namespace servesim {

PrefixCache::PrefixCache(KvPool& kv) : kv_(kv) {
  nodes_.emplace_back();
  nodes_[kCacheRoot].alive = true;
}

std::int64_t PrefixCache::block_tokens(const RequestSpec& spec, std::size_t i) {
  const std::int64_t b = spec.prefix_block_size;
  const std::int64_t start = static_cast<std::int64_t>(i) * b;
  return std::clamp<std::int64_t>(spec.prompt_tokens - start, 0, b);
}

CacheNodeId PrefixCache::child(CacheNodeId parent, BlockHash h) const {
  const Node& p = nodes_[parent];
  return children_.find_child(parent, h, p.only_child, p.in_index, [this](CacheNodeId c) { return nodes_[c].hash; });
}

void PrefixCache::refresh(PrefixMatch& m, const RequestSpec& spec, std::int64_t cap) const {
  if (spec.prefix_blocks.empty() || spec.prefix_block_size <= 0) {
    m = PrefixMatch{};
    m.final = true;
    m.cap = cap;
    return;
  }
  const bool intact = m.cap == cap && nodes_[m.node].alive && nodes_[m.node].generation == m.generation;
  if (!intact) {
    m = PrefixMatch{};
    m.cap = cap;
  } else if (m.final || nodes_[m.node].child_stamp <= m.stamp) {
    return;  // nothing below m.node changed since the last walk
  }
  m.stamp = stamp_;
  CacheNodeId n = m.node;
  bool partial = false;  // n is the prompt's last block, matched in part (one block past i)
  std::size_t i = static_cast<std::size_t>(m.blocks);
  for (; i < spec.prefix_blocks.size(); ++i) {
    const std::int64_t t = block_tokens(spec, i);
    if (t <= 0) break;
    CacheNodeId c = child(n, spec.prefix_blocks[i]);
    if (c == kCacheRoot) break;
    if (nodes_[c].tokens != t) break;  // same id, different length: not the same content
    if (m.tokens + t > cap) {
      // The cap (prompt - 1: one token must be computed) stops the match here.
      // In the prompt's last block the match takes the block's first cap - tokens
      // tokens (the node is read, its last token is recomputed); elsewhere it stops
      // before the block (see the header).
      m.final = true;
      if (m.tokens + t == spec.prompt_tokens && cap > m.tokens) {
        n = c;
        m.tokens = cap;
        partial = true;
      }
      break;
    }
    n = c;
    m.tokens += t;
  }
  if (i >= spec.prefix_blocks.size() || block_tokens(spec, i) <= 0) m.final = true;
  m.node = n;
  m.blocks = static_cast<std::int32_t>(i) + (partial ? 1 : 0);  // n's depth: the blocks passed
  m.generation = nodes_[n].generation;
}

bool PrefixCache::current(const LruEntry& e) const {
  const Node& x = nodes_[e.id];
  return x.alive && x.generation == e.generation && x.locks == 0 && x.children == 0 && x.last_access == e.at;
}

void PrefixCache::push_lru(CacheNodeId n, bool old) {
  if (lru_.size() + lru_old_.size() > 2 * live_nodes_ + 1024) {  // mostly stale: rebuild from the live leaves
    for (std::vector<LruEntry>* h : {&lru_, &lru_old_}) {
      std::erase_if(*h, [this](const LruEntry& e) { return !current(e); });
      std::make_heap(h->begin(), h->end(), std::greater<>());
    }
  }
  std::vector<LruEntry>& h = old ? lru_old_ : lru_;
  h.push_back({nodes_[n].last_access, n, nodes_[n].generation, nodes_[n].parent});
  std::push_heap(h.begin(), h.end(), std::greater<>());
}

const PrefixCache::LruEntry* PrefixCache::lru_min() const {
  if (lru_.empty()) return lru_old_.empty() ? nullptr : &lru_old_.front();
  if (lru_old_.empty()) return &lru_.front();
  return lru_old_.front() > lru_.front() ? &lru_.front() : &lru_old_.front();
}

void PrefixCache::maybe_evictable(CacheNodeId n) {
  const Node& x = nodes_[n];
  if (n != kCacheRoot && x.alive && x.locks == 0 && x.children == 0) push_lru(n);
}

void PrefixCache::touch(CacheNodeId n, Time now) {
  Node& x = nodes_[n];
  if (x.last_access == now) return;
  x.last_access = now;
  maybe_evictable(n);
}

// Locks and access times are kept lazily (see Node): the walk goes up only while a
// node's lockedness changes, and only the path's deepest node takes `now`; its
// ancestors receive it through evict_leaf when they become leaves.
void PrefixCache::lock(CacheNodeId n, Time now) {
  if (n == kCacheRoot) return;
  nodes_[n].last_access = now;
  for (; n != kCacheRoot; n = nodes_[n].parent) {
    Node& x = nodes_[n];
    if (x.locks++ > 0) return;  // was locked already: its parent's count is unchanged
    locked_pages_ += pages_of(x);  // its eviction entry goes stale
  }
}

void PrefixCache::unlock(CacheNodeId n, Time now) {
  if (n == kCacheRoot) return;
  nodes_[n].last_access = now;
  for (; n != kCacheRoot; n = nodes_[n].parent) {
    // The walk goes up a path that is often cold (a request unlocks it when it
    // finishes): each node fetches its grandparent and great-grandparent, so up to
    // three misses are in flight.
    Node& x = nodes_[n];
    __builtin_prefetch(&nodes_[x.grandparent]);
    __builtin_prefetch(&nodes_[x.great_grandparent]);
    SIM_CHECK(x.locks > 0, "prefix cache node {} unlocked more often than locked", n);
    if (--x.locks > 0) return;  // still locked: its parent's count is unchanged
    locked_pages_ -= pages_of(x);
    maybe_evictable(n);
  }
}

CacheNodeId PrefixCache::new_node(CacheNodeId parent, BlockHash h, std::int64_t tokens, Time now) {
  CacheNodeId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<CacheNodeId>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& p = nodes_[parent];
  children_.add_child(parent, h, id, p.only_child, p.in_index, [this](CacheNodeId c) { return nodes_[c].hash; });
  p.children++;
  p.child_stamp = ++stamp_;
  Node& x = nodes_[id];
  const std::uint32_t gen = x.generation + 1;
  x = Node{};
  x.parent = parent;
  x.hash = h;
  x.tokens = static_cast<std::int32_t>(tokens);
  const std::int64_t path = nodes_[parent].path_tokens + tokens;
  SIM_CHECK(path <= std::numeric_limits<std::int32_t>::max(), "prefix cache path of {} tokens is too long", path);
  x.path_tokens = static_cast<std::int32_t>(path);
  x.grandparent = nodes_[parent].parent;
  x.great_grandparent = nodes_[parent].grandparent;
  x.generation = gen;
  x.last_access = now;
  x.alive = true;
  const std::int64_t pages = pages_of(x);
  SIM_CHECK(kv_.try_alloc(pages), "prefix cache insert of {} pages does not fit ({} free)", pages, kv_.free());
  pages_ += pages;
  ++live_nodes_;
  return id;
}

PrefixCache::InsertResult PrefixCache::insert(const RequestSpec& spec, const PrefixMatch& from, std::int64_t kv_tokens,
                                              std::int64_t page_budget, Time now) {
  InsertResult best{from.node, from.tokens, from.blocks, kv_.pages_for(kv_tokens - from.tokens)};
  if (spec.prefix_blocks.empty() || spec.prefix_block_size <= 0) return best;
  // Plan: walk existing nodes, then count the pages of new ones; keep the
  // longest prefix whose total fits the budget.
  std::int64_t new_pages = 0, tokens = from.tokens;
  CacheNodeId n = from.node;
  std::size_t i = static_cast<std::size_t>(from.blocks), best_end = i;
  plan_.clear();
  bool existing = true;
  for (; i < spec.prefix_blocks.size(); ++i) {
    const std::int64_t t = block_tokens(spec, i);
    if (t <= 0) break;
    if (existing) {
      CacheNodeId c = child(n, spec.prefix_blocks[i]);
      if (c != kCacheRoot && nodes_[c].tokens != t) break;  // a different block under the same id
      if (c != kCacheRoot) {
        n = c;
      } else {
        existing = false;
      }
    }
    plan_.push_back(existing ? n : kCacheRoot);
    if (!existing) new_pages += kv_.pages_for(t);
    tokens += t;
    const std::int64_t priv = kv_.pages_for(kv_tokens - tokens);
    if (new_pages + priv <= page_budget) {
      best_end = i + 1;
      best.private_pages = priv;
    }
  }
  // Apply: reuse or create up to best_end.
  n = from.node;
  tokens = from.tokens;
  for (i = static_cast<std::size_t>(from.blocks); i < best_end; ++i) {
    const std::int64_t t = block_tokens(spec, i);
    CacheNodeId c = plan_[i - static_cast<std::size_t>(from.blocks)];
    if (c == kCacheRoot) c = new_node(n, spec.prefix_blocks[i], t, now);
    touch(c, now);
    n = c;
    tokens += t;
  }
  best.node = n;
  best.tokens = tokens;
  best.blocks = static_cast<std::int32_t>(best_end);  // n's depth
  return best;
}

CacheNodeId PrefixCache::evict_leaf(CacheNodeId n) {
  Node& x = nodes_[n];
  SIM_CHECK(x.alive && x.locks == 0 && x.children == 0, "evicting prefix cache node {} that is locked or not a leaf",
            n);
  if (evict_hook_) evict_hook_(path_key(n), x.tokens);
  // The parent is read next and is cold; when it becomes a leaf, its own ancestors go
  // next (make_room evicts a path from its leaf up): fetch the next two as well, so a
  // path is evicted with its misses in flight together, not one after the other.
  __builtin_prefetch(&nodes_[x.grandparent]);
  __builtin_prefetch(&nodes_[x.great_grandparent]);
  Node& p = nodes_[x.parent];
  children_.remove_child(x.parent, x.hash, p.children, p.only_child, p.in_index);
  const std::int64_t pages = pages_of(x);
  kv_.release(pages);
  pages_ -= pages;
  evicted_pages_ += pages;
  ++evicted_nodes_;
  --live_nodes_;
  x.alive = false;
  x.generation++;
  free_.push_back(n);
  p.children--;
  p.last_access = std::max(p.last_access, x.last_access);  // the lazily kept access time moves up
  const bool leaf = x.parent != kCacheRoot && p.alive && p.locks == 0 && p.children == 0;
  return leaf ? x.parent : kCacheRoot;
}

// A parent that an eviction left an unlocked leaf is queued, unless more room is
// needed and it sorts before the heap's smallest entry: then it is the least
// recently used unlocked leaf (every current entry is at or after that top) and
// goes next without a trip through the heap (a path evicted from its leaf up).
bool PrefixCache::make_room(std::int64_t pages) {
  CacheNodeId next = kCacheRoot;  // the next victim, known without the heap
  while (kv_.free() < pages) {
    if (next == kCacheRoot) {
      const LruEntry* m = lru_min();
      if (m == nullptr) break;
      std::vector<LruEntry>& h = m == lru_.data() ? lru_ : lru_old_;
      std::pop_heap(h.begin(), h.end(), std::greater<>());
      const LruEntry e = h.back();
      h.pop_back();
      // This victim's parent is read by evict_leaf, and the next candidates' nodes and
      // parents next (current(), then evict_leaf): fetch them while this one is checked
      // and evicted, so the misses overlap (the LRU end of the cache is cold).
      __builtin_prefetch(&nodes_[e.parent]);
      if (!lru_.empty()) {
        __builtin_prefetch(&nodes_[lru_.front().id]);
        __builtin_prefetch(&nodes_[lru_.front().parent]);
      }
      if (!lru_old_.empty()) {
        __builtin_prefetch(&nodes_[lru_old_.front().id]);
        __builtin_prefetch(&nodes_[lru_old_.front().parent]);
      }
      if (!current(e)) continue;
      next = e.id;
    }
    const CacheNodeId parent = evict_leaf(next);
    next = kCacheRoot;
    if (parent == kCacheRoot) continue;
    const LruEntry pe{nodes_[parent].last_access, parent, nodes_[parent].generation, nodes_[parent].parent};
    const LruEntry* m = lru_min();
    if (kv_.free() < pages && (m == nullptr || *m > pe))
      next = parent;
    else
      push_lru(parent, true);
  }
  return kv_.free() >= pages;
}

std::vector<CacheNodeId> PrefixCache::live_nodes() const {
  std::vector<CacheNodeId> out;
  for (CacheNodeId n = 1; n < nodes_.size(); ++n)
    if (nodes_[n].alive) out.push_back(n);
  return out;
}

std::uint64_t PrefixCache::path_key(CacheNodeId n) const {
  std::vector<CacheNodeId> path;
  for (; n != kCacheRoot; n = nodes_[n].parent) path.push_back(n);
  std::uint64_t key = 0;
  for (auto it = path.rbegin(); it != path.rend(); ++it) key = tier_block_key(key, nodes_[*it].hash, nodes_[*it].tokens);
  return key;
}

std::vector<BlockHash> PrefixCache::path_blocks(CacheNodeId n) const {
  std::vector<BlockHash> out;
  for (; n != kCacheRoot; n = nodes_[n].parent) out.push_back(nodes_[n].hash);
  std::reverse(out.begin(), out.end());
  return out;
}

void PrefixCache::check_invariants() const {
  std::vector<std::int32_t> locked_children(nodes_.size(), 0), children(nodes_.size(), 0);
  std::int64_t pages = 0, locked = 0;
  std::size_t leaves = 0, live = 0, indexed = 0;
  for (CacheNodeId n = 1; n < nodes_.size(); ++n) {
    const Node& x = nodes_[n];
    if (!x.alive) continue;
    ++live;
    SIM_CHECK(nodes_[x.parent].alive, "node {} has a dead parent {}", n, x.parent);
    children[x.parent]++;
    if (x.locks > 0) locked_children[x.parent]++;
    pages += kv_.pages_for(x.tokens);
    if (x.locks > 0) locked += kv_.pages_for(x.tokens);
    SIM_CHECK(x.grandparent == nodes_[x.parent].parent && x.great_grandparent == nodes_[x.parent].grandparent,
              "node {} keeps a wrong grandparent or great-grandparent", n);
    SIM_CHECK(x.path_tokens == nodes_[x.parent].path_tokens + x.tokens, "node {} path tokens inconsistent", n);
    const Node& p = nodes_[x.parent];
    const auto hash_of = [this](auto c) { return nodes_[c].hash; };
    SIM_CHECK(children_.child_kept(x.parent, x.hash, n, p.only_child, p.in_index, hash_of),
              "node {} is not found, or not kept where its parent's state says", n);
    if (p.in_index) ++indexed;
  }
  for (CacheNodeId n = 1; n < nodes_.size(); ++n) {
    const Node& x = nodes_[n];
    if (!x.alive) continue;
    SIM_CHECK(x.children == children[n], "node {} child count {} != {}", n, x.children, children[n]);
    SIM_CHECK(ChildIndex::parent_state_ok(x.only_child, x.in_index, x.children),
              "node {} keeps {} children {}", n, x.children, x.in_index ? "in the index" : "inline");
    SIM_CHECK(x.locks >= locked_children[n], "node {} counts {} locks for {} locked children (path locking broken)", n,
              x.locks, locked_children[n]);
    const bool leaf = x.locks == 0 && x.children == 0;
    leaves += leaf ? 1 : 0;
  }
  std::set<CacheNodeId> queued;
  for (const std::vector<LruEntry>* h : {&lru_, &lru_old_})
    for (const LruEntry& e : *h)
      if (current(e)) queued.insert(e.id);
  SIM_CHECK(leaves == queued.size(), "eviction heap holds {} current entries for {} unlocked leaves", queued.size(),
            leaves);
  SIM_CHECK(pages == pages_ && locked == locked_pages_, "page sums {} / {} != tracked {} / {}", pages, locked, pages_,
            locked_pages_);
  SIM_CHECK(live == live_nodes_ && children_.size() == indexed, "node counts disagree");
}

}  // namespace servesim
