// GlobalPrefixIndex: a global scheduler's OWN view of which workers cache
// which prompt prefixes — a radix tree over prefix block ids whose nodes list
// the workers believed to hold them. It is what SGLang's cache-aware router,
// Preble's global scheduler (E2) and D²LPM's global layer keep: an
// approximation, updated when the policy decides to (at routing, or when a
// request finishes, possibly late), never read from the workers' real caches.
//
// Per worker the view keeps an LRU order of the nodes it holds and a capacity
// in tokens (the worker's KV capacity); recording more than that evicts the
// least recently recorded nodes from the worker's entry — the router's guess
// of what the worker's own LRU cache evicted. A holding is its node's holder
// entry (worker, stamp): nothing outside the node. The order is a log per
// worker: each touch of a holding appends (node, stamp) with the worker's next
// stamp and writes that stamp into the holder, so the holding's place is its
// last entry and older entries are stale (skipped; the log is compacted when
// they reach half as many as the live ones). A worker's stamps only grow (renumbered when
// they would wrap), so an entry of a holding that was dropped, or of a node
// that was deleted and reused, never matches again. Which stamps went stale (a
// holding touched again or dropped) is also kept per worker as a bit per stamp,
// over the stamps from its oldest live entry's on: so the log is read and
// compacted without reading the nodes its entries name. Touching writes the
// holder, a bit and the log's end, and eviction reads the log in order, so
// the next victims can be fetched ahead (a linked list would be walked miss
// by miss). Recording touches a path from
// its deepest node up, so a node is always more recent than its descendants:
// eviction takes descendants first and each worker's holding stays
// prefix-closed. A node nobody holds and without children is deleted, so the
// tree's size is bounded by the workers' capacities.
//
// Deterministic: no output depends on hash-map iteration order.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "sim/core/child_index.h"
#include "sim/core/huge_page_allocator.h"
#include "sim/core/request.h"

namespace servesim {

using IndexNodeId = std::uint32_t;

class GlobalPrefixIndex {
 public:
  explicit GlobalPrefixIndex(std::size_t workers);

  void set_capacity(WorkerId w, std::int64_t tokens) { capacity_[w] = tokens; }
  std::int64_t capacity(WorkerId w) const { return capacity_[w]; }
  std::int64_t held_tokens(WorkerId w) const { return held_[w]; }
  std::size_t workers() const { return capacity_.size(); }

  struct Match {
    IndexNodeId node = 0;     // deepest node of the prompt held (as a whole prefix) by some worker; 0 = none
    std::int64_t tokens = 0;  // its prefix length in tokens
  };
  // What one record() or match() call walked: per prompt block, root side first,
  // the node and its generation. A later record() of the same prompt takes the
  // steps still valid (a step is valid while its node lives) instead of walking
  // the tree again: it skips one child lookup per block.
  struct PathStep {
    IndexNodeId node = 0;
    std::uint32_t generation = 0;
  };
  using RecordedPath = std::vector<PathStep>;

  // per_worker[w] = tokens of the longest prompt prefix worker w holds in this view.
  // With `walked`: it is overwritten with the nodes the walk went through (the
  // prompt's first blocks that are in the tree, held or not): a path that a
  // record() of the same prompt may be given.
  Match match(const RequestSpec& spec, std::vector<std::int64_t>& per_worker, RecordedPath* walked = nullptr) const;
  bool owns(IndexNodeId n, WorkerId w) const;

  // From now on worker w holds spec's prompt blocks (nodes created as needed,
  // w's LRU touched), then w's least recent nodes beyond its capacity are dropped.
  // With `path`: if not empty it must be what an earlier record() or match() of
  // this same prompt (same prompt tokens, block size and blocks; any worker) left
  // in it; it is then overwritten with this call's steps. The effect on the index
  // is exactly that of record(spec, w) either way.
  void record(const RequestSpec& spec, WorkerId w, RecordedPath* path = nullptr);
  // Moves worker `from`'s holding of node n and everything below it to worker
  // `to` (Preble's rebalancing moves whole prefix subtrees): `to` holds them
  // afterwards (their LRU order kept, as most recent), `from` no longer does.
  // REQUIRES: n's parent is the root or held by `to`. Returns the tokens moved.
  std::int64_t move_subtree(IndexNodeId n, WorkerId from, WorkerId to);
  // The root-side child on n's path (n itself for a child of the root).
  IndexNodeId top_of(IndexNodeId n) const {
    while (n != 0 && nodes_[n].parent != 0) n = nodes_[n].parent;
    return n;
  }
  // Visits w's top-level nodes (children of the root it holds), most recent
  // first (their order in w's LRU list; their touches are also logged in a log
  // of their own, read from its end).
  template <class F>
  void visit_tops(WorkerId w, F&& f) const {
    const std::vector<LogEntry>& log = top_logs_[w];
    for (std::size_t k = log.size(); k-- > 0;)
      if (current(log[k], w)) f(log[k].node);
  }
  // The nodes of the prompt the last record() call walked, root side first.
  // Valid until the next record(); entries may have been dropped by it.
  const std::vector<IndexNodeId>& last_path() const { return path_; }
  bool alive(IndexNodeId n) const { return nodes_[n].alive; }
  // Some worker holds n.
  bool held(IndexNodeId n) const { return nodes_[n].holders != 0; }

