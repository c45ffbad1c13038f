// A global scheduler's approximate prefix view; see global_prefix_index.h.
#include "policies/global_prefix_index.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "sim/core/error.h"

namespace servesim {

GlobalPrefixIndex::GlobalPrefixIndex(std::size_t workers)
    : logs_(workers), top_logs_(workers), log_head_(workers, 0), holdings_(workers, 0), tops_(workers, 0),
      stamp_(workers, 0), base_(workers, 0), stale_(workers, std::vector<std::uint64_t>(1, 0)), held_(workers, 0),
      capacity_(workers, std::numeric_limits<std::int64_t>::max()) {
  masked_ = workers <= kMaskWorkers;
  constexpr std::size_t kLine = 64 / sizeof(std::uint32_t);  // stamps per cache line
  stride_ = masked_ ? (workers + kLine - 1) / kLine * kLine : 0;
  nodes_.emplace_back();
  nodes_[0].alive = true;
}

IndexNodeId GlobalPrefixIndex::child(IndexNodeId parent, BlockHash h) const {
  const Node& p = nodes_[parent];
  return children_.find_child(parent, h, p.only_child, p.in_index, [this](IndexNodeId c) { return nodes_[c].hash; });
}

void GlobalPrefixIndex::add_holder(Node& x, Holder h) {
  if (x.holders < kInlineHolders) {
    x.held[x.holders++] = h;
    return;
  }
  if (x.holders == kInlineHolders) {  // the holders move out of the node
    std::uint32_t s;
    if (!free_spills_.empty()) {
      s = free_spills_.back();
      free_spills_.pop_back();
    } else if (masked_) {
      s = static_cast<std::uint32_t>(rows_++);
      dense_.resize(rows_ * stride_);
    } else {
      s = static_cast<std::uint32_t>(spills_.size());
      spills_.emplace_back();
    }
    if (masked_) {  // the inline holders' bytes become the mask
      Holder inline_holders[kInlineHolders];
      std::copy(x.held, x.held + kInlineHolders, inline_holders);
      for (std::size_t i = 0; i < kMaskWords; ++i) set_mask_word(x, i, 0);
      for (const Holder& k : inline_holders) {
        flip_mask_bit(x, k.worker);
        row(s)[k.worker] = k.stamp;
      }
    } else {
      spills_[s].assign(x.held, x.held + kInlineHolders);
    }
    x.spill = s;
  }
  if (masked_) {
    flip_mask_bit(x, h.worker);
    row(x.spill)[h.worker] = h.stamp;
  } else {
    spills_[x.spill].push_back(h);
  }
  x.holders++;
}

void GlobalPrefixIndex::remove_holder(Node& x, WorkerId w) {
  if (x.holders <= kInlineHolders) {
    std::uint16_t i = 0;
    while (x.held[i].worker != w) ++i;
    for (; i + 1 < x.holders; ++i) x.held[i] = x.held[i + 1];
    x.holders--;
    return;
  }
  if (masked_) {
    flip_mask_bit(x, w);
  } else {
    std::vector<Holder>& v = spills_[x.spill];
    v.erase(std::find_if(v.begin(), v.end(), [w](const Holder& h) { return h.worker == w; }));
  }
  if (x.holders - 1 > kInlineHolders) {
    x.holders--;
    return;
  }
  // Back into the node (over the mask).
  Holder left[kInlineHolders];
  std::size_t n = 0;
  for_each_holder(x, [&](WorkerId k, std::uint32_t stamp) { left[n++] = Holder{k, stamp}; });  // w's is gone
  x.holders--;
  std::copy(left, left + n, x.held);
  if (!masked_) spills_[x.spill].clear();
  free_spills_.push_back(x.spill);
  x.spill = 0;
}

bool GlobalPrefixIndex::owns(IndexNodeId n, WorkerId w) const { return stamp_of(nodes_[n], w) != nullptr; }

GlobalPrefixIndex::Match GlobalPrefixIndex::match(const RequestSpec& spec, std::vector<std::int64_t>& per_worker,
                                                  RecordedPath* walked) const {
  per_worker.assign(capacity_.size(), 0);
  if (walked) walked->clear();
  Match m;
  if (spec.prefix_block_size <= 0) return m;
  IndexNodeId n = 0;
  for (std::size_t i = 0; i < spec.prefix_blocks.size(); ++i) {
    const std::int64_t t = prompt_block_tokens(spec, i);
    if (t <= 0) break;
    const IndexNodeId c = child(n, spec.prefix_blocks[i]);
    if (c == 0 || nodes_[c].tokens != t) break;
    if (walked) walked->push_back(PathStep{c, nodes_[c].generation});
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
      for_each_holder(x, [&](WorkerId k, std::uint32_t) { reach(k); });
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

void GlobalPrefixIndex::log_touch(IndexNodeId n, WorkerId w, std::uint32_t stamp) {
  logs_[w].push_back(LogEntry{n, stamp});
  if (nodes_[n].parent == 0) {  // a top-level holding: its tops log too
    std::vector<LogEntry>& tops = top_logs_[w];
    tops.push_back(LogEntry{n, stamp});
    if (crowded(tops.size(), tops_[w])) keep_current(tops, w, 0);  // as the LRU log, on its own
  }
}

void GlobalPrefixIndex::keep_current(std::vector<LogEntry>& log, WorkerId w, std::size_t from) const {
  std::size_t kept = 0;
  for (std::size_t k = from; k < log.size(); ++k)
    if (current(log[k], w)) log[kept++] = log[k];
  log.resize(kept);
}

void GlobalPrefixIndex::touch(IndexNodeId n, WorkerId w) {
  const std::uint32_t stamp = next_stamp(w);
  Node& x = nodes_[n];
  if (std::uint32_t* held = stamp_of(x, w)) {
    mark_stale(w, *held);
    *held = stamp;
  } else {
    add_holder(x, Holder{w, stamp});
    held_[w] += x.tokens;
    ++holdings_[w];
    if (x.parent == 0) ++tops_[w];
  }
  log_touch(n, w, stamp);
}

void GlobalPrefixIndex::compact_logs(WorkerId w) {
  std::vector<LogEntry>& log = logs_[w];
  keep_current(log, w, log_head_[w]);
  log_head_[w] = 0;
  keep_current(top_logs_[w], w, 0);
  // Every current entry's stamp is at least the first one's (the log is in stamp
  // order); the next stamp when there is none.
  const std::uint32_t oldest = log.empty() ? stamp_[w] + 1 : log.front().stamp;
  std::vector<std::uint64_t>& bits = stale_[w];
  const std::size_t words = std::min<std::size_t>((oldest - base_[w]) / 64, bits.size());  // wholly below it
  bits.erase(bits.begin(), bits.begin() + static_cast<std::ptrdiff_t>(words));
  base_[w] += static_cast<std::uint32_t>(64 * words);
}

void GlobalPrefixIndex::compact(WorkerId w) {
  compact_logs(w);
  if (stamp_[w] - base_[w] > kSpan * (logs_[w].size() + 64)) renumber(w);
}

void GlobalPrefixIndex::renumber(WorkerId w) {
  compact_logs(w);  // every entry left is current: one per holding, in LRU order
  std::uint32_t s = 0;
  for (LogEntry& e : logs_[w]) *stamp_of(nodes_[e.node], w) = e.stamp = ++s;
  for (LogEntry& e : top_logs_[w]) e.stamp = *stamp_of(nodes_[e.node], w);
  stamp_[w] = s;
  base_[w] = 0;
  stale_[w].assign(s / 64 + 1, 0);
  ++renumbers_;
}

void GlobalPrefixIndex::skip_stamps(WorkerId w, std::uint32_t last) {
  if (last <= stamp_[w]) return;
  compact_logs(w);  // every entry left is current; every other stamp from base_ on is stale
  const std::uint32_t delta = last - stamp_[w];
  for (LogEntry& e : logs_[w]) *stamp_of(nodes_[e.node], w) = e.stamp += delta;
  for (LogEntry& e : top_logs_[w]) e.stamp += delta;
  base_[w] += delta;
  stamp_[w] = last;
}

IndexNodeId GlobalPrefixIndex::least_recent(WorkerId w) {
  const std::vector<LogEntry>& log = logs_[w];
  std::size_t& k = log_head_[w];
  for (; k < log.size(); ++k)
    if (current(log[k], w)) return log[k].node;
  return 0;
}

void GlobalPrefixIndex::release(IndexNodeId n, WorkerId w) {
  Node& x = nodes_[n];
  mark_stale(w, *stamp_of(x, w));
  remove_holder(x, w);
  held_[w] -= x.tokens;
  --holdings_[w];
  if (x.parent == 0) --tops_[w];
}

void GlobalPrefixIndex::drop(IndexNodeId n, WorkerId w) {
  release(n, w);
  // Delete nodes nobody holds and nothing hangs from, up the path.
  for (IndexNodeId k = n; k != 0 && nodes_[k].holders == 0 && nodes_[k].children == 0;) {
    Node& d = nodes_[k];
    const IndexNodeId parent = d.parent;
    Node& p = nodes_[parent];
    children_.remove_child(parent, d.hash, p.children, p.only_child, p.in_index);
    d.alive = false;
    free_nodes_.push_back(k);
    --live_;
    p.children--;
    k = parent;
  }
}

// Drops w's least recent holdings while it holds more than its capacity. The log's
// head is cold but read in order: the nodes of the entries kAhead on are fetched,
// and for those kNear on (fetched earlier) their parents (drop reads both), so the
// misses of the next victims overlap instead of queuing.
void GlobalPrefixIndex::trim(WorkerId w) {
  constexpr std::size_t kAhead = 12, kNear = 4;
  const std::vector<LogEntry>& log = logs_[w];
  while (held_[w] > capacity_[w]) {
    const IndexNodeId n = least_recent(w);
    if (n == 0) break;
    const std::size_t k = log_head_[w];
    if (k + kAhead < log.size()) __builtin_prefetch(&nodes_[log[k + kAhead].node]);
    if (k + kNear < log.size()) __builtin_prefetch(&nodes_[nodes_[log[k + kNear].node].parent]);
    drop(n, w);
  }
}

std::size_t GlobalPrefixIndex::take_hint(const RecordedPath& hint) {
  // Each step reads its node, at an address the hint already names and mostly
  // cold: ask for all of them first, so the misses overlap.
  for (const PathStep& st : hint) __builtin_prefetch(&nodes_[st.node]);
  std::size_t i = 0;
  for (; i < hint.size(); ++i) {
    const PathStep& st = hint[i];
    const Node& x = nodes_[st.node];
    if (!x.alive || x.generation != st.generation) break;  // deleted (and maybe reused): walk from its parent again
    // The node lives, so it is still the child of the previous step for this block.
    path_.push_back(st.node);
  }
  return i;
}

void GlobalPrefixIndex::record(const RequestSpec& spec, WorkerId w, RecordedPath* path) {
  if (spec.prefix_block_size <= 0 || spec.prefix_blocks.empty()) {
    if (path) path->clear();
    return;
  }
  path_.clear();
  std::size_t i = path && !path->empty() && path->size() <= spec.prefix_blocks.size() ? take_hint(*path) : 0;
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
    n = c;
  }
  // Deepest first, so ancestors end up more recent than descendants; one
  // compaction check for the path (when the log is compacted changes no current
  // entry and not their order).
  if (crowded(logs_[w].size(), holdings_[w])) compact(w);
  for (std::size_t j = path_.size(); j-- > 0;) touch(path_[j], w);
  if (path) {
    path->resize(path_.size());
    for (std::size_t j = 0; j < path_.size(); ++j) (*path)[j] = PathStep{path_[j], nodes_[path_[j]].generation};
  }
  trim(w);
}

std::int64_t GlobalPrefixIndex::move_subtree(IndexNodeId n, WorkerId from, WorkerId to) {
  if (from == to) return 0;
  // from's holdings under n, least recent first (so touching them for `to` keeps their order).
  std::vector<IndexNodeId> moving;
  const std::vector<LogEntry>& log = logs_[from];
  for (std::size_t k = log_head_[from]; k < log.size(); ++k) {
    if (!current(log[k], from)) continue;
    IndexNodeId x = log[k].node;
    const IndexNodeId held = x;
    while (x != 0 && x != n) x = nodes_[x].parent;
    if (x == n) moving.push_back(held);
  }
  std::int64_t moved = 0;
  for (IndexNodeId x : moving) {
    if (crowded(logs_[to].size(), holdings_[to])) compact(to);
    moved += nodes_[x].tokens;
    touch(x, to);      // `to` holds it, as its most recent holding (made, or refreshed if it held it already)
    release(x, from);  // and `from` no longer does (the node stays: `to` holds it)
  }
  trim(to);
  return moved;
}

void GlobalPrefixIndex::check_invariants() const {
  std::vector<std::int64_t> held(capacity_.size(), 0);
  for (WorkerId w = 0; w < capacity_.size(); ++w) {
    // The log, most recent first: each live holding of w has exactly one current entry.
    std::vector<IndexNodeId> order;
    const std::vector<LogEntry>& log = logs_[w];
    for (std::size_t k = 0; k < log_head_[w]; ++k)
      SIM_CHECK(!current_by_holder(log[k], w), "worker {}'s log has a current entry before its head", w);
    for (std::size_t k = log_head_[w]; k < log.size(); ++k)
      SIM_CHECK(current(log[k], w) == current_by_holder(log[k], w),
                "worker {}'s stale bit for stamp {} disagrees with its holder", w, log[k].stamp);
    for (const LogEntry& e : top_logs_[w])
      SIM_CHECK(current(e, w) == current_by_holder(e, w), "worker {}'s tops log entry {} disagrees with its holder",
                w, e.stamp);
    SIM_CHECK(stamp_[w] - base_[w] < 64 * stale_[w].size() || stamp_[w] + 1 - base_[w] == 64 * stale_[w].size(),
              "worker {}'s stale bits do not reach its last stamp", w);
    for (std::size_t k = log.size(); k-- > log_head_[w];) {
      if (!current(log[k], w)) continue;
      SIM_CHECK(log[k].stamp <= stamp_[w], "worker {}'s log entry has stamp {} past its last one {}", w,
                log[k].stamp, stamp_[w]);
      order.push_back(log[k].node);
    }
    SIM_CHECK(order.size() == holdings_[w], "worker {} has {} current log entries for {} holdings", w, order.size(),
              holdings_[w]);
    std::vector<IndexNodeId> distinct = order;
    std::sort(distinct.begin(), distinct.end());
    SIM_CHECK(std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end(),
              "worker {}'s log has two current entries for one node", w);
    std::vector<IndexNodeId> tops;
    for (IndexNodeId n : order) {
      const Node& x = nodes_[n];
      SIM_CHECK(x.alive && n != 0, "worker {} holds node {}, which is not alive", w, n);
      held[w] += x.tokens;
      SIM_CHECK(x.parent == 0 || owns(x.parent, w), "worker {} holds node {} but not its parent {}", w, n, x.parent);
      if (x.parent == 0) tops.push_back(n);
    }
    SIM_CHECK(held[w] == held_[w], "worker {} holds {} tokens, tracked {}", w, held[w], held_[w]);
    SIM_CHECK(tops.size() == tops_[w], "worker {} has {} top-level holdings, tracked {}", w, tops.size(), tops_[w]);
    std::vector<IndexNodeId> listed;  // the tops log's current entries, most recent first
    visit_tops(w, [&](IndexNodeId t) { listed.push_back(t); });
    SIM_CHECK(listed == tops, "worker {}'s tops log disagrees with its LRU log", w);
  }
  std::vector<std::size_t> holdings(capacity_.size(), 0);  // every holder has its log entry
  for (IndexNodeId n = 1; n < nodes_.size(); ++n) {
    if (!nodes_[n].alive) continue;
    std::size_t count = 0;
    for_each_holder(nodes_[n], [&](WorkerId k, std::uint32_t) {
      SIM_CHECK(k < capacity_.size(), "index node {} has a holder of worker {}", n, k);
      holdings[k]++;
      ++count;
    });
    SIM_CHECK(count == nodes_[n].holders, "index node {} counts {} holders of {}", n, nodes_[n].holders, count);
  }
  for (WorkerId w = 0; w < capacity_.size(); ++w)
    SIM_CHECK(holdings[w] == holdings_[w], "worker {} is a holder of {} nodes, tracked {}", w, holdings[w],
              holdings_[w]);
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
    SIM_CHECK(ChildIndex::parent_state_ok(x.only_child, x.in_index, x.children),
              "index node {} keeps {} children {}", n, x.children, x.in_index ? "in the index" : "inline");
  }
  SIM_CHECK(live == live_ && children_.size() == indexed, "index node counts disagree");
}

}  // namespace servesim
