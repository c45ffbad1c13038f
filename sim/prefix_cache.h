// PrefixCache: one worker's radix prefix cache (SGLang RadixAttention,
// Zheng et al., "SGLang: Efficient Execution of Structured Language Model
// Programs", 2024), over the prefix block ids that requests carry.
//
// Shape: a tree whose edges are prefix blocks. A node is one block of one
// prompt position: it is reached from its parent by the block's id, and it
// covers that block's tokens (a full block, or the partial last block of a
// prompt). Two prompts share a node exactly when they share the whole chain
// of block ids from the root to it. A block of B tokens occupies
// ceil(B / page_size) KV pages: exact when B is a multiple of the page size
// (a 512-token Mooncake block = 32 pages of 16); otherwise each block rounds
// up to whole pages (set page_size to divide the trace's block size).
//
// Memory: cached nodes hold pages of the worker's KvPool — the SAME pool as
// running requests' private KV (one capacity). Pages are allocated when a node
// is inserted and released when it is evicted.
//
// Locking: a running request locks the path root..its node. Locked nodes are
// never evicted. Because a lock covers a whole path, an unlocked node has no
// locked descendant, so every unlocked page is evictable: evictable_pages() =
// pages() - locked pages. A node's count is the requests whose path ends at it
// plus its locked children, so lock/unlock walk up only while a node's
// lockedness changes (a popular prefix locked by many requests is not walked).
// Access times are exact for leaves, which are what eviction orders: lock,
// unlock and insert stamp the whole path in effect, but lock/unlock write only
// the path's deepest node, and an evicted leaf passes its time to its parent
// (max), so a node that becomes a leaf carries the latest time of its subtree.
//
// Eviction: unlocked leaves, least recently used first (ties: lower node id),
// as many as needed; a parent that becomes an unlocked leaf joins the queue
// with its own last-access time.
//
// Memory layout: a node is one cache line, and most walks (unlock, a path's
// eviction from its leaf up) go up cold paths; each node keeps its grandparent and
// great-grandparent, so a walk fetches up to three levels ahead and the misses
// overlap instead of queuing. (A node's depth is not kept: the walks that report
// it count the blocks they pass.)
//
// Matching is incremental: a PrefixMatch remembers its deepest node, that
// node's generation and the cache's insertion stamp. It stays valid while the
// node is alive (its ancestors then are too: only leaves are evicted), and
// only needs to walk on from that node when a child was added there since.
// So re-asking every waiting request's match every step costs O(1) each.
//
// Demotion (tiered KV cache, sim/kv_tier.h): with an eviction hook set, every
// evicted node is reported just before it is freed, with its path key (the
// tier_block_key chain root..node) and its tokens; without one, nothing changes.
#pragma once
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sim/core/child_index.h"
#include "sim/kv_pool.h"
#include "sim/core/request.h"

namespace servesim {

using CacheNodeId = std::uint32_t;
inline constexpr CacheNodeId kCacheRoot = 0;

// A request's match against one worker's cache (memo; see refresh()).
struct PrefixMatch {
  CacheNodeId node = kCacheRoot;  // deepest matched node (root: no match)
  std::uint32_t generation = 0;   // of `node`, to detect eviction and slot reuse
  std::uint64_t stamp = 0;        // cache insertion stamp when last walked
  std::int64_t tokens = 0;        // matched tokens (path length of `node`; less when the prompt's last block matched partially)
  std::int32_t blocks = 0;        // matched blocks (depth of `node`)
  std::int64_t cap = -1;          // max tokens this memo was computed for (-1: never)
  bool final = false;             // cannot grow (all blocks matched, or the cap reached)
};

class PrefixCache {
 public:
  explicit PrefixCache(KvPool& kv);

  // Brings `m` up to date for `spec`'s blocks, matching at most `cap` tokens.
  // Whole blocks match; the one exception is the prompt's last block when the
  // cap falls inside it (a fully cached prompt under the cap prompt - 1): that
  // node then matches partially, m.node is it and m.tokens = cap < its path
  // tokens (one token is recomputed, not the whole block; vLLM recomputes at
  // most one KV page). A cap inside an earlier block stops before that block.
  // REQUIRES: m was last refreshed for the same spec (or is default).
  void refresh(PrefixMatch& m, const RequestSpec& spec, std::int64_t cap) const;

  // Adds one lock on every node of the path root..n. The root is never locked.
  void lock(CacheNodeId n, Time now);
  void unlock(CacheNodeId n, Time now);

  // Inserts `spec`'s prompt blocks below `from` (the node of its first
  // `from.blocks` blocks), reusing nodes that exist, for a request whose KV
  // holds `kv_tokens` tokens (the cached path included). The request hands over
  // `page_budget` pages (its private pages plus any free ones); the inserted
  // prefix is the longest one whose new nodes' pages plus the request's
  // remaining private pages, pages_for(kv_tokens - path tokens), fit in it, so
  // no eviction is needed. Allocates the new nodes' pages from the pool (the
  // caller must have released its private pages first). The new path is NOT
  // locked by this call.
  struct InsertResult {
    CacheNodeId node = kCacheRoot;
    std::int64_t tokens = 0;         // path tokens of `node`
    std::int32_t blocks = 0;         // depth of `node`
    std::int64_t private_pages = 0;  // pages_for(kv_tokens - tokens): the request's share after
  };
  InsertResult insert(const RequestSpec& spec, const PrefixMatch& from, std::int64_t kv_tokens,
                      std::int64_t page_budget, Time now);

  // Evicts unlocked leaves (LRU) until the pool has `pages` free pages.
  // Returns false (having evicted everything evictable) if impossible.
  bool make_room(std::int64_t pages);