  // Visits w's nodes from the least recently recorded while the tokens visited
  // so far are < `tokens`: f(node id, node tokens, node generation).
  template <class F>
  void visit_lru(WorkerId w, std::int64_t tokens, F&& f) const {
    std::int64_t seen = 0;
    const std::vector<LogEntry>& log = logs_[w];
    constexpr std::size_t kAhead = 8;  // the nodes are scattered: fetched a few entries ahead
    for (std::size_t k = log_head_[w]; k < log.size() && seen < tokens; ++k) {
      if (k + kAhead < log.size()) __builtin_prefetch(&nodes_[log[k + kAhead].node]);
      if (!current(log[k], w)) continue;
      const Node& x = nodes_[log[k].node];
      f(log[k].node, static_cast<std::int64_t>(x.tokens), x.generation);
      seen += x.tokens;
    }
  }

  std::uint32_t generation(IndexNodeId n) const { return nodes_[n].generation; }
  std::size_t nodes() const { return live_; }
  std::size_t slots() const { return nodes_.size(); }

  // Checks the structure (owner lists, held sums, prefix-closed holdings); O(size).
  void check_invariants() const;
  // Test hook: w's last stamp becomes at least `last`, as if that many stamps had
  // been drawn and gone stale (to reach the renumbering that keeps a worker's
  // stamps from wrapping).
  void skip_stamps(WorkerId w, std::uint32_t last);
  std::uint64_t renumbers() const { return renumbers_; }  // logs renumbered so far

