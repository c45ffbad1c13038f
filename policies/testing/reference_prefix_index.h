// ReferencePrefixIndex: GlobalPrefixIndex as it was at a3aeaa4 (holders in a
// std::vector per node), kept for tests only: the optimized index must behave
// exactly like it (same node and holding ids, LRU orders, matches, moves).
// Not for production code.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "policies/global_prefix_index.h"
#include "sim/core/child_index.h"
#include "sim/core/error.h"
#include "sim/core/request.h"

namespace servesim::testing {

class ReferencePrefixIndex {
 public:
  explicit ReferencePrefixIndex(std::size_t workers);

  void set_capacity(WorkerId w, std::int64_t tokens) { capacity_[w] = tokens; }
  std::int64_t capacity(WorkerId w) const { return capacity_[w]; }
  std::int64_t held_tokens(WorkerId w) const { return held_[w]; }
  std::size_t workers() const { return capacity_.size(); }

  struct Match {
    IndexNodeId node = 0;     // deepest node of the prompt held (as a whole prefix) by some worker; 0 = none
    std::int64_t tokens = 0;  // its prefix length in tokens
  };
  // per_worker[w] = tokens of the longest prompt prefix worker w holds in this view.
  Match match(const RequestSpec& spec, std::vector<std::int64_t>& per_worker) const;
  bool owns(IndexNodeId n, WorkerId w) const;

  // What one record() call walked: per prompt block, root side first, the node,
  // the holding made or touched, and the node's generation. A later record()
  // of the same prompt takes the steps still valid instead of walking the tree
  // again (a step is valid while its node lives; its holding, while not dropped
  // or moved): it skips one child lookup per block, and the holding search too.
  struct PathStep {
    IndexNodeId node = 0;
    std::uint32_t own = 0;
    std::uint32_t generation = 0;
  };
  using RecordedPath = std::vector<PathStep>;

  // From now on worker w holds spec's prompt blocks (nodes created as needed,
  // w's LRU touched), then w's least recent nodes beyond its capacity are dropped.
  // With `path`: if not empty it must be what an earlier record() of this same
  // prompt (same prompt tokens, block size and blocks; any worker) left in it;
  // it is then overwritten with this call's steps. The effect on the index is
  // exactly that of record(spec, w) either way.
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
  // first (their order in w's LRU list; kept in a list of their own).
  template <class F>
  void visit_tops(WorkerId w, F&& f) const {
    for (std::uint32_t o = top_head_[w]; o != kNil; o = top_links_[o].next) f(owns_[o].node);
  }
  // The nodes of the prompt the last record() call walked, root side first.
  // Valid until the next record(); entries may have been dropped by it.
  const std::vector<IndexNodeId>& last_path() const { return path_; }
  bool alive(IndexNodeId n) const { return nodes_[n].alive; }

  // Visits w's nodes from the least recently recorded while the tokens visited
  // so far are < `tokens`: f(node id, node tokens, node generation). Reads the
  // holdings only, not the nodes.
  template <class F>
  void visit_lru(WorkerId w, std::int64_t tokens, F&& f) const {
    std::int64_t seen = 0;
    for (std::uint32_t o = tail_[w]; o != kNil && seen < tokens; o = owns_[o].prev) {
      const Own& e = owns_[o];
      f(e.node, static_cast<std::int64_t>(e.tokens), e.generation);
      seen += e.tokens;
    }
  }

  std::uint32_t generation(IndexNodeId n) const { return nodes_[n].generation; }
  std::size_t nodes() const { return live_; }
  std::size_t slots() const { return nodes_.size(); }

  // Checks the structure (owner lists, held sums, prefix-closed holdings); O(size).
  void check_invariants() const;