  std::int64_t pages() const { return pages_; }
  std::int64_t locked_pages() const { return locked_pages_; }
  std::int64_t evictable_pages() const { return pages_ - locked_pages_; }
  std::size_t nodes() const { return live_nodes_; }
  std::uint64_t evicted_nodes() const { return evicted_nodes_; }
  std::int64_t evicted_pages() const { return evicted_pages_; }

  using EvictHook = std::function<void(std::uint64_t path_key, std::int64_t tokens)>;
  void set_evict_hook(EvictHook h) { evict_hook_ = std::move(h); }
  // tier_block_key chain of the blocks root..n (O(depth)).
  std::uint64_t path_key(CacheNodeId n) const;

  // Token count of block `i` of `spec` (0 if the block lies past the prompt).
  static std::int64_t block_tokens(const RequestSpec& spec, std::size_t i);

  // Test hooks: structural invariants (lock counts, page sums, LRU set = the
  // unlocked leaves) checked with SIM_CHECK; O(nodes).
  void check_invariants() const;
  bool alive(CacheNodeId n) const { return n < nodes_.size() && nodes_[n].alive; }
  std::vector<CacheNodeId> live_nodes() const;
  std::vector<BlockHash> path_blocks(CacheNodeId n) const;  // root..n block ids
  std::int64_t path_tokens(CacheNodeId n) const { return nodes_[n].path_tokens; }
  // Requests whose path ends at n plus n's locked children: > 0 iff n is locked.
  std::int32_t lock_count(CacheNodeId n) const { return nodes_[n].locks; }
  std::int32_t child_count(CacheNodeId n) const { return nodes_[n].children; }
  // Exact for a leaf; for an inner node at most its subtree's latest (see Locking).
  Time last_access(CacheNodeId n) const { return nodes_[n].last_access; }

 private:
  struct alignas(64) Node {  // one cache line
    BlockHash hash = 0;
    std::uint64_t child_stamp = 0;  // stamp of the last child insertion
    Time last_access = 0;
    std::int32_t path_tokens = 0;   // tokens root..this node (checked to fit at insertion)
    CacheNodeId parent = kCacheRoot;
    std::uint32_t generation = 0;
    std::int32_t tokens = 0;        // tokens of this block (its pages: pages_of())
    CacheNodeId grandparent = kCacheRoot;   // the parent's parent and
    CacheNodeId great_grandparent = kCacheRoot;  // its parent (fixed while alive): walks up fetch them ahead
    std::int32_t locks = 0;         // requests whose path ends here + locked children
    std::int32_t children = 0;
    // Children: the only child inline, the child index from the second on
    // (ChildIndex::add_child / find_child / remove_child).
    CacheNodeId only_child = 0;
    bool alive = false;
    bool in_index = false;
  };
  static_assert(sizeof(Node) == 64, "a cache node is one cache line");
  CacheNodeId child(CacheNodeId parent, BlockHash h) const;
  // KV pages of a node's block: kv_.pages_for(tokens), remembered for the last block
  // size asked (most blocks are full ones), so walks do not divide.
  std::int64_t pages_of(const Node& x) {
    if (x.tokens != memo_tokens_) {
      memo_tokens_ = x.tokens;
      memo_pages_ = kv_.pages_for(x.tokens);
    }
    return memo_pages_;
  }
  CacheNodeId new_node(CacheNodeId parent, BlockHash h, std::int64_t tokens, Time now);
  // Evicts unlocked leaf n; returns its parent when that is now an unlocked leaf
  // (not queued yet: make_room queues or evicts it), else kCacheRoot.
  CacheNodeId evict_leaf(CacheNodeId n);
  void maybe_evictable(CacheNodeId n);  // enters the LRU set if an unlocked leaf
  void touch(CacheNodeId n, Time now);  // last access = now, keeping the LRU set ordered

  KvPool& kv_;
  std::vector<Node> nodes_;  // [0] is the root
  std::vector<CacheNodeId> free_;
  ChildIndex children_;
  std::vector<CacheNodeId> plan_;  // insert(): existing nodes on the path (0 = new)
  // Eviction order: min-heaps of (last access, id, generation) entries,
  // pushed whenever a node becomes an unlocked leaf or is touched as one.
  // Entries go stale (the node changed since) and are dropped when popped;
  // the heaps are rebuilt from the live leaves when stale entries pile up.
  // Two heaps, one order: the next victim is the smaller of their tops. Nodes
  // that become leaves now (last access = now, the largest key: a push costs
  // one comparison) go to lru_; parents that make_room leaves behind, whose
  // last access is old (their key near the smallest: a push into a big heap
  // climbs all its levels), go to the small lru_old_.
  struct LruEntry {
    Time at;
    CacheNodeId id;
    std::uint32_t generation;
    CacheNodeId parent;  // the node's parent (fixed while it lives): fetched with it when it is next to go
    bool operator>(const LruEntry& o) const { return at != o.at ? at > o.at : id > o.id; }
  };
  bool current(const LruEntry& e) const;  // still the node's evictable entry
  void push_lru(CacheNodeId n, bool old = false);  // old: into lru_old_
  const LruEntry* lru_min() const;  // the smaller top of the two heaps; null if both are empty
  std::vector<LruEntry> lru_, lru_old_;
  std::int32_t memo_tokens_ = 0;
  std::int64_t memo_pages_ = 0;
  std::uint64_t stamp_ = 1;
  std::int64_t pages_ = 0;
  std::int64_t locked_pages_ = 0;
  std::size_t live_nodes_ = 0;
  std::uint64_t evicted_nodes_ = 0;
  std::int64_t evicted_pages_ = 0;
  EvictHook evict_hook_;
};

}  // namespace servesim
