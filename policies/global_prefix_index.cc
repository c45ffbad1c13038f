// A global scheduler's approximate prefix view; see global_prefix_index.h.
#include "policies/global_prefix_index.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "sim/core/error.h"

namespace servesim {

GlobalPrefixIndex::GlobalPrefixIndex(std::size_t workers)
    : logs_(workers), log_head_(workers, 0), holdings_(workers, 0), top_head_(workers, kNil), held_(workers, 0),
      capacity_(workers, std::numeric_limits<std::int64_t>::max()) {
  masked_ = workers <= kMaskWorkers;
  nodes_.emplace_back();
  nodes_[0].alive = true;
}

IndexNodeId GlobalPrefixIndex::child(IndexNodeId parent, BlockHash h) const {
  const Node& p = nodes_[parent];
  return children_.find_child(parent, h, p.only_child, p.in_index, [this](IndexNodeId c) { return nodes_[c].hash; });
}

std::uint32_t GlobalPrefixIndex::find_own(IndexNodeId n, WorkerId w) const {
  for (const Holder& h : holders(nodes_[n]))
    if (h.worker == w) return h.own;
  return kNil;
}

void GlobalPrefixIndex::add_holder(Node& x, Holder h) {
  if (x.holders < kInlineHolders) {
    x.held[x.holders] = h;
  } else if (x.holders == kInlineHolders) {  // the list moves out of the node
    std::uint32_t s;
    if (!free_spills_.empty()) {
      s = free_spills_.back();
      free_spills_.pop_back();
    } else {
      s = static_cast<std::uint32_t>(spills_.size());
      spills_.emplace_back();
    }
    std::vector<Holder>& v = spills_[s];
    v.assign(x.held, x.held + kInlineHolders);
    v.push_back(h);
    x.spill = s;
    if (masked_) {  // the inline holders' bytes become the mask
      for (std::size_t i = 0; i < kMaskWords; ++i) set_mask_word(x, i, 0);
      for (const Holder& k : v) flip_mask_bit(x, k.worker);
    }
  } else {
    spills_[x.spill].push_back(h);
    if (masked_) flip_mask_bit(x, h.worker);
  }
  x.holders++;
}

void GlobalPrefixIndex::remove_holder(Node& x, std::uint32_t own) {
  if (x.holders <= kInlineHolders) {
    std::uint16_t i = 0;
    while (x.held[i].own != own) ++i;
    for (; i + 1 < x.holders; ++i) x.held[i] = x.held[i + 1];
    x.holders--;
    return;
  }
  std::vector<Holder>& v = spills_[x.spill];
  const auto it = std::find_if(v.begin(), v.end(), [own](const Holder& h) { return h.own == own; });
  const WorkerId gone = it->worker;
  v.erase(it);
  x.holders--;
  if (x.holders > kInlineHolders) {
    if (masked_) flip_mask_bit(x, gone);
  } else {  // back into the node (over the mask)
    std::copy(v.begin(), v.end(), x.held);
    v.clear();
    free_spills_.push_back(x.spill);
    x.spill = 0;
  }
}

bool GlobalPrefixIndex::owns(IndexNodeId n, WorkerId w) const { return find_own(n, w) != kNil; }

GlobalPrefixIndex::Match GlobalPrefixIndex::match(const RequestSpec& spec, std::vector<std::int64_t>& per_worker) const {
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
    const std::int64_t above = nodes_[n].path_tokens, here = nodes_[c].path_tokens;  // not reloaded per holder
    const auto reach = [&](WorkerId w) {
      std::int64_t& mine = per_worker[w];
      if (mine == above) {  // w holds the whole prefix down to here
        mine = here;
        held = true;
      }
    };
    const Node& x = nodes_[c];
    if (x.holders > kInlineHolders && masked_) {
      for (std::size_t word = 0; word < kMaskWords; ++word)
        for (std::uint64_t bits = mask_word(x, word); bits != 0; bits &= bits - 1)
          reach(static_cast<WorkerId>(64 * word + static_cast<std::size_t>(std::countr_zero(bits))));
    } else {
      for (const Holder& h : holders(x)) reach(h.worker);
    }
    if (!held) break;  // nobody holds this prefix whole; nobody can hold a longer one
    n = c;
    m.node = c;
    m.tokens = nodes_[c].path_tokens;
  }
  return m;
}

