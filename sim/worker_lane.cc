// The decode lane of a Worker (worker.h, "Decode lane"): its members' values
// are affine in the worker's step counter steps_, so a pure decode step is a
// pass over a few integer arrays instead of one RequestHot line per request.
// A member that joined at steps_ = b with its hot state current has, at
// steps_ = s: generated = hot.generated + (s - b) (deferred; lane_flush writes
// it back), the context of its next step ln_cb_ + s, the private tokens after
// that step tb + s (its pages are a function of s too, given as one count per
// step: the page calendar, worker.h), and it finishes with the step that makes
// steps_ == ln_fin_. The dense decode pricer's sums over the members' contexts
// are kept as they join and leave (lane_sums_to).
// Every function keeps schedule_decodes' and finish_iteration's order of policy
// calls and finishes (member order = running order), and the outcome of their
// KV allocations in that order (a step's pages as one count give the same pages
// and evictions: lane_pages_due).
#include <algorithm>
#include <limits>

#include "sim/worker.h"

namespace servesim {

namespace {
constexpr auto kSplit = static_cast<std::uint64_t>(kDecodeSplitTokenCount);
// A member's splits term at step s: decode_split_count of its context cb + s
// (>= 0 from the step a member joins).
std::int64_t lane_split_term(std::int64_t cb, std::int64_t s) {
  return static_cast<std::int64_t>(decode_split_count(static_cast<std::uint64_t>(cb + s)));
}
// The residue r with (cb + t) % S == 0 exactly when t % S == r.
std::size_t lane_split_residue(std::int64_t cb) {
  return static_cast<std::size_t>((std::uint64_t{0} - static_cast<std::uint64_t>(cb)) & (kSplit - 1));
}
}  // namespace

void Worker::lane_sums_to(std::int64_t s) {
  const std::uint32_t* due = lane_split_due_.data();
  for (std::int64_t t = lane_splits_at_ + 1; t <= s; ++t)
    lane_splits_ += due[static_cast<std::uint64_t>(t) & (kSplit - 1)];
  lane_splits_at_ = std::max(lane_splits_at_, s);
}

bool Worker::lane_add(std::size_t pos, std::uint32_t i, std::int64_t b) {
  const RequestHot& r = hot_[i];
  const std::int64_t page_size = kv().page_size();
  // The page test multiplies pages by the page size (schedule_decodes' bound).
  if (r.kv_pages < 0 || r.kv_pages > lane_max_exact_) return false;
  const std::int64_t tb = private_tokens_after_step(r) - b;
  const auto at = [pos](auto& v) { return v.begin() + static_cast<std::ptrdiff_t>(pos); };
  const std::int64_t fin = b + r.output_tokens - r.generated;
  const std::int64_t cb = kv_tokens(r) - 1 - b;
  const std::int64_t pg0 = r.kv_pages * page_size - tb + 1;
  // Due at this very step (late: lane_pages_due gives its catch-up and then counts
  // it), counted from now (its next step = pg0 mod P is pg0 itself), or a whole
  // page or more ahead (counted from the step after pg0 - P).
  const PageState state = pg0 <= b                ? PageState::kNow
                          : pg0 - b < page_size ? PageState::kActive
                                                : PageState::kPending;
  std::uint32_t c;  // its calendar slot
  if (sl_free_.empty()) {
    c = static_cast<std::uint32_t>(lane_slots_.size());
    lane_slots_.push_back(LaneSlot{pg0, r.kv_pages, b, state});
  } else {
    c = sl_free_.back();
    sl_free_.pop_back();
    lane_slots_[c] = LaneSlot{pg0, r.kv_pages, b, state};
  }
  if (state == PageState::kNow)
    lane_now_.push_back(c);
  else if (state == PageState::kActive)
    ++lane_due_count_[lane_residue(pg0)];
  else
    lane_pending_.emplace_back(pg0 - page_size + 1, c);
  ln_b_.insert(at(ln_b_), b);
  ln_fin_.insert(at(ln_fin_), fin);
  ln_cb_.insert(at(ln_cb_), cb);
  ln_slot_.insert(at(ln_slot_), c);
  lane_sums_to(b);  // (b is steps_: the sums are as of the step it joins at)
  lane_cb_sum_ += cb;
  if (!lane_cb_max_stale_) lane_cb_max_ = std::max(lane_cb_max_, cb);
  lane_splits_ += lane_split_term(cb, b);
  ++lane_split_due_[lane_split_residue(cb)];
  ln_client_.insert(at(ln_client_), r.client);
  items_.insert(at(items_), Item{1, i, false});
  lane_min_fin_ = std::min(lane_min_fin_, fin);
  if (lane_slot_.size() <= r.client) lane_slot_.resize(r.client + std::size_t{1}, 0);
  std::uint32_t& slot = lane_slot_[r.client];
  if (slot == 0) {
    lane_clients_.emplace_back(r.client, 0);
    slot = static_cast<std::uint32_t>(lane_clients_.size());
  }
  ++lane_clients_[slot - 1].second;
  return true;
}

// A member of client c left: its count drops; a client without members left
// loses its entry (the last entry takes its place: the order stays deterministic).
void Worker::lane_client_left(ClientId c) {
  std::uint32_t& slot = lane_slot_[c];
  auto& e = lane_clients_[slot - 1];
  if (--e.second > 0) return;
  e = lane_clients_.back();
  lane_slot_[e.first] = slot;
  slot = 0;
  lane_clients_.pop_back();
}

bool Worker::lane_build() {
  ln_b_.clear();
  ln_fin_.clear();
  ln_cb_.clear();
  ln_slot_.clear();
  ln_client_.clear();
  lane_slots_.clear();
  sl_free_.clear();
  lane_now_.clear();
  lane_pending_.clear();
  lane_due_count_.assign(static_cast<std::size_t>(kv().page_size()), 0);  // (<= kLaneMaxPageSize: the constructor)
  lane_max_exact_ = max_exact_pages();
  lane_paged_ = -1;
  lane_mod_ = 0;
  lane_pages_written_ = false;
  items_.clear();
  lane_joins_.clear();
  for (const auto& e : lane_clients_) lane_slot_[e.first] = 0;
  lane_clients_.clear();
  lane_min_fin_ = std::numeric_limits<std::int64_t>::max();
  steps_ = 0;
  lane_cb_sum_ = lane_splits_ = lane_splits_at_ = 0;
  lane_cb_max_ = std::numeric_limits<std::int64_t>::min();
  lane_cb_max_stale_ = false;
  lane_split_due_.assign(static_cast<std::size_t>(kSplit), 0);
  for (std::size_t i = 0; i < running_.size(); ++i) {
    if (hot_[i].phase != Phase::kDecode) continue;
    if (!lane_add(lane_size(), static_cast<std::uint32_t>(i), 0)) {
      items_.clear();  // the members added so far put their items in the batch: schedule_decodes starts afresh
      return false;
    }
  }
  lane_on_ = true;
  return true;
}

void Worker::lane_flush() {
  write_lane_contexts();  // while the members' bases and steps_ still give them
  if (!lane_on_) return;
  for (std::size_t j = 0; j < lane_size(); ++j) {
    RequestHot& r = hot_[items_[j].i];
    r.generated += steps_ - ln_b_[j];
    if (!lane_pages_written_) r.kv_pages = lane_pages_held(ln_slot_[j]);
  }
  lane_on_ = false;
  lane_scheduled_ = false;
  lane_joins_.clear();
  lane_accepted_.clear();
}

// lane_schedule gives up: the lane is flushed and its items leave the batch
// being built (schedule_decodes redoes the decode pass from the start).
void Worker::lane_abandon() {
  lane_flush();
  items_.clear();
  shape_.decode_contexts.clear();
}

// Running requests that became decoding since the lane was built join it, in
// running order, as of steps_ now (their hot state is current).
bool Worker::lane_join(const std::vector<std::uint32_t>& indices) {
  for (std::uint32_t i : indices) {
    const auto pos = static_cast<std::size_t>(
        std::upper_bound(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(lane_size()), i,
                         [](std::uint32_t x, const Item& it) { return x < it.i; }) -
        items_.begin());
    if (!lane_add(pos, i, steps_)) {
      lane_flush();
      return false;
    }
  }
  return true;
}

// Hand-offs accepted since the last iteration (at the back of the running set,
// found by handle: the running set may have been compacted since).
bool Worker::lane_take_accepted() {
  if (lane_accepted_.empty()) return true;
  std::vector<std::uint32_t> idx;
  for (RequestHandle h : lane_accepted_) {
    const std::size_t i = index_of(h);
    SIM_CHECK(i < running_.size() && hot_[i].phase == Phase::kDecode,
              "worker {}: an accepted hand-off left the running set before joining the decode lane", id_);
    idx.push_back(static_cast<std::uint32_t>(i));
  }
  lane_accepted_.clear();
  std::sort(idx.begin(), idx.end());
  return lane_join(idx);
}

// This iteration's decode items from the lane: every member, in running order,
// as schedule_decodes adds them. A member whose step needs pages gets them
// here, in member order (schedule_decodes' order); if the pool cannot give
// them, the lane is flushed and schedule_decodes redoes the pass from the start
// (the pages given so far are held, so it allocates nothing twice, and a failed
// allocation left nothing evictable: the same outcome).
bool Worker::lane_schedule() {
  if (!lane_accepted_.empty() && !lane_take_accepted()) {  // (flushed)
    lane_abandon();
    return false;
  }
  const std::size_t n = lane_size();
  if (static_cast<std::int64_t>(n) > budget_) {
    lane_abandon();
    return false;
  }
  if (!lane_pages_due()) {
    lane_abandon();
    return false;
  }
  const std::int64_t s = steps_;
  // The first pass of the iteration: the contexts are the lane's alone (left from
  // the last iteration by start_iteration, so resizing fills at most the growth).
  shape_.decode_contexts.resize(n);
  contexts_due_ = true;  // the values: now, or when someone reads them (worker.h)
  contexts_step_ = s;
  if (!lane_elides_contexts_) write_lane_contexts();
  const std::int64_t* cb = ln_cb_.data();
  if (lane_cb_max_stale_) {  // the longest member left: one pass (rare; a base may be negative)
    lane_cb_max_ = std::numeric_limits<std::int64_t>::min();
    for (std::size_t j = 0; j < n; ++j) lane_cb_max_ = std::max(lane_cb_max_, cb[j]);
    lane_cb_max_stale_ = false;
  }
  // The dense decode pricer's sums (batch_shape.h): Σ (context + 1), the splits, the longest.
  lane_sums_to(s);
  const auto kv = static_cast<std::uint64_t>(lane_cb_sum_) + static_cast<std::uint64_t>(s) * n + n;
  shape_.decode_sums = BatchShape::DecodeSums{static_cast<std::int64_t>(kv), lane_splits_, n > 0 ? lane_cb_max_ + s + 1 : 0};
  budget_ -= static_cast<std::int64_t>(n);
  lane_scheduled_ = true;
  return true;
}

// This step's pages (worker.h, "Page calendar"): the active members whose
// step it is, and the late joiners' catch-up, as one allocation when it cannot
// fail (the pool's free pages and the cache's unlocked ones cover it: then the
// cache evicts the same leaves as member-by-member allocations would, the
// least recently used until the total is free). Otherwise the step cannot be
// given: the members' pages are written back and the step's are allocated
// member by member, in member order (schedule_decodes' order), until one
// fails; false (the caller abandons the lane; the pages given are kept, so
// schedule_decodes allocates nothing twice and finds the same shortage).
bool Worker::lane_pages_due() {
  const std::int64_t s = steps_;
  if (!lane_pending_.empty()) {
    std::erase_if(lane_pending_, [&](const std::pair<std::int64_t, std::uint32_t>& e) {
      if (e.first > s) return false;
      LaneSlot& d = lane_slots_[e.second];
      if (d.pg0 <= s) {  // due now (a page size of 1): given with the late joiners
        d.state = PageState::kNow;
        lane_now_.push_back(e.second);
      } else {
        d.state = PageState::kActive;
        ++lane_due_count_[lane_residue(d.pg0)];
      }
      return true;
    });
  }
  // The count once per step (an empty iteration leaves steps_ as it was, and the
  // next one asks again), and the late joiners' catch-up.
  std::int64_t total = s > lane_paged_ ? lane_due_count_[static_cast<std::size_t>(lane_mod_)] : 0;
  for (std::uint32_t c : lane_now_) total += lane_pages_target(c, s) - lane_slots_[c].base;
  if (total <= kv().free() + cache().evictable_pages()) {
    if (total > 0)
      SIM_CHECK(kvm_.alloc(total), "worker {}: the decode lane's {} pages did not fit in {} free and {} evictable",
                id_, total, kv().free(), cache().evictable_pages());
    for (std::uint32_t c : lane_now_) {  // caught up: one page per step from here, at its residue
      lane_slots_[c].state = PageState::kActive;
      ++lane_due_count_[lane_residue(lane_slots_[c].pg0)];
    }
    lane_now_.clear();
    lane_paged_ = std::max(lane_paged_, s);
    return true;
  }
  for (std::size_t j = 0; j < lane_size(); ++j) hot_[items_[j].i].kv_pages = lane_pages_held(ln_slot_[j]);
  lane_pages_written_ = true;
  for (std::size_t j = 0; j < lane_size(); ++j) {
    RequestHot& r = hot_[items_[j].i];
    const std::int64_t need = lane_pages_target(ln_slot_[j], s) - r.kv_pages;
    if (need == 0) continue;
    if (!kvm_.alloc(need)) return false;
    r.kv_pages += need;
  }
  SIM_CHECK(false, "worker {}: the decode lane's {} pages were given although only {} were free or evictable", id_,
            total, kv().free() + cache().evictable_pages());
  return false;
}

void Worker::lane_slot_free(std::uint32_t c) {
  const LaneSlot& d = lane_slots_[c];
  if (d.state == PageState::kActive) {
    --lane_due_count_[lane_residue(d.pg0)];
  } else if (d.state == PageState::kNow) {
    lane_now_.erase(std::find(lane_now_.begin(), lane_now_.end(), c));
  } else {
    lane_pending_.erase(std::find_if(lane_pending_.begin(), lane_pending_.end(),
                                     [c](const std::pair<std::int64_t, std::uint32_t>& e) { return e.second == c; }));
  }
  sl_free_.push_back(c);
}

// Applies the lane's decode items (the batch's first items): one step each.
// Members that finish with it get their count written back and finish as in
// the step-by-step pass, in the same order relative to the policy's token calls.
void Worker::lane_finish(std::vector<RequestHandle>& done, bool& gone) {
  lane_scheduled_ = false;
  if (contexts_due_) {  // never read: the members' bases and steps_ change below
    contexts_due_ = false;
    contexts_gone_ = true;
  }
  const std::int64_t s1 = steps_ + 1;
  const std::size_t n = lane_size();
  // One token per member, once per client (lane_clients_' order). When the batch is
  // the lane's alone and no member leaves, lane_clients_ is the iteration's whole
  // per-client count in that order: finish_iteration hands it to the observer as
  // it is (lane_tokens_direct_) instead of copying it into client_tokens_.
  lane_tokens_direct_ = observer_ && s1 < lane_min_fin_ && items_.size() == n;
  if (observer_ && !lane_tokens_direct_)
    for (const auto& e : lane_clients_) count_output_token(e.first, e.second);
  if (s1 < lane_min_fin_) {  // nobody finishes: the policy hears the tokens per client
    if (holds_tokens_)
      for (const auto& e : lane_clients_) hold_tokens(e.first, e.second);
    else if (counts_tokens_)
      for (const auto& e : lane_clients_) policy_->on_decode_token_each(e.first, e.second);
  } else {
    // s1 == lane_min_fin_: some member finishes. The finishers (in running order)
    // and the others' smallest finish step, in one pass over ln_fin_.
    std::int64_t min_fin = std::numeric_limits<std::int64_t>::max();
    lane_gone_.clear();
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t f = ln_fin_[j];
      if (f == s1)
        lane_gone_.push_back(static_cast<std::uint32_t>(j));
      else
        min_fin = std::min(min_fin, f);
    }
    // The policy's token calls and the finishes in running order, as in one pass:
    // every member's token, a finisher's finish right after its own; or, for a
    // policy whose on_finish does not depend on them (tokens_first_), every token
    // per client first, as in a step without finishers (lane_clients_ still
    // counts the finishers here).
    const bool each = counts_tokens_ && !tokens_first_;
    if (holds_tokens_)
      for (const auto& e : lane_clients_) hold_tokens(e.first, e.second);
    else if (tokens_first_)
      for (const auto& e : lane_clients_) policy_->on_decode_token_each(e.first, e.second);
    std::size_t j = 0;
    for (const std::uint32_t g : lane_gone_) {
      if (each)
        for (; j <= g; ++j) policy_->on_decode_tokens(ln_client_[j], 1);
      const std::uint32_t i = items_[g].i;
      hot_[i].generated += s1 - ln_b_[g];
      hot_[i].kv_pages = lane_pages_held(ln_slot_[g]);
      lane_client_left(ln_client_[g]);
      lane_cb_sum_ -= ln_cb_[g];  // (the sums are as of steps_: this iteration's lane_schedule)
      lane_cb_max_stale_ = lane_cb_max_stale_ || ln_cb_[g] == lane_cb_max_;
      lane_splits_ -= lane_split_term(ln_cb_[g], lane_splits_at_);
      --lane_split_due_[lane_split_residue(ln_cb_[g])];
      lane_slot_free(ln_slot_[g]);
      finish_here(i, done);
      gone = true;
    }
    if (each)
      for (; j < n; ++j) policy_->on_decode_tokens(ln_client_[j], 1);
    // The members after each finisher move down over it, a run at a time (they
    // keep running order).
    const auto close_gaps = [this, n](auto& v) {
      std::size_t at = lane_gone_.front();
      for (std::size_t k = 0; k < lane_gone_.size(); ++k) {
        const std::size_t from = lane_gone_[k] + 1, to = k + 1 < lane_gone_.size() ? lane_gone_[k + 1] : n;
        std::copy(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to),
                  v.begin() + static_cast<std::ptrdiff_t>(at));
        at += to - from;
      }
    };
    const std::size_t kept = n - lane_gone_.size();
    close_gaps(ln_b_);
    close_gaps(ln_fin_);
    close_gaps(ln_cb_);
    close_gaps(ln_slot_);
    close_gaps(ln_client_);
    ln_b_.resize(kept);
    ln_fin_.resize(kept);
    ln_cb_.resize(kept);
    ln_slot_.resize(kept);
    ln_client_.resize(kept);
    // items_: the same moves in its first n entries (the lane's); it keeps its size
    // (finish_iteration goes on with the batch's other items from index n).
    close_gaps(items_);
    lane_min_fin_ = min_fin;
  }
  steps_ = s1;
  lane_mod_ = lane_mod_ + 1 == kv().page_size() ? 0 : lane_mod_ + 1;
  stats_.decode_tokens += static_cast<std::int64_t>(n);
  context_tokens_ += static_cast<std::int64_t>(n);
}

// The running set was compacted from index `first` on: `to` maps each kept
// request's old index >= first to its new one (members and joiners are all
// kept; those before `first` did not move). Members are in running order.
void Worker::lane_remap(const std::vector<std::uint32_t>& to, std::size_t first) {
  const auto end = items_.begin() + static_cast<std::ptrdiff_t>(lane_size());
  auto it = std::partition_point(items_.begin(), end, [first](const Item& x) { return x.i < first; });
  for (; it != end; ++it) it->i = to[it->i];
  for (std::uint32_t& i : lane_joins_)
    if (i >= first) i = to[i];
}

}  // namespace servesim