 private:
  static constexpr std::uint32_t kNil = 0xFFFFFFFFu;
  struct Holder {
    std::uint32_t own = 0;  // its entry in owns_
    WorkerId worker = 0;    // == owns_[own].worker, here so lookups need not read owns_
  };
  struct Node {
    IndexNodeId parent = 0;
    BlockHash hash = 0;
    std::int64_t tokens = 0;
    std::int64_t path_tokens = 0;
    std::int32_t children = 0;
    std::uint32_t generation = 0;
    bool alive = false;
    std::vector<Holder> owned_by;  // one per holding worker
  };
  struct Own {  // one (node, worker) holding, linked in the worker's LRU list
    IndexNodeId node = 0;  // 0 (the root, never held): a free entry
    WorkerId worker = 0;
    std::uint32_t prev = kNil, next = kNil;
    std::uint32_t generation = 0;  // the node's, when the holding was made
    std::int32_t tokens = 0;       // the node's
    bool top = false;              // the node is a child of the root: also in the worker's tops list
  };
  struct Link {
    std::uint32_t prev = kNil, next = kNil;
  };
  IndexNodeId child(IndexNodeId parent, BlockHash h) const;
  IndexNodeId add_node(IndexNodeId parent, BlockHash h, std::int64_t tokens);
  std::uint32_t find_own(IndexNodeId n, WorkerId w) const;
  void unlink(std::uint32_t o);
  void push_front(std::uint32_t o);
  void drop(std::uint32_t o);  // removes a holding; deletes nodes left empty
  // A holding of n by w: made (in n's holder list, counted in w's tokens; not yet
  // linked in w's LRU list), and freed (out of its node's holder list; unlinked first).
  std::uint32_t new_own(IndexNodeId n, WorkerId w);
  void free_own(std::uint32_t o);
  // Takes the valid prefix of `hint` into path_ / path_owns_; returns the steps taken.
  std::size_t take_hint(const RecordedPath& hint, WorkerId w);