IndexNodeId GlobalPrefixIndex::add_node(IndexNodeId parent, BlockHash h, std::int64_t tokens) {
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
  x.tokens = static_cast<std::int32_t>(tokens);
  const std::int64_t path = nodes_[parent].path_tokens + tokens;
  SIM_CHECK(path <= std::numeric_limits<std::int32_t>::max(), "prefix index path of {} tokens is too long", path);
  x.path_tokens = static_cast<std::int32_t>(path);
  x.children = 0;
  x.only_child = 0;
  x.in_index = false;
  x.generation++;
  x.alive = true;
  x.holders = 0;
  Node& p = nodes_[parent];
  children_.add_child(parent, h, id, p.only_child, p.in_index, [this](IndexNodeId c) { return nodes_[c].hash; });
  p.children++;
  ++live_;
  return id;
}

void GlobalPrefixIndex::unlink(std::uint32_t o) {
  const Own& e = owns_[o];
  if (e.top) {
    Link& l = top_links_[o];
    (l.prev == kNil ? top_head_[e.worker] : top_links_[l.prev].next) = l.next;
    if (l.next != kNil) top_links_[l.next].prev = l.prev;
    l = Link{};
  }
}

void GlobalPrefixIndex::push_front(std::uint32_t o) {
  Own& e = owns_[o];
  std::vector<LogEntry>& log = logs_[e.worker];
  // Stale entries (also those passed at the head) are skipped by every reader; at
  // twice the live ones (and a margin, so small logs are not rewritten over and
  // over) the log is rewritten: O(1) amortized per touch.
  if (log.size() >= 2 * holdings_[e.worker] + 64) compact(e.worker);
  log.push_back(LogEntry{o, ++e.stamp});
  if (e.top) {  // the same move in the tops list keeps it in the LRU list's order
    Link& l = top_links_[o];
    l.prev = kNil;
    l.next = top_head_[e.worker];
    if (l.next != kNil) top_links_[l.next].prev = o;
    top_head_[e.worker] = o;
  }
}

void GlobalPrefixIndex::compact(WorkerId w) {
  std::vector<LogEntry>& log = logs_[w];
  std::size_t kept = 0;
  // Each entry reads its holding, scattered in owns_: fetch a few entries ahead.
  constexpr std::size_t kAhead = 16;
  for (std::size_t k = log_head_[w]; k < log.size(); ++k) {
    if (k + kAhead < log.size()) __builtin_prefetch(&owns_[log[k + kAhead].own]);
    if (current(log[k], w)) log[kept++] = log[k];
  }
  log.resize(kept);
  log_head_[w] = 0;
}

std::uint32_t GlobalPrefixIndex::least_recent(WorkerId w) {
  const std::vector<LogEntry>& log = logs_[w];
  std::size_t& k = log_head_[w];
  for (; k < log.size(); ++k)
    if (current(log[k], w)) return log[k].own;
  return kNil;
}

std::uint32_t GlobalPrefixIndex::new_own(IndexNodeId n, WorkerId w) {
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
  // The stamp carries on from the slot's last holding, so that one's log entries stay stale.
  owns_[o] = Own{n, w, owns_[o].stamp + 1, x.generation, static_cast<std::int32_t>(x.tokens), x.parent, x.parent == 0};
  add_holder(x, Holder{o, w});
  held_[w] += x.tokens;
  ++holdings_[w];
  return o;
}

// Undoes new_own's entry: the holding leaves its node's holder list and is freed.
void GlobalPrefixIndex::free_own(std::uint32_t o) {
  remove_holder(nodes_[owns_[o].node], o);
  --holdings_[owns_[o].worker];
  owns_[o].node = 0;  // so a remembered path step can tell it is gone
  free_owns_.push_back(o);
}

