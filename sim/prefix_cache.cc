// Radix prefix cache; see prefix_cache.h for the contracts.
#include "sim/prefix_cache.h"

#include <algorithm>
#include <functional>
#include <set>

#include "sim/core/error.h"
#include "sim/kv_tier.h"

namespace servesim {

PrefixCache::PrefixCache(KvPool& kv) : kv_(kv) {
  segs_.emplace_back();
  segs_[0].live = true;
  num_.emplace_back();
}

std::int64_t PrefixCache::block_tokens(const RequestSpec& spec, std::size_t i) {
  const std::int64_t b = spec.prefix_block_size;
  const std::int64_t start = static_cast<std::int64_t>(i) * b;
  return std::clamp<std::int64_t>(spec.prompt_tokens - start, 0, b);
}

const PrefixCache::Block* PrefixCache::block_of(CacheNodeId n) const {
  // A number's entry is rewritten whenever the number is given out, and never when
  // its block is evicted: the block is live iff the slot it names holds it.
  const Pos p = locate(n);
  if (p.seg >= segs_.size()) return nullptr;
  const Seg& s = segs_[p.seg];
  if (!s.live || p.slot < s.lo || p.slot >= s.hi || s.blocks[p.slot].number != n) return nullptr;
  return &s.blocks[p.slot];
}

std::int32_t PrefixCache::lock_count(CacheNodeId n) const {
  const Pos p = locate(n);
  const Seg& s = segs_[p.seg];
  if (n == kCacheRoot || p.slot + 1u == s.hi) return s.locks;
  return s.locks > 0 ? 1 : 0;
}

std::int32_t PrefixCache::child_count(CacheNodeId n) const {
  const Pos p = locate(n);
  const Seg& s = segs_[p.seg];
  if (n == kCacheRoot || p.slot + 1u == s.hi) return s.children;
  return 1;
}

const PrefixCache::Block* PrefixCache::child(Pos& p, BlockHash h) const {
  const Seg& s = segs_[p.seg];
  if (p.seg != 0 && p.slot + 1u < s.hi) {  // inside a segment: the next block is the only child
    const Block& b = s.blocks[p.slot + 1];
    if (b.hash != h) return nullptr;
    ++p.slot;
    return &b;
  }
  const SegId c = children_.find_child(s.tail_number(), h, s.only_child, s.in_index,
                                       [this](SegId x) { return segs_[x].head().hash; });
  if (c == 0) return nullptr;
  p = {c, segs_[c].lo};
  return &segs_[c].head();
}

void PrefixCache::refresh(PrefixMatch& m, const RequestSpec& spec, std::int64_t cap) const {
  if (spec.prefix_blocks.empty() || spec.prefix_block_size <= 0) {
    m = PrefixMatch{};
    m.final = true;
    m.cap = cap;
    return;
  }
  const bool intact = m.cap == cap && holds(m.node, m.generation);
  if (!intact) {
    m = PrefixMatch{};
    m.cap = cap;
  } else if (m.final || segs_[locate(m.node).seg].child_stamp <= m.stamp) {
    return;  // nothing below m.node changed since the last walk
  }
  m.stamp = stamp_;
  m.absent = false;
  Pos p = locate(m.node);
  CacheNodeId n = m.node;
  std::uint32_t generation = m.generation;  // (0 for the root)
  bool partial = false;  // n is the prompt's last block, matched in part (one block past i)
  std::size_t i = static_cast<std::size_t>(m.blocks);
  for (; i < spec.prefix_blocks.size(); ++i) {
    const std::int64_t t = block_tokens(spec, i);
    if (t <= 0) break;
    Pos q = p;
    const Block* c = child(q, spec.prefix_blocks[i]);
    if (c == nullptr) {
      m.absent = true;
      break;
    }
    if (segs_[q.seg].tokens_at(q.slot) != t) break;  // same id, different length: not the same content
    if (m.tokens + t > cap) {
      // The cap (prompt - 1: one token must be computed) stops the match here.
      // In the prompt's last block the match takes the block's first cap - tokens
      // tokens (the node is read, its last token is recomputed); elsewhere it stops
      // before the block (see the header).
      m.final = true;
      if (m.tokens + t == spec.prompt_tokens && cap > m.tokens) {
        n = c->number;
        generation = c->generation;
        m.tokens = cap;
        partial = true;
      }
      break;
    }
    p = q;
    n = c->number;
    generation = c->generation;
    m.tokens += t;
  }
  if (i >= spec.prefix_blocks.size() || block_tokens(spec, i) <= 0) m.final = true;
  m.node = n;
  m.blocks = static_cast<std::int32_t>(i) + (partial ? 1 : 0);  // n's depth: the blocks passed
  m.generation = generation;
}

bool PrefixCache::current(const LruEntry& e) const {
  const Seg& x = segs_[e.seg()];
  if (!x.live || x.hi == x.lo || x.locks != 0 || x.children != 0) return false;
  return x.tail_num == e.id && x.tail_gen == e.generation && x.access == e.at;
}

PrefixCache::LruEntry PrefixCache::entry_of(SegId s) const {
  const Seg& x = segs_[s];
  return {x.access, x.tail_num, x.tail_gen, pack(s, x.hi - 1u), x.parent};
}

void PrefixCache::push_lru(SegId s, bool old) {
  if (lru_.size() - lru_head_ + lru_old_.size() > 2 * live_nodes_ + 1024) {  // mostly stale: keep the live leaves
    drop_popped();
    const auto stale = [this](const LruEntry& e) { return !current(e); };
    std::erase_if(lru_, stale);  // (order kept)
    std::erase_if(lru_old_, stale);
    std::make_heap(lru_old_.begin(), lru_old_.end(), std::greater<>());
    has_parked_ = has_parked_ && current(parked_);
  }
  const LruEntry e = entry_of(s);
  if (old) {
    if (!has_parked_) {
      parked_ = e;
      has_parked_ = true;
      return;
    }
    lru_old_.push_back(e);
    std::push_heap(lru_old_.begin(), lru_old_.end(), std::greater<>());
    return;
  }
  // Sorted insertion from the back: times do not go back, so this stops at once but
  // among entries of the same time (ordered by number).
  lru_.push_back(e);
  for (std::size_t k = lru_.size() - 1; k > lru_head_ && lru_[k - 1] > lru_[k]; --k) std::swap(lru_[k - 1], lru_[k]);
}

inline const PrefixCache::LruEntry* PrefixCache::lru_min() const {
  const LruEntry* q = lru_head_ == lru_.size() ? nullptr : &lru_[lru_head_];
  if (!lru_old_.empty() && (q == nullptr || !(lru_old_.front() > *q))) q = &lru_old_.front();
  if (has_parked_ && (q == nullptr || !(parked_ > *q))) q = &parked_;
  return q;
}

void PrefixCache::maybe_evictable(SegId s) {
  const Seg& x = segs_[s];
  if (s != 0 && x.live && x.locks == 0 && x.children == 0 && x.hi > x.lo) push_lru(s);
}

// Access times. Per node the rule is: a stamp sets a node's time to now (no time
// is later), an evicted leaf passes its time to its parent (max), and eviction reads
// only leaves' times. So what a block's time is when it becomes a leaf is the
// largest of its own and those of every block below it. A segment keeps one time,
// `access`, for its tail, and its other blocks none; with E the largest time its
// child segments pass up (none for a leaf segment), every block of the segment gets
// max(access, E) when it becomes a leaf, the same for all, which is right as long as
// no block inside the segment was stamped after its tail. So stamping an inner block
// splits the segment there first (touch, lock), and
// - a block appended below the tail (stamped now) is the new tail: access = now;
// - evicting the tail leaves `access` as it is (the new tail takes the max of its
//   own and the evicted one's, which is `access`);
// - an emptied segment passes `access` up to its parent's (max), as a leaf does;
// - a split's head part takes `access`: the head's tail's own time may have been
//   earlier, but it becomes a leaf only after the rest of the segment (whose time is
//   `access` or later) has passed its time up.
// A leaf segment's `access` is then its tail's exact time.
void PrefixCache::touch(Pos& p, Time now) {
  if (p.slot + 1u != segs_[p.seg].hi) split(p);  // only a tail keeps a time
  Seg& s = segs_[p.seg];
  if (s.access == now) return;
  s.access = now;
  maybe_evictable(p.seg);
}

// Locks and access times are kept lazily (see the header): the walk goes up only
// while a segment's lockedness changes, and only the path's deepest block takes
// `now`; its ancestors receive it through evict_tail when they become leaves.
std::uint32_t PrefixCache::lock(CacheNodeId n, Time now) {
  if (n == kCacheRoot) return 0;
  Pos p = locate(n);
  if (p.slot + 1u != segs_[p.seg].hi) split(p);  // a lock ends at a segment's tail
  segs_[p.seg].access = now;
  const std::uint32_t where = pack(p.seg, p.slot);  // (after the split: where n stays while locked)
  for (SegId s = p.seg; s != 0; s = segs_[s].parent) {
    Seg& x = segs_[s];
    if (x.locks++ > 0) break;  // was locked already: its parent's count is unchanged
    locked_pages_ += x.pages;  // its eviction entry goes stale
  }
  return where;
}

void PrefixCache::unlock(CacheNodeId n, Time now, std::uint32_t where) {
  if (n == kCacheRoot) return;
  // A locked block stays where it was when locked (splits move the blocks before
  // a lock end, appends go to unlocked leaves only), so the hint is right when the
  // live tail there is n (numbers are unique among live blocks); else the table says.
  // Only headers are read: a lock ends at a tail, which the header names. The walk
  // goes up a path that is often cold (a request unlocks it when it finishes): each
  // segment's parent is fetched while the segment is updated.
  Pos p = unpack(where);
  const bool hinted = where != 0 && p.seg < segs_.size() && segs_[p.seg].live && p.slot + 1u == segs_[p.seg].hi &&
                      segs_[p.seg].tail_num == n;
  if (!hinted) p = locate(n);
  SIM_CHECK(p.slot + 1u == segs_[p.seg].hi, "prefix cache node {} unlocked where no lock ends", n);
  segs_[p.seg].access = now;
  for (SegId s = p.seg; s != 0;) {
    Seg& x = segs_[s];
    __builtin_prefetch(&segs_[x.parent]);
    SIM_CHECK(x.locks > 0, "prefix cache node {} unlocked more often than locked", x.tail_number());
    if (--x.locks > 0) return;  // still locked: its parent's count is unchanged
    locked_pages_ -= x.pages;
    maybe_evictable(s);
    s = x.parent;
  }
}

PrefixCache::SegId PrefixCache::new_seg() {
  SegId s;
  if (!free_segs_.empty()) {
    s = free_segs_.back();
    free_segs_.pop_back();
  } else {
    s = static_cast<SegId>(segs_.size());
    SIM_CHECK(s < (1u << (32 - kSlotBits)), "prefix cache: too many segments");
    segs_.emplace_back();
  }
  // The header only: a reused segment's blocks are dead until written (lo == hi),
  // and writing all of Seg{} would touch its block lines for nothing.
  Seg& x = segs_[s];
  x.child_stamp = 0;
  x.pages = 0;
  x.access = 0;
  x.parent = 0;
  x.locks = 0;
  x.children = 0;
  x.only_child = 0;
  x.tok = x.tail_tok = 0;
  x.tail_num = kCacheRoot;
  x.tail_gen = 0;
  x.lo = x.hi = 0;
  x.in_index = false;
  x.live = true;
  return s;
}

void PrefixCache::split(Pos& p) {
  const SegId h = new_seg();  // (may move segs_: references taken after)
  Seg& s = segs_[p.seg];
  Seg& head = segs_[h];
  const unsigned count = p.slot - s.lo + 1;
  for (unsigned k = 0; k < count; ++k) {  // (inner blocks of s: s.tok tokens each)
    const Block& b = s.blocks[s.lo + k];
    head.blocks[k] = b;
    place(b.number, h, k);
  }
  head.pages = static_cast<std::int64_t>(count) * pages_of(s.tok);
  head.tok = head.tail_tok = s.tok;
  // Its tail's time: s's. The tail's own time may have been earlier, but it is read
  // only once the tail is a leaf, when s's (which only grows) has been passed up.
  head.access = s.access;
  head.tail_num = head.blocks[count - 1].number;
  head.tail_gen = head.blocks[count - 1].generation;
  head.lo = 0;
  head.hi = static_cast<std::uint8_t>(count);
  head.parent = s.parent;
  head.child_stamp = s.child_stamp;  // nothing below its blocks changed
  head.locks = s.locks > 0 ? 1 : 0;  // its only child, s, is locked or not; no lock ends in it
  head.children = 1;
  head.only_child = p.seg;
  // The parent's child that starts with this hash is now `head`.
  Seg& parent = segs_[s.parent];
  const BlockHash first = head.blocks[0].hash;
  if (parent.in_index) {
    children_.replace(parent.tail_number(), first, h);
  } else {
    SIM_CHECK(parent.only_child == p.seg, "prefix cache segment {} is not its parent's child", p.seg);
    parent.only_child = h;
  }
  s.pages -= head.pages;
  s.parent = h;
  s.lo = static_cast<std::uint8_t>(s.lo + count);
  p = {h, count - 1};
}

inline PrefixCache::FreeNumber PrefixCache::draw_number() {
  if (free_.empty()) {
    num_.emplace_back();
    return {static_cast<CacheNodeId>(num_.size() - 1), 1};
  }
  const FreeNumber f = free_.back();
  free_.pop_back();
  return {f.number, f.generation + 1};
}

inline void PrefixCache::put_block(Pos p, const Block& b, std::int32_t tokens) {
  Seg& x = segs_[p.seg];
  x.tok = p.slot > x.lo ? x.tail_tok : tokens;  // the old tail, if any, is an inner block now
  x.tail_tok = tokens;
  x.blocks[p.slot] = b;
  x.tail_num = b.number;
  x.tail_gen = b.generation;
  x.hi = static_cast<std::uint8_t>(p.slot + 1);
  place(b.number, p.seg, p.slot);
}

PrefixCache::Pos PrefixCache::new_block(Pos at, BlockHash h, std::int64_t tokens, Time now) {
  const auto [id, gen] = draw_number();
  if (at.seg != 0 && at.slot + 1u != segs_[at.seg].hi) split(at);  // a child below a block inside a segment
  Pos p;
  {
    const Seg& s = segs_[at.seg];
    if (at.seg != 0 && s.children == 0 && s.locks == 0 && s.hi < kSegBlocks && s.extends_with_tail()) {
      p = {at.seg, s.hi};  // the chain goes on in the same segment
    } else {
      const SegId c = new_seg();  // (may move segs_)
      Seg& x = segs_[c];
      x.parent = at.seg;
      Seg& parent = segs_[at.seg];
      children_.add_child(parent.tail_number(), h, c, parent.only_child, parent.in_index,
                          [this](SegId y) { return segs_[y].head().hash; });
      parent.children++;
      p = {c, 0};
    }
  }
  segs_[at.seg].child_stamp = ++stamp_;
  Seg& x = segs_[p.seg];
  put_block(p, Block{h, id, gen}, static_cast<std::int32_t>(tokens));  // (tokens <= the spec's block size)
  x.access = now;  // the new tail's time (a block before it in x had no later one)
  const std::int64_t pages = pages_of(static_cast<std::int32_t>(tokens));
  SIM_CHECK(kv_.try_alloc(pages), "prefix cache insert of {} pages does not fit ({} free)", pages, kv_.free());
  x.pages += pages;
  pages_ += pages;
  ++live_nodes_;
  return p;
}

// Blocks [i, end) of `spec`, each below the one before, from `at`, the tail of an
// unlocked leaf segment (the block this insert added first): new_block's effect
// block by block, without the cases that cannot arise, and the pages allocated at
// once at the end (nothing reads the pool in between). Adds their tokens to `tokens`.
PrefixCache::Pos PrefixCache::append_run(Pos at, const RequestSpec& spec, std::size_t i, std::size_t end,
                                         std::int64_t& tokens, Time now) {
  {
    const Seg& s = segs_[at.seg];
    SIM_CHECK(at.seg != 0 && at.slot + 1u == s.hi && s.children == 0 && s.locks == 0,
              "prefix cache blocks appended below a non-leaf");
  }
  std::int64_t run_pages = 0, seg_pages = 0;
  for (; i < end; ++i) {
    const auto t = static_cast<std::int32_t>(block_tokens(spec, i));
    const auto [id, gen] = draw_number();
    Pos p{at.seg, at.slot + 1u};
    if (p.slot == kSegBlocks || !segs_[at.seg].extends_with_tail()) {
      // Full, or its tail (a short block) cannot become an inner block: the next
      // block opens its only child segment.
      segs_[at.seg].pages += seg_pages;
      seg_pages = 0;
      const SegId c = new_seg();  // (may move segs_)
      Seg& parent = segs_[at.seg];
      parent.only_child = c;  // (it had no child: add_child's inline case)
      parent.children = 1;
      segs_[c].parent = at.seg;
      segs_[c].access = now;  // (every segment this run writes has this time: new_block set at's)
      p = {c, 0};
    }
    segs_[at.seg].child_stamp = ++stamp_;
    put_block(p, Block{spec.prefix_blocks[i], id, gen}, t);
    const std::int64_t pages = pages_of(t);
    seg_pages += pages;
    run_pages += pages;
    ++live_nodes_;
    tokens += t;
    at = p;
  }
  segs_[at.seg].pages += seg_pages;
  SIM_CHECK(kv_.try_alloc(run_pages), "prefix cache insert of {} pages does not fit ({} free)", run_pages, kv_.free());
  pages_ += run_pages;
  return at;
}

PrefixCache::InsertResult PrefixCache::insert(const RequestSpec& spec, const PrefixMatch& from, std::int64_t kv_tokens,
                                              std::int64_t page_budget, Time now) {
  InsertResult best{from.node, from.tokens, from.blocks, kv_.pages_for(kv_tokens - from.tokens)};
  if (spec.prefix_blocks.empty() || spec.prefix_block_size <= 0) return best;
  // Plan: walk existing blocks, then count the pages of new ones; keep the
  // longest prefix whose total fits the budget.
  std::int64_t new_pages = 0, tokens = from.tokens;
  Pos p = locate(from.node);
  std::size_t i = static_cast<std::size_t>(from.blocks), best_end = i;
  plan_.clear();
  bool existing = true;
  if (from.absent)  // the memo's walk found no child for the next block: still so if nothing was added below
    existing = !(holds(from.node, from.generation) && segs_[p.seg].child_stamp <= from.stamp);
  const std::size_t nb = spec.prefix_blocks.size();
  for (; existing && i < nb; ++i) {  // the blocks already cached: no new pages
    const std::int64_t t = block_tokens(spec, i);
    if (t <= 0) break;
    Pos q = p;
    const Block* c = child(q, spec.prefix_blocks[i]);
    if (c == nullptr) {
      existing = false;
      break;
    }
    // A different block under the same id: nothing below is shared (no new ones).
    if (segs_[q.seg].tokens_at(q.slot) != t) break;
    p = q;
    plan_.push_back(p);
    tokens += t;
    const std::int64_t priv = kv_.pages_for(kv_tokens - tokens);
    if (priv <= page_budget) {
      best_end = i + 1;
      best.private_pages = priv;
    }
  }
  const std::size_t first_new = i;
  if (!existing) {
    // The new blocks: each adds its pages and takes its tokens off the private
    // share, which never lowers the total (ceil(a) + ceil(b) >= ceil(a + b)), so
    // the first one that does not fit ends the plan.
    for (; i < nb; ++i) {
      const std::int64_t t = block_tokens(spec, i);
      if (t <= 0) break;
      new_pages += kv_.pages_for(t);
      tokens += t;
      const std::int64_t priv = kv_.pages_for(kv_tokens - tokens);
      if (new_pages + priv > page_budget) break;
      best_end = i + 1;
      best.private_pages = priv;
    }
  }
  // Apply: reuse or create up to best_end. The existing blocks on the path are
  // accessed now; only the deepest one is touched, as lock() does: its ancestors are
  // not leaves, and receive the time when they become leaves (see Locking).
  p = locate(from.node);
  tokens = from.tokens;
  i = static_cast<std::size_t>(from.blocks);
  for (; i < best_end && i < first_new; ++i) tokens += block_tokens(spec, i);  // the existing blocks
  if (i > static_cast<std::size_t>(from.blocks)) {
    p = plan_[i - 1 - static_cast<std::size_t>(from.blocks)];
    touch(p, now);  // (may split p's segment: p follows the block)
  }
  if (i < best_end) {  // the new ones: the first below p, the rest each below the one before
    const std::int64_t t = block_tokens(spec, i);
    p = new_block(p, spec.prefix_blocks[i], t, now);  // (its access time is now: no touch)
    tokens += t;
    if (i + 1 < best_end) p = append_run(p, spec, i + 1, best_end, tokens, now);
  }
  best.node = p.seg == 0 ? kCacheRoot : segs_[p.seg].blocks[p.slot].number;
  best.tokens = tokens;
  best.blocks = static_cast<std::int32_t>(best_end);  // the node's depth
  return best;
}

PrefixCache::SegId PrefixCache::evict_tail(SegId s, std::int64_t want, const LruEntry* bound) {
  Seg& x = segs_[s];
  SIM_CHECK(s != 0 && x.live && x.locks == 0 && x.children == 0 && x.hi > x.lo,
            "evicting prefix cache segment {} that is locked or not a leaf", s);
  // x.access stays: each block that becomes the tail takes the evicted one's time
  // (the lazily kept times move up), which is x's (see "Access times"). The tail's
  // number, generation and tokens are the header's; each block before it is read
  // when it becomes the tail.
  for (;;) {
    if (evict_hook_) evict_hook_(path_key(x.tail_num), x.tail_tok);
    const std::int64_t pages = pages_of(x.tail_tok);
    kv_.release(pages);
    pages_ -= pages;
    x.pages -= pages;
    evicted_pages_ += pages;
    ++evicted_nodes_;
    --live_nodes_;
    free_.push_back({x.tail_num, x.tail_gen});
    --x.hi;
    if (x.hi == x.lo) break;
    // The block before it is the tail now: an unlocked leaf.
    const Block& t = x.blocks[x.hi - 1];
    x.tail_tok = x.tok;
    x.tail_num = t.number;
    x.tail_gen = t.generation;
    // It goes next, with no trip through make_room, when room is still wanted and
    // it sorts before every queued entry (make_room's own test).
    if (kv_.free() >= want || (bound != nullptr && !(*bound > LruEntry{x.access, t.number, 0, 0, 0}))) return s;
  }
  // The segment is empty: it leaves its parent (its head block's fields are intact
  // past hi, the key it is kept under).
  const SegId ps = x.parent;
  Seg& p = segs_[ps];
  children_.remove_child(p.tail_number(), x.head().hash, p.children, p.only_child, p.in_index);
  p.children--;
  x.live = false;
  x.tail_num = kCacheRoot;
  x.tail_gen = 0;
  free_segs_.push_back(s);
  if (ps == 0) return 0;
  p.access = std::max(p.access, x.access);  // the lazily kept access time moves up
  if (p.locks == 0 && p.children == 0) {
    // Its ancestors' segments go next when it empties too: fetch ahead.
    prefetch_seg(p.parent);
    return ps;
  }
  return 0;
}

// A tail that an eviction left an unlocked leaf is queued, unless more room is
// needed and it sorts before the heap's smallest entry: then it is the least
// recently used unlocked leaf (every current entry is at or after that top) and
// goes next without a trip through the heap (a path evicted from its leaf up).
bool PrefixCache::make_room(std::int64_t pages) {
  SegId next = 0;  // the next victim's segment, known without the heap
  while (kv_.free() < pages) {
    if (next == 0) {
      const LruEntry* m = lru_min();
      if (m == nullptr) break;
      LruEntry e;
      bool from_parked = false;
      if (m == &parked_) {
        e = parked_;
        has_parked_ = false;
        from_parked = true;
      } else if (!lru_old_.empty() && m == lru_old_.data()) {
        std::pop_heap(lru_old_.begin(), lru_old_.end(), std::greater<>());
        e = lru_old_.back();
        lru_old_.pop_back();
      } else {
        e = lru_[lru_head_++];
        if (lru_head_ > 4096 && 2 * lru_head_ > lru_.size()) drop_popped();
      }
      // This victim's parent is read when its segment empties, and the next
      // candidates' segments next: fetch them while this one is checked and evicted,
      // so the misses overlap (the LRU end of the cache is cold). The queue's next
      // entry's parent too: asked for only when its entry is popped, the parent's
      // header would still be on its way when evict_tail reads it. A victim taken
      // from parked_ (a make_room's small next bite, the common case) leaves the
      // queues' fronts as they were when the pop that parked it fetched them: they
      // are not fetched again (doing so cost more than it saved).
      prefetch_seg(e.parent);
      if (!from_parked) {
        if (lru_head_ < lru_.size()) {
          prefetch_seg(lru_[lru_head_].seg());
          prefetch_seg(lru_[lru_head_].parent);
        }
        if (lru_head_ + 1 < lru_.size()) prefetch_seg(lru_[lru_head_ + 1].seg());
        if (!lru_old_.empty()) prefetch_seg(lru_old_.front().seg());
      }
      if (!current(e)) continue;
      next = e.seg();
    }
    const LruEntry* m = lru_min();  // (evict_tail changes no queue: still the front after it)
    const SegId cand = evict_tail(next, pages, m);
    next = 0;
    if (cand == 0) continue;
    const LruEntry pe = entry_of(cand);
    if (kv_.free() < pages && (m == nullptr || *m > pe))
      next = cand;
    else
      push_lru(cand, true);
  }
  return kv_.free() >= pages;
}

std::vector<CacheNodeId> PrefixCache::live_nodes() const {
  std::vector<CacheNodeId> out;
  for (CacheNodeId n = 1; n < num_.size(); ++n)
    if (block_of(n) != nullptr) out.push_back(n);
  return out;
}

bool PrefixCache::holds(CacheNodeId n, std::uint32_t generation) const {
  if (n == kCacheRoot) return generation == 0;  // (the root's generation is 0)
  const Block* b = block_of(n);
  return b != nullptr && b->generation == generation;
}

std::vector<PrefixCache::PathBlock> PrefixCache::path_to(CacheNodeId n) const {
  std::vector<PathBlock> path;
  for (Pos p = locate(n); p.seg != 0;) {
    const Seg& s = segs_[p.seg];
    for (unsigned k = p.slot + 1; k-- > s.lo;) path.push_back({&s.blocks[k], s.tokens_at(k)});
    p = s.parent == 0 ? Pos{} : Pos{s.parent, segs_[s.parent].hi - 1u};
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::uint64_t PrefixCache::path_key(CacheNodeId n) const {
  std::uint64_t key = 0;
  for (const PathBlock& b : path_to(n)) key = tier_block_key(key, b.block->hash, b.tokens);
  return key;
}

std::vector<BlockHash> PrefixCache::path_blocks(CacheNodeId n) const {
  std::vector<BlockHash> out;
  for (const PathBlock& b : path_to(n)) out.push_back(b.block->hash);
  return out;
}

std::int64_t PrefixCache::path_tokens(CacheNodeId n) const {
  std::int64_t tokens = 0;
  for (const PathBlock& b : path_to(n)) tokens += b.tokens;
  return tokens;
}

void PrefixCache::check_invariants() const {
  std::vector<std::int32_t> locked_children(segs_.size(), 0), children(segs_.size(), 0);
  std::int64_t pages = 0, locked = 0;
  std::size_t leaves = 0, live = 0, indexed = 0;
  const auto hash_of = [this](SegId c) { return segs_[c].head().hash; };
  for (SegId s = 1; s < segs_.size(); ++s) {
    const Seg& x = segs_[s];
    if (!x.live) continue;
    SIM_CHECK(x.hi > x.lo && x.hi <= kSegBlocks, "segment {} is empty or overfull", s);
    SIM_CHECK(segs_[x.parent].live, "segment {} has a dead parent {}", s, x.parent);
    children[x.parent]++;
    if (x.locks > 0) locked_children[x.parent]++;
    std::int64_t seg_pages = 0;
    SIM_CHECK(x.tail_tok > 0 && (x.hi - x.lo == 1 || x.tok > 0), "segment {} keeps no tokens", s);
    for (unsigned k = x.lo; k < x.hi; ++k) {
      const Block& b = x.blocks[k];
      ++live;
      seg_pages += kv_.pages_for(x.tokens_at(k));
      const Pos at = locate(b.number);
      SIM_CHECK(at.seg == s && at.slot == k, "node {} is not where its number says", b.number);
      SIM_CHECK(k + 1u != x.hi || (x.tail_num == b.number && x.tail_gen == b.generation),
                "segment {} keeps another tail than node {}", s, b.number);
    }
    SIM_CHECK(seg_pages == x.pages, "segment {} pages {} != {}", s, x.pages, seg_pages);
    pages += seg_pages;
    if (x.locks > 0) locked += seg_pages;
    const Seg& p = segs_[x.parent];
    SIM_CHECK(children_.child_kept(p.tail_number(), x.head().hash, s, p.only_child, p.in_index, hash_of),
              "segment {} is not found, or not kept where its parent's state says", s);
    if (p.in_index) ++indexed;
  }
  for (SegId s = 0; s < segs_.size(); ++s) {
    const Seg& x = segs_[s];
    if (!x.live) continue;
    SIM_CHECK(x.children == children[s], "segment {} child count {} != {}", s, x.children, children[s]);
    SIM_CHECK(ChildIndex::parent_state_ok(x.only_child, x.in_index, x.children),
              "segment {} keeps {} children {}", s, x.children, x.in_index ? "in the index" : "inline");
    SIM_CHECK(s == 0 || x.locks >= locked_children[s],  // (the root keeps no count)
              "segment {} counts {} locks for {} locked children (path locking broken)", s, x.locks,
              locked_children[s]);
    if (s != 0 && x.locks == 0 && x.children == 0) ++leaves;
  }
  SIM_CHECK(segs_[0].locks == 0, "the root is locked");
  std::set<CacheNodeId> queued;
  for (std::size_t k = lru_head_; k < lru_.size(); ++k) {
    SIM_CHECK(k == lru_head_ || !(lru_[k - 1] > lru_[k]), "the eviction queue is out of order at {}", k);
    if (current(lru_[k])) queued.insert(lru_[k].id);
  }
  for (const LruEntry& e : lru_old_)
    if (current(e)) queued.insert(e.id);
  if (has_parked_ && current(parked_)) queued.insert(parked_.id);
  SIM_CHECK(leaves == queued.size(), "eviction heap holds {} current entries for {} unlocked leaves", queued.size(),
            leaves);
  SIM_CHECK(pages == pages_ && locked == locked_pages_, "page sums {} / {} != tracked {} / {}", pages, locked, pages_,
            locked_pages_);
  SIM_CHECK(live == live_nodes_ && children_.size() == indexed, "node counts disagree");
}

}  // namespace servesim
