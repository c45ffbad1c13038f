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
// unlock and insert stamp the whole path in effect, but they write only the
// path's deepest node, and an evicted leaf passes its time to its parent (max),
// so a node that becomes a leaf carries the latest time of its subtree. Only a
// segment's tail keeps a time (the segment's; a block inside a segment that is
// stamped is made a tail first), which its other blocks take in turn as they
// become the tail: prefix_cache.cc, "Access times", says why that is exact.
//
// Eviction: unlocked leaves, least recently used first (ties: lower node id),
// as many as needed; a parent that becomes an unlocked leaf joins the queue
// with its own last-access time (a segment's tail is evicted block by block).
//
// Memory layout (segments): the tree's blocks are stored in segments, runs of up to
// kSegBlocks blocks along a chain (each block but the last has exactly the next one
// as its only child). A segment's header keeps what the walks read per chain: its
// parent segment, lock count, children and pages, its tail's access time, and the
// tokens of its blocks (every block of a chain but a prompt's short last one has
// the same tokens: one count for the blocks before the tail, one for the tail); a
// block keeps its hash, number and generation (16 bytes, four to a line). Branches
// hang below a segment's last block (its tail), so a chain of blocks is one or a
// few cache lines instead of one line per block, and lock/unlock walk segments, not
// blocks. A block keeps its number (its node id, drawn as ids always were: the last
// one freed first, else a new one) and a number -> (segment, slot) table finds it.
// Segments are a storage layout only: every leaf still has its own access time and
// the eviction order is the same function of (last access, number) as with one node
// per block, so outputs do not depend on where segments start or end. A segment
// splits (its head part moves to a new segment) where a child is added below, or a
// lock ends at, a block that is not its tail; a block is appended to its parent's
// segment when that segment is an unlocked leaf with room. So a lock always ends at
// a segment's tail, and a segment's blocks are locked together: its count is the
// requests whose path ends at its tail plus its locked child segments.
//
// Matching is incremental: a PrefixMatch remembers its deepest node, that
// node's generation and the cache's insertion stamp. It stays valid while the
// node is alive (its ancestors then are too: only leaves are evicted), and
// only needs to walk on from that node when a block was added in or below its
// segment since (a segment keeps one stamp for its blocks). So re-asking every
// waiting request's match every step costs O(1) each.
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
  bool absent = false;            // the walk stopped because `node` had no child for block `blocks` (as of `stamp`)
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
  // lock() returns where n is kept (its segment and slot, 0 for the root): a
  // locked block does not move, so the holder of the lock may give it back to
  // unlock() as a hint that saves the number -> position lookup (a miss when the
  // path is cold). A hint that does not name n (0, or stale) is ignored.
  std::uint32_t lock(CacheNodeId n, Time now);
  void unlock(CacheNodeId n, Time now, std::uint32_t where = 0);

  // Inserts `spec`'s prompt blocks below `from` (the node of its first
  // `from.blocks` blocks), reusing nodes that exist, for a request whose KV
  // holds `kv_tokens` tokens (the cached path included). The request hands over
  // `page_budget` pages (its private pages plus any free ones); the inserted
  // prefix is the longest one whose new nodes' pages plus the request's
  // remaining private pages, pages_for(kv_tokens - path tokens), fit in it, so
  // no eviction is needed. `from` may be the request's match memo: when it says
  // its next block was absent and nothing was added below it since, the walk
  // starts with new blocks (no lookup). Allocates the new nodes' pages from the pool (the
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
  bool alive(CacheNodeId n) const { return n == kCacheRoot || (n < num_.size() && block_of(n) != nullptr); }
  std::uint32_t where_of(CacheNodeId n) const { return n == kCacheRoot ? 0 : num_[n].where; }  // lock()'s hint, now
  std::vector<CacheNodeId> live_nodes() const;
  std::vector<BlockHash> path_blocks(CacheNodeId n) const;  // root..n block ids
  std::int64_t path_tokens(CacheNodeId n) const;  // tokens root..n (O(depth))
  // Requests whose path ends at n plus n's locked children: > 0 iff n is locked.
  // (A block inside a segment has one child, the next block, locked iff the segment is.)
  std::int32_t lock_count(CacheNodeId n) const;
  std::int32_t child_count(CacheNodeId n) const;
  // Exact for a leaf; for an inner node at most its subtree's latest (see Locking).
  Time last_access(CacheNodeId n) const { return n == kCacheRoot ? 0 : segs_[locate(n).seg].access; }

 private:
  static constexpr unsigned kSegBlocks = 12;  // blocks per segment (64 B header + 12 x 16 B)
  using SegId = std::uint32_t;                // 0: the root's segment (no blocks)
  struct Block {  // 16 bytes: four to a cache line (tokens and access time are kept per segment)
    BlockHash hash = 0;
    CacheNodeId number = 0;        // the node id of this block
    std::uint32_t generation = 0;  // of `number` when this block took it
  };
  struct alignas(64) Seg {
    std::uint64_t child_stamp = 0;  // stamp of the last block added in or below it
    std::int64_t pages = 0;         // KV pages of its blocks
    // Its tail's last access (see "Access times" in the .cc): exact while the tail is
    // a leaf, which is when eviction reads it; its other blocks keep none of their own.
    Time access = 0;
    SegId parent = 0;            // the segment whose tail is this one's parent (0: root)
    std::int32_t locks = 0;      // requests whose path ends at its tail + locked child segments
    std::int32_t children = 0;   // child segments (below its tail)
    // Children: the only child inline, the child index from the second on, keyed
    // by (the tail's number, the child's first block's hash).
    SegId only_child = 0;
    std::int32_t tok = 0;       // tokens of each of its blocks but the tail (all alike)
    std::int32_t tail_tok = 0;  // tokens of its tail
    // Its tail's number and generation (kCacheRoot and 0 while it has no blocks): the
    // same as blocks[hi - 1]'s, kept here too so that the walks that need only the
    // tail (unlock, the eviction queue's checks, a parent's child-index key) read the
    // header's line alone.
    CacheNodeId tail_num = kCacheRoot;
    std::uint32_t tail_gen = 0;
    std::uint8_t lo = 0, hi = 0;  // its blocks are blocks[lo, hi)
    bool in_index = false;
    bool live = false;
    alignas(64) Block blocks[kSegBlocks];
    CacheNodeId tail_number() const { return tail_num; }
    const Block& head() const { return blocks[lo]; }
    std::int32_t tokens_at(unsigned slot) const { return slot + 1u == hi ? tail_tok : tok; }
    // Whether a block may go on below the tail in this segment: the tail becomes an
    // inner block, whose tokens must then be the segment's `tok`.
    bool extends_with_tail() const { return hi - lo == 1 || tail_tok == tok; }
  };
  static_assert(sizeof(Block) == 16 && sizeof(Seg) == 64 + 16 * kSegBlocks, "segment layout");
  struct Pos {  // where a block lives (seg 0: the root)
    SegId seg = 0;
    unsigned slot = 0;
  };
  // number -> position: the segment id shifted by kSlotBits, or'ed with the slot.
  // Written when a number is given out or its block moves, never read on eviction.
  static constexpr unsigned kSlotBits = 4;
  static_assert(kSegBlocks <= (1u << kSlotBits));
  struct Loc {
    std::uint32_t where = 0;
  };
  struct FreeNumber {  // a freed number and the last generation it had (the next one is +1)
    CacheNodeId number;
    std::uint32_t generation;
  };
  // A position as one word (num_'s entries, eviction entries, lock()'s hint) and back.
  static std::uint32_t pack(SegId s, unsigned slot) { return (s << kSlotBits) | slot; }
  static Pos unpack(std::uint32_t w) { return {w >> kSlotBits, w & ((1u << kSlotBits) - 1)}; }
  Pos locate(CacheNodeId n) const { return n == kCacheRoot ? Pos{} : unpack(num_[n].where); }
  void place(CacheNodeId n, SegId s, unsigned slot) { num_[n].where = pack(s, slot); }
  const Block* block_of(CacheNodeId n) const;  // null unless n is a live block
  bool holds(CacheNodeId n, std::uint32_t generation) const;  // n is live with that generation (the root: 0)
  struct PathBlock {
    const Block* block;
    std::int32_t tokens;
  };
  std::vector<PathBlock> path_to(CacheNodeId n) const;  // the blocks root..n, with their tokens
  // The child of the block at `p` (or the root) reached by `h`: moves `p` there and
  // returns its block, or returns null.
  const Block* child(Pos& p, BlockHash h) const;
  std::int64_t pages_of(std::int32_t tokens) {  // a block's pages
    if (tokens != memo_tokens_) {
      memo_tokens_ = tokens;
      memo_pages_ = kv_.pages_for(tokens);
    }
    return memo_pages_;
  }
  SegId new_seg();
  // A number for a new block, with the generation it takes: the last one freed (its
  // generation + 1), else a new one (generation 1).
  FreeNumber draw_number();
  // Writes block b of `tokens` tokens at p, the new tail of p's segment, and places
  // its number there. REQUIRES: the segment is empty or extends_with_tail().
  void put_block(Pos p, const Block& b, std::int32_t tokens);
  void prefetch_seg(SegId s) const {  // all its lines: a tail's neighbours and the parent's tail are read next
    const char* p = reinterpret_cast<const char*>(&segs_[s]);
    for (std::size_t k = 0; k < sizeof(Seg); k += 64) __builtin_prefetch(p + k);
  }
  // Makes the block at `p` its segment's tail, moving the blocks up to it into a new
  // segment (the old one's parent); `p` follows the block.
  void split(Pos& p);
  // Adds a block below the block at `parent` (or the root); returns its position.
  Pos new_block(Pos parent, BlockHash h, std::int64_t tokens, Time now);
  // Adds blocks [i, end) of spec below `parent`, each below the one before (insert's
  // blocks after its first new one); adds their tokens to `tokens`; returns the last
  // one's position. REQUIRES: `parent` is the tail of an unlocked leaf segment.
  Pos append_run(Pos parent, const RequestSpec& spec, std::size_t i, std::size_t end, std::int64_t& tokens,
                 Time now);
  // Evicts segment s's tail (s an unlocked leaf), and then each new tail of s while
  // the pool has fewer than `want` free pages and that tail sorts before `bound` (the
  // queue's front; null: empty), as make_room would; returns the segment whose tail
  // is now an unlocked leaf because of it (s itself, or its parent when s emptied;
  // not queued yet: make_room queues or evicts it), else 0.
  struct LruEntry;
  SegId evict_tail(SegId s, std::int64_t want, const LruEntry* bound);
  void maybe_evictable(SegId s);  // its tail enters the LRU set if s is an unlocked leaf
  // Last access = now, keeping the LRU set ordered. A block inside a segment is made
  // its segment's tail first (split; `p` follows the block): only a tail keeps a time.
  void touch(Pos& p, Time now);

  KvPool& kv_;
  std::vector<Seg> segs_;  // [0]: the root's
  std::vector<SegId> free_segs_;
  std::vector<Loc> num_;  // by node number; [0] is the root
  std::vector<FreeNumber> free_;
  ChildIndex children_;
  std::vector<Pos> plan_;  // insert(): the cached blocks on the path (the new ones follow them)
  // Eviction order: (last access, number, generation) entries of segment tails,
  // pushed whenever a tail becomes an unlocked leaf or is touched as one. Entries go
  // stale (the block changed since) and are dropped when popped; the stale ones are
  // dropped all at once when they pile up. Two containers, one order: the next
  // victim is the smaller of their fronts. Tails that become leaves now (last access
  // = now, never before an earlier push) go to lru_, a queue kept sorted by
  // insertion from the back (it only passes entries of the same time) and read from
  // lru_head_ on, so popping it is sequential; tails that make_room leaves behind,
  // whose last access is old, go to the min-heap lru_old_, except one: the tail a
  // make_room stopped at (room made) waits in `parked_`, and is most often the next
  // make_room's first victim (eviction goes on in small bites as decode steps ask
  // for pages), which then takes it with no trip through the heap. The next victim
  // is the smallest of the three fronts.
  struct LruEntry {
    Time at;
    CacheNodeId id;
    std::uint32_t generation;
    std::uint32_t where;  // the block's segment and slot (it stays there while it is the tail)
    SegId parent;         // that segment's parent when pushed: fetched with it when it is next to go (a hint)
    SegId seg() const { return unpack(where).seg; }
    bool operator>(const LruEntry& o) const { return at != o.at ? at > o.at : id > o.id; }
  };
  bool current(const LruEntry& e) const;  // still the block's evictable entry
  LruEntry entry_of(SegId s) const;
  void push_lru(SegId s, bool old = false);  // old: into parked_ if free, else lru_old_
  const LruEntry* lru_min() const;  // the smallest front of the three; null if all are empty
  std::vector<LruEntry> lru_, lru_old_;
  LruEntry parked_{};
  bool has_parked_ = false;
  std::size_t lru_head_ = 0;  // lru_'s entries before it were popped
  void drop_popped() {        // erases them
    lru_.erase(lru_.begin(), lru_.begin() + static_cast<std::ptrdiff_t>(lru_head_));
    lru_head_ = 0;
  }
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