void GlobalPrefixIndex::drop(std::uint32_t o) {
  unlink(o);
  const IndexNodeId n = owns_[o].node;
  held_[owns_[o].worker] -= nodes_[n].tokens;
  free_own(o);
  // Delete nodes nobody holds and nothing hangs from, up the path.
  for (IndexNodeId x = n; x != 0 && nodes_[x].holders == 0 && nodes_[x].children == 0;) {
    Node& d = nodes_[x];
    const IndexNodeId parent = d.parent;
    Node& p = nodes_[parent];
    children_.remove_child(parent, d.hash, p.children, p.only_child, p.in_index);
    d.alive = false;
    free_nodes_.push_back(x);
    --live_;
    p.children--;
    x = parent;
  }
}

// Drops w's least recent holdings while it holds more than its capacity. The log's
// head is cold but read in order: the holdings of the entries kAhead on are fetched,
// and for those kNear on (fetched earlier) their nodes and parents (drop reads both),
// so the misses of the next victims overlap instead of queuing.
void GlobalPrefixIndex::trim(WorkerId w) {
  constexpr std::size_t kAhead = 8, kNear = 3;
  const std::vector<LogEntry>& log = logs_[w];
  while (held_[w] > capacity_[w]) {
    const std::uint32_t o = least_recent(w);
    if (o == kNil) break;
    const std::size_t k = log_head_[w];
    if (k + kAhead < log.size()) __builtin_prefetch(&owns_[log[k + kAhead].own]);
    if (k + kNear < log.size()) {
      const Own& next = owns_[log[k + kNear].own];
      __builtin_prefetch(&nodes_[next.node]);
      __builtin_prefetch(&nodes_[next.parent]);
    }
    drop(o);
  }
}