 private:
  struct Holder {  // one worker's holding of a node
    WorkerId worker = 0;
    std::uint32_t stamp = 0;  // of its current log entry: the worker's stamp when last touched
  };
  // One cache line. Its holders (one per holding worker, in no particular
  // order: nothing reads their order) live in the node while they are at most
  // kInlineHolders (most nodes: a prompt's own blocks have one), else they are
  // spilled (templates held everywhere). When the index has at most
  // kMaskWorkers workers, a spilled node keeps, where its inline holders were,
  // the set of its holding workers as a bit mask (match() reads that alone), and
  // its holders' stamps in a row of dense_ indexed by worker (one line for 16
  // workers, at a place the node names: no list to search); with more workers,
  // in a list of spills_.
  static constexpr std::uint16_t kInlineHolders = 3;
  static constexpr std::size_t kMaskWords = kInlineHolders * sizeof(Holder) / sizeof(std::uint64_t);
  static constexpr std::size_t kMaskWorkers = 64 * kMaskWords;
  struct alignas(64) Node {
    BlockHash hash = 0;
    std::int32_t path_tokens = 0;  // checked to fit at insertion
    IndexNodeId parent = 0;
    std::uint32_t generation = 0;
    std::int32_t tokens = 0;
    std::int32_t children = 0;
    Holder held[kInlineHolders];
    std::uint32_t spill = 0;   // holders > kInlineHolders: their row of dense_ (masked_), else spills_[spill]
    // Children: the only child inline, the child index from the second on
    // (ChildIndex::add_child / find_child / remove_child).
    IndexNodeId only_child = 0;
    std::uint16_t holders = 0;
    bool alive = false;
    bool in_index = false;
  };
  static_assert(sizeof(Node) == 64, "an index node is one cache line");
  static_assert(kMaskWords >= 1 && kMaskWords * sizeof(std::uint64_t) <= sizeof(Node::held),
                "the mask fits the inline holders");
  std::uint32_t* row(std::uint32_t spill) { return dense_.data() + static_cast<std::size_t>(spill) * stride_; }
  const std::uint32_t* row(std::uint32_t spill) const {
    return dense_.data() + static_cast<std::size_t>(spill) * stride_;
  }
  // f(worker, stamp) for each holder of x.
  template <class F>
  void for_each_holder(const Node& x, F&& f) const {
    if (x.holders <= kInlineHolders) {
      for (std::uint16_t i = 0; i < x.holders; ++i) f(x.held[i].worker, x.held[i].stamp);
    } else if (masked_) {
      const std::uint32_t* r = row(x.spill);
      for (std::size_t word = 0; word < kMaskWords; ++word)
        for (std::uint64_t bits = mask_word(x, word); bits != 0; bits &= bits - 1) {
          const std::size_t w = 64 * word + static_cast<std::size_t>(std::countr_zero(bits));
          f(static_cast<WorkerId>(w), r[w]);
        }
    } else {
      for (const Holder& h : spills_[x.spill]) f(h.worker, h.stamp);
    }
  }
  // The holder mask's word i of a spilled node (masked_ only), read and written
  // through memcpy: it lives in the bytes of the node's inline holders.
  static std::uint64_t mask_word(const Node& x, std::size_t i) {
    std::uint64_t m;
    std::memcpy(&m, reinterpret_cast<const unsigned char*>(x.held) + i * sizeof m, sizeof m);
    return m;
  }
  static void set_mask_word(Node& x, std::size_t i, std::uint64_t m) {
    std::memcpy(reinterpret_cast<unsigned char*>(x.held) + i * sizeof m, &m, sizeof m);
  }
  static void flip_mask_bit(Node& x, WorkerId w) {  // w's bit changes (set <-> clear)
    set_mask_word(x, w / 64, mask_word(x, w / 64) ^ (std::uint64_t{1} << (w % 64)));
  }
  void add_holder(Node& x, Holder h);
  void remove_holder(Node& x, WorkerId w);
  // The stamp of w's holding of x (null if w does not hold it). With a holder
  // mask, a worker whose bit is clear is answered from the node alone.
  std::uint32_t* stamp_of(Node& x, WorkerId w) {
    return const_cast<std::uint32_t*>(std::as_const(*this).stamp_of(x, w));
  }
  const std::uint32_t* stamp_of(const Node& x, WorkerId w) const {
    if (x.holders <= kInlineHolders) {
      for (std::uint16_t i = 0; i < x.holders; ++i)
        if (x.held[i].worker == w) return &x.held[i].stamp;
      return nullptr;
    }
    if (masked_) return ((mask_word(x, w / 64) >> (w % 64)) & 1) != 0 ? row(x.spill) + w : nullptr;
    for (const Holder& h : spills_[x.spill])
      if (h.worker == w) return &h.stamp;
    return nullptr;
  }
  // A worker's LRU log, least recent first: an entry is current while its node's
  // holder for that worker has the entry's stamp (touched since, dropped, or the
  // node deleted: stale). The stale bits say the same without reading the node:
  // an entry is current iff its stamp is at least the bits' base and its bit is
  // clear (check_invariants compares the two).
  struct LogEntry {
    IndexNodeId node = 0;
    std::uint32_t stamp = 0;
  };
  bool current(const LogEntry& e, WorkerId w) const {
    const std::uint32_t i = e.stamp - base_[w];
    return e.stamp >= base_[w] && ((stale_[w][i / 64] >> (i % 64)) & 1) == 0;
  }
  bool current_by_holder(const LogEntry& e, WorkerId w) const {
    const std::uint32_t* s = stamp_of(nodes_[e.node], w);
    return s != nullptr && *s == e.stamp;
  }
  void mark_stale(WorkerId w, std::uint32_t stamp) {  // REQUIRES: stamp >= base_[w] (a live holding's)
    const std::uint32_t i = stamp - base_[w];
    stale_[w][i / 64] |= std::uint64_t{1} << (i % 64);
  }
  // The worker's least recent holding's node (its log's first current entry; the
  // stale ones before it are passed for good), or 0 when it holds nothing.
  IndexNodeId least_recent(WorkerId w);
  void trim(WorkerId w);  // drops w's least recent holdings down to its capacity
  IndexNodeId child(IndexNodeId parent, BlockHash h) const;
  IndexNodeId add_node(IndexNodeId parent, BlockHash h, std::int64_t tokens);
  // w's next stamp (its stamps renumbered first when they would wrap), its stale
  // bit clear.
  std::uint32_t next_stamp(WorkerId w) {
    if (stamp_[w] == kLastStamp) [[unlikely]] renumber(w);
    const std::uint32_t s = ++stamp_[w];
    if ((s - base_[w]) % 64 == 0) [[unlikely]] add_stale_word(w, s);  // s may start a word
    return s;
  }
  [[gnu::noinline]] void add_stale_word(WorkerId w, std::uint32_t s) {
    if ((s - base_[w]) / 64 >= stale_[w].size()) stale_[w].push_back(0);
  }
  static constexpr std::uint32_t kLastStamp = 0xFFFFFFFFu;
  // w's current entries get stamps 1, 2, ... in order (both logs; the holders too),
  // and its stale bits start over.
  [[gnu::noinline]] void renumber(WorkerId w);
  // Drops the logs' stale entries and the stale bits below the oldest current
  // entry's stamp (compact() then renumbers when the bits still span more than
  // kSpan times the entries: an old holding never touched again).
  void compact_logs(WorkerId w);
  static constexpr std::size_t kSpan = 16;
  // Touches w's holding of node n (made if w does not hold it yet: in n's holder
  // list, counted in w's tokens): the next stamp, a new entry at the end of w's
  // log (and of its tops log for a child of the root).
  void touch(IndexNodeId n, WorkerId w);
  void log_touch(IndexNodeId n, WorkerId w, std::uint32_t stamp);  // the entries only
  // The logs keep their current entries only, in order. Called when a log is
  // crowded(): 1.5 times its live entries and a margin (so small logs are not
  // rewritten over and over): O(1) amortized per touch, ~3 entries read per touch.
  // A smaller log is read faster than compaction costs (performance.md: at 1.5x
  // preble_e2 took 0.975-0.988x the time it took at 2x, the factor before; d2lpm
  // the same; at 4x and at 1.25x d2lpm was slower).
  void compact(WorkerId w);
  static bool crowded(std::size_t entries, std::size_t live) { return 2 * entries >= 3 * live + 128; }
  void keep_current(std::vector<LogEntry>& log, WorkerId w, std::size_t from) const;  // drops log[0, from) too
  void release(IndexNodeId n, WorkerId w);  // removes w's holding of n (counts, stale bit); n stays
  void drop(IndexNodeId n, WorkerId w);     // release(), then deletes nodes left empty
  // Takes the valid prefix of `hint` into path_; returns the steps taken.
  std::size_t take_hint(const RecordedPath& hint);