  std::vector<Node> nodes_;  // [0] is the root
  std::vector<IndexNodeId> free_nodes_;
  std::vector<Own> owns_;
  std::vector<std::uint32_t> free_owns_;
  ChildIndex children_;
  std::vector<Link> top_links_;  // per holding, for top-level ones: the worker's tops list
  std::vector<std::uint32_t> head_, tail_;  // per worker: most / least recent holding
  std::vector<std::uint32_t> top_head_;     // per worker: most recent top-level holding
  std::vector<std::int64_t> held_, capacity_;
  std::vector<IndexNodeId> path_;
  std::vector<std::uint32_t> path_owns_;  // per path_ entry: w's holding if known, else kNil
  std::size_t live_ = 0;
};


inline ReferencePrefixIndex::ReferencePrefixIndex(std::size_t workers)
    : head_(workers, kNil), tail_(workers, kNil), top_head_(workers, kNil), held_(workers, 0),
      capacity_(workers, std::numeric_limits<std::int64_t>::max()) {
  nodes_.emplace_back();
  nodes_[0].alive = true;
}

inline IndexNodeId ReferencePrefixIndex::child(IndexNodeId parent, BlockHash h) const { return children_.find(parent, h); }

inline std::uint32_t ReferencePrefixIndex::find_own(IndexNodeId n, WorkerId w) const {
  for (const Holder& h : nodes_[n].owned_by)
    if (h.worker == w) return h.own;
  return kNil;
}

inline bool ReferencePrefixIndex::owns(IndexNodeId n, WorkerId w) const { return find_own(n, w) != kNil; }

inline ReferencePrefixIndex::Match ReferencePrefixIndex::match(const RequestSpec& spec, std::vector<std::int64_t>& per_worker) const {
  per_worker.assign(capacity_.size(), 0);
  Match m;
  if (spec.prefix_block_size <= 0) return m;
  IndexNodeId n = 0;
  for (std::size_t i = 0; i < spec.prefix_blocks.size(); ++i) {
    const std::int64_t t = prompt_block_tokens(spec, i);
    if (t <= 0) break;
    const IndexNodeId c = child(n, spec.prefix_blocks[i]);
    if (c == 0 || nodes_[c].tokens != t) break;
    bool held = false;
    for (const Holder& h : nodes_[c].owned_by) {
      std::int64_t& mine = per_worker[h.worker];
      if (mine == nodes_[n].path_tokens) {  // w holds the whole prefix down to here
        mine = nodes_[c].path_tokens;
        held = true;
      }
    }
    if (!held) break;  // nobody holds this prefix whole; nobody can hold a longer one
    n = c;
    m.node = c;
    m.tokens = nodes_[c].path_tokens;
  }
  return m;
}

inline IndexNodeId ReferencePrefixIndex::add_node(IndexNodeId parent, BlockHash h, std::int64_t tokens) {
  IndexNodeId id;
  if (!free_nodes_.empty()) {
    id = free_nodes_.back();
    free_nodes_.pop_back();
  } else {
    id = static_cast<IndexNodeId>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& x = nodes_[id];
  x.parent = parent;
  x.hash = h;
  x.tokens = tokens;
  x.path_tokens = nodes_[parent].path_tokens + tokens;
  x.children = 0;
  x.generation++;
  x.alive = true;
  x.owned_by.clear();
  nodes_[parent].children++;
  children_.insert(parent, h, id);
  ++live_;
  return id;
}

inline void ReferencePrefixIndex::unlink(std::uint32_t o) {
  Own& e = owns_[o];
  (e.prev == kNil ? head_[e.worker] : owns_[e.prev].next) = e.next;
  (e.next == kNil ? tail_[e.worker] : owns_[e.next].prev) = e.prev;
  e.prev = e.next = kNil;
  if (e.top) {
    Link& l = top_links_[o];
    (l.prev == kNil ? top_head_[e.worker] : top_links_[l.prev].next) = l.next;
    if (l.next != kNil) top_links_[l.next].prev = l.prev;
    l = Link{};
  }
}

inline void ReferencePrefixIndex::push_front(std::uint32_t o) {
  Own& e = owns_[o];
  e.prev = kNil;
  e.next = head_[e.worker];
  if (e.next != kNil) owns_[e.next].prev = o;
  head_[e.worker] = o;
  if (tail_[e.worker] == kNil) tail_[e.worker] = o;
  if (e.top) {  // the same move in the tops list keeps it in the LRU list's order
    Link& l = top_links_[o];
    l.prev = kNil;
    l.next = top_head_[e.worker];
    if (l.next != kNil) top_links_[l.next].prev = o;
    top_head_[e.worker] = o;
  }
}

inline std::uint32_t ReferencePrefixIndex::new_own(IndexNodeId n, WorkerId w) {
  std::uint32_t o;
  if (!free_owns_.empty()) {
    o = free_owns_.back();
    free_owns_.pop_back();
  } else {
    o = static_cast<std::uint32_t>(owns_.size());
    owns_.emplace_back();
    top_links_.emplace_back();
  }
  Node& x = nodes_[n];
  owns_[o] = Own{n, w, kNil, kNil, x.generation, static_cast<std::int32_t>(x.tokens), x.parent == 0};
  x.owned_by.push_back(Holder{o, w});
  held_[w] += x.tokens;
  return o;
}

// Undoes new_own's entry: the holding leaves its node's holder list and is freed.
inline void ReferencePrefixIndex::free_own(std::uint32_t o) {
  std::erase_if(nodes_[owns_[o].node].owned_by, [o](const Holder& h) { return h.own == o; });
  owns_[o].node = 0;  // so a remembered path step can tell it is gone
  free_owns_.push_back(o);
}

inline void ReferencePrefixIndex::drop(std::uint32_t o) {
  unlink(o);
  const IndexNodeId n = owns_[o].node;
  held_[owns_[o].worker] -= nodes_[n].tokens;
  free_own(o);
  // Delete nodes nobody holds and nothing hangs from, up the path.
  for (IndexNodeId x = n; x != 0 && nodes_[x].owned_by.empty() && nodes_[x].children == 0;) {
    Node& d = nodes_[x];
    const IndexNodeId parent = d.parent;
    children_.erase(parent, d.hash);
    d.alive = false;
    free_nodes_.push_back(x);
    --live_;
    nodes_[parent].children--;
    x = parent;
  }
}

inline std::size_t ReferencePrefixIndex::take_hint(const RecordedPath& hint, WorkerId w) {
  std::size_t i = 0;
  for (; i < hint.size(); ++i) {
    const PathStep& st = hint[i];
    std::uint32_t mine = kNil;
    const Own& e = owns_[st.own];
    if (e.node == st.node && e.generation == st.generation) {  // a live holding of this very node
      if (e.worker == w) mine = st.own;
    } else if (!nodes_[st.node].alive || nodes_[st.node].generation != st.generation) {
      break;  // deleted (and maybe reused): walk from its parent again
    }
    // The node lives, so it is still the child of the previous step for this block.
    path_.push_back(st.node);
    path_owns_.push_back(mine);
  }
  return i;
}

inline void ReferencePrefixIndex::record(const RequestSpec& spec, WorkerId w, RecordedPath* path) {
  if (spec.prefix_block_size <= 0 || spec.prefix_blocks.empty()) {
    if (path) path->clear();
    return;
  }
  path_.clear();
  path_owns_.clear();
  std::size_t i = path && !path->empty() && path->size() <= spec.prefix_blocks.size() ? take_hint(*path, w) : 0;
  IndexNodeId n = path_.empty() ? 0 : path_.back();
  bool fresh = false;  // n was created by this call, so it has no children to look up
  for (; i < spec.prefix_blocks.size(); ++i) {
    const std::int64_t t = prompt_block_tokens(spec, i);
    if (t <= 0) break;
    IndexNodeId c = fresh ? 0 : child(n, spec.prefix_blocks[i]);
    if (c != 0 && nodes_[c].tokens != t) break;  // same id, other length: not the same content
    if (c == 0) {
      c = add_node(n, spec.prefix_blocks[i], t);
      fresh = true;
    }
    path_.push_back(c);
    path_owns_.push_back(kNil);
    n = c;
  }
  // Deepest first, so ancestors end up more recent than descendants.
  for (std::size_t j = path_.size(); j-- > 0;) {
    std::uint32_t o = path_owns_[j];
    if (o == kNil) o = find_own(path_[j], w);
    if (o != kNil) {
      unlink(o);
    } else {
      o = new_own(path_[j], w);
    }
    push_front(o);
    path_owns_[j] = o;
  }
  if (path) {
    path->resize(path_.size());
    for (std::size_t j = 0; j < path_.size(); ++j)
      (*path)[j] = PathStep{path_[j], path_owns_[j], owns_[path_owns_[j]].generation};
  }
  while (held_[w] > capacity_[w] && tail_[w] != kNil) drop(tail_[w]);
}

inline std::int64_t ReferencePrefixIndex::move_subtree(IndexNodeId n, WorkerId from, WorkerId to) {
  if (from == to) return 0;
  // from's holdings under n, least recent first (so pushing them to the front keeps their order).
  std::vector<std::uint32_t> moving;
  for (std::uint32_t o = tail_[from]; o != kNil; o = owns_[o].prev) {
    IndexNodeId x = owns_[o].node;
    while (x != 0 && x != n) x = nodes_[x].parent;
    if (x == n) moving.push_back(o);
  }
  std::int64_t moved = 0;
  for (std::uint32_t o : moving) {
    const IndexNodeId x = owns_[o].node;
    const std::int64_t t = nodes_[x].tokens;
    moved += t;
    const std::uint32_t theirs = find_own(x, to);
    if (theirs != kNil) {  // `to` holds it already: refresh it, drop from's copy
      unlink(theirs);
      push_front(theirs);
      unlink(o);
      held_[from] -= t;
      free_own(o);
      continue;
    }
    unlink(o);
    held_[from] -= t;
    held_[to] += t;
    owns_[o].worker = to;
    for (Holder& h : nodes_[x].owned_by)
      if (h.own == o) h.worker = to;
    push_front(o);
  }
  while (held_[to] > capacity_[to] && tail_[to] != kNil) drop(tail_[to]);
  return moved;
}

inline void ReferencePrefixIndex::check_invariants() const {
  std::vector<std::int64_t> held(capacity_.size(), 0);
  for (WorkerId w = 0; w < capacity_.size(); ++w) {
    for (std::uint32_t o = head_[w]; o != kNil; o = owns_[o].next) {
      const Own& e = owns_[o];
      SIM_CHECK(e.worker == w && nodes_[e.node].alive && e.tokens == nodes_[e.node].tokens &&
                    e.generation == nodes_[e.node].generation && find_own(e.node, w) == o,
                "holding {} of worker {} is corrupt", o, w);
      held[w] += nodes_[e.node].tokens;
      const IndexNodeId p = nodes_[e.node].parent;
      SIM_CHECK(p == 0 || owns(p, w), "worker {} holds node {} but not its parent {}", w, e.node, p);
    }
    SIM_CHECK(held[w] == held_[w], "worker {} holds {} tokens, tracked {}", w, held[w], held_[w]);
    std::uint32_t t = top_head_[w];  // the tops list: w's top-level holdings in LRU order
    for (std::uint32_t o = head_[w]; o != kNil; o = owns_[o].next) {
      if (nodes_[owns_[o].node].parent != 0) continue;
      SIM_CHECK(t == o && owns_[o].top, "worker {}'s tops list disagrees with its LRU list at {}", w, o);
      t = top_links_[t].next;
    }
    SIM_CHECK(t == kNil, "worker {}'s tops list is longer than its top-level holdings", w);
  }
  std::size_t live = 0;
  for (IndexNodeId n = 1; n < nodes_.size(); ++n) live += nodes_[n].alive ? 1 : 0;
  SIM_CHECK(live == live_ && children_.size() == live_, "index node counts disagree");
}


}  // namespace servesim::testing