std::size_t GlobalPrefixIndex::take_hint(const RecordedPath& hint, WorkerId w) {
  // Each step reads its holding and its node, at addresses the hint already names and
  // mostly cold: ask for all of them first, so the misses overlap.
  for (const PathStep& st : hint) {
    __builtin_prefetch(&owns_[st.own]);
    __builtin_prefetch(&nodes_[st.node]);
  }
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

void GlobalPrefixIndex::record(const RequestSpec& spec, WorkerId w, RecordedPath* path) {
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
  // w's holdings on the path first (their nodes were just walked, so the holder
  // lists are at hand), each fetched as it is found: the touches below read and
  // write them, and they are scattered (cold), so their misses overlap here.
  for (std::size_t j = 0; j < path_.size(); ++j) {
    std::uint32_t& o = path_owns_[j];
    if (o == kNil) o = find_own(path_[j], w);
    if (o != kNil) __builtin_prefetch(&owns_[o]);
  }
  // Deepest first, so ancestors end up more recent than descendants. Below the
  // first step no holding is a top-level one (its node's parent is the step
  // before), so those are push_front without the tops list: a new log entry each,
  // after one compaction check for the path (when the log is compacted changes no
  // current entry and not their order).
  std::vector<LogEntry>& log = logs_[w];
  if (log.size() >= 2 * holdings_[w] + 64) compact(w);
  for (std::size_t j = path_.size(); j-- > 1;) {
    std::uint32_t o = path_owns_[j];
    if (o == kNil) o = new_own(path_[j], w);
    log.push_back(LogEntry{o, ++owns_[o].stamp});
    path_owns_[j] = o;
  }
  if (!path_.empty()) {
    std::uint32_t o = path_owns_[0];
    if (o != kNil) {
      unlink(o);
    } else {
      o = new_own(path_[0], w);
    }
    push_front(o);
    path_owns_[0] = o;
  }
  if (path) {
    path->resize(path_.size());
    for (std::size_t j = 0; j < path_.size(); ++j)
      (*path)[j] = PathStep{path_[j], path_owns_[j], owns_[path_owns_[j]].generation};
  }
  trim(w);
}

std::int64_t GlobalPrefixIndex::move_subtree(IndexNodeId n, WorkerId from, WorkerId to) {
  if (from == to) return 0;
  // from's holdings under n, least recent first (so pushing them to the front keeps their order).
  std::vector<std::uint32_t> moving;
  const std::vector<LogEntry>& log = logs_[from];
  for (std::size_t k = log_head_[from]; k < log.size(); ++k) {
    if (!current(log[k], from)) continue;
    const std::uint32_t o = log[k].own;
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
    --holdings_[from];
    ++holdings_[to];
    owns_[o].worker = to;
    Node& node = nodes_[x];
    Holder* h = holders_begin(node);
    while (h->own != o) ++h;
    h->worker = to;
    if (node.holders > kInlineHolders && masked_) {
      flip_mask_bit(node, from);
      flip_mask_bit(node, to);
    }
    push_front(o);
  }
  trim(to);
  return moved;
}

void GlobalPrefixIndex::check_invariants() const {
  std::vector<std::int64_t> held(capacity_.size(), 0);
  for (WorkerId w = 0; w < capacity_.size(); ++w) {
    // The log, most recent first: each live holding of w has exactly one current entry.
    std::vector<std::uint32_t> order;
    const std::vector<LogEntry>& log = logs_[w];
    for (std::size_t k = 0; k < log_head_[w]; ++k)
      SIM_CHECK(!current(log[k], w), "worker {}'s log has a current entry before its head", w);
    for (std::size_t k = log.size(); k-- > log_head_[w];)
      if (current(log[k], w)) order.push_back(log[k].own);
    SIM_CHECK(order.size() == holdings_[w], "worker {} has {} current log entries for {} holdings", w, order.size(),
              holdings_[w]);
    for (std::uint32_t o : order) {
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
    for (std::uint32_t o : order) {
      if (nodes_[owns_[o].node].parent != 0) continue;
      SIM_CHECK(t == o && owns_[o].top, "worker {}'s tops list disagrees with its LRU list at {}", w, o);
      t = top_links_[t].next;
    }
    SIM_CHECK(t == kNil, "worker {}'s tops list is longer than its top-level holdings", w);
  }
  std::size_t live = 0, indexed = 0;
  std::vector<std::int32_t> children(nodes_.size(), 0);
  for (IndexNodeId n = 1; n < nodes_.size(); ++n) {
    const Node& x = nodes_[n];
    if (!x.alive) continue;
    ++live;
    children[x.parent]++;
    const Node& p = nodes_[x.parent];
    const auto hash_of = [this](auto c) { return nodes_[c].hash; };
    SIM_CHECK(children_.child_kept(x.parent, x.hash, n, p.only_child, p.in_index, hash_of),
              "index node {} is not found, or not kept where its parent's state says", n);
    if (p.in_index) ++indexed;
  }
  for (IndexNodeId n = 0; n < nodes_.size(); ++n) {
    const Node& x = nodes_[n];
    if (n != 0 && !x.alive) continue;
    SIM_CHECK(x.children == children[n], "index node {} child count {} != {}", n, x.children, children[n]);
    if (n != 0 && masked_ && x.holders > kInlineHolders) {  // the mask is the holders' workers
      std::uint64_t mask[kMaskWords] = {};
      for (const Holder& h : holders(x)) mask[h.worker / 64] |= std::uint64_t{1} << (h.worker % 64);
      for (std::size_t i = 0; i < kMaskWords; ++i)
        SIM_CHECK(mask_word(x, i) == mask[i], "index node {}'s holder mask disagrees with its holders", n);
    }
    SIM_CHECK(ChildIndex::parent_state_ok(x.only_child, x.in_index, x.children),
              "index node {} keeps {} children {}", n, x.children, x.in_index ? "in the index" : "inline");
  }
  SIM_CHECK(live == live_ && children_.size() == indexed, "index node counts disagree");
}

}  // namespace servesim