  bool masked_ = false;      // workers() <= kMaskWorkers: spilled nodes keep a holder mask
  std::vector<Node, HugePageAllocator<Node>> nodes_;  // [0] is the root (huge pages when large)
  std::vector<std::vector<Holder>> spills_;  // !masked_: holder lists of nodes with more than kInlineHolders
  std::vector<std::uint32_t> dense_;         // masked_: their stamps, a row of stride_ per spilled node
  std::size_t stride_ = 0;                   // workers, rounded up to a cache line of stamps
  std::size_t rows_ = 0;                     // rows of dense_ given out
  std::vector<std::uint32_t> free_spills_;   // rows or lists free for reuse
  std::vector<IndexNodeId> free_nodes_;
  ChildIndex children_;
  std::vector<std::vector<LogEntry>> logs_;      // per worker: its LRU log (header comment)
  std::vector<std::vector<LogEntry>> top_logs_;  // per worker: the touches of its top-level holdings
  std::vector<std::size_t> log_head_;            // per worker: entries before it are all stale
  std::vector<std::size_t> holdings_;            // per worker: its live holdings (the log's current entries)
  std::vector<std::size_t> tops_;                // per worker: its top-level ones (the tops log's current entries)
  std::vector<std::uint32_t> stamp_;             // per worker: its last stamp
  std::vector<std::uint32_t> base_;              // per worker: the stamp of its first stale bit
  std::vector<std::vector<std::uint64_t>> stale_;  // per worker: bit i set = stamp base_ + i is stale
  std::vector<std::int64_t> held_, capacity_;
  std::vector<IndexNodeId> path_;
  std::size_t live_ = 0;
  std::uint64_t renumbers_ = 0;
};

// Token count of block i of a prompt (0 past its end); the same rule as the
// workers' caches (sim/prefix_cache.h).
inline std::int64_t prompt_block_tokens(const RequestSpec& s, std::size_t i) {
  const std::int64_t b = s.prefix_block_size, start = static_cast<std::int64_t>(i) * b;
  const std::int64_t left = s.prompt_tokens - start;
  return left <= 0 ? 0 : (left < b ? left : b);
}

}  // namespace servesim
