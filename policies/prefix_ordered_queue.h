// PrefixOrderedQueue: a worker's waiting requests ordered for longest-prefix-
// match scheduling (SGLang's LPM): by cached prefix tokens, longest first,
// ties by queue order (preempted requests ahead of new ones, each in the
// order they entered). The engine recomputes matches incrementally, so
// re-reading every key every step is cheap; the sort only reorders what
// changed (the old order is kept when still sorted, new entries are merged).
//
// Used by LPM, DLPM and Preble's local scheduler. Not a policy itself.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "policies/local_policy.h"

namespace servesim {

class PrefixOrderedQueue {
 public:
  struct Entry {
    QueuedRequest q;
    std::int64_t seq = 0;     // queue order: preempted requests get negative numbers (they go first)
    std::int64_t cached = 0;  // cached prefix tokens, refreshed by refresh()
    bool taken = false;       // admitted this step; dropped by compact()
  };

  void push(const QueuedRequest& r) {
    const std::int64_t seq = r.preempted ? ++preempted_ - (std::int64_t{1} << 62) : ++arrived_;
    entries_.push_back(Entry{r, seq, 0, false});
  }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<Entry>& entries() { return entries_; }

  // Re-reads every entry's cached tokens and sorts by (cached desc, seq asc).
  void refresh_by_match(const AdmissionContext& ctx) {
    for (Entry& e : entries_) e.cached = ctx.cached_tokens(e.q);
    auto before = [](const Entry& a, const Entry& b) {
      return a.cached != b.cached ? a.cached > b.cached : a.seq < b.seq;
    };
    const auto old_end = entries_.begin() + static_cast<std::ptrdiff_t>(std::min(sorted_, entries_.size()));
    if (std::is_sorted(entries_.begin(), old_end, before)) {
      std::sort(old_end, entries_.end(), before);
      std::inplace_merge(entries_.begin(), old_end, entries_.end(), before);
    } else {
      std::sort(entries_.begin(), entries_.end(), before);
    }
    sorted_ = entries_.size();
  }

  // Queue order only (FCFS), e.g. as LPM's fallback for very long queues.
  void sort_by_seq() {
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
    sorted_ = 0;
  }

  // The caller reordered entries(): the next refresh sorts from scratch.
  void mark_unsorted() { sorted_ = 0; }

  // Drops entries marked taken, keeping the order of the rest.
  void compact() {
    std::size_t kept_sorted = 0, out = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].taken) continue;
      if (i < sorted_) ++kept_sorted;
      entries_[out++] = entries_[i];
    }
    entries_.resize(out);
    sorted_ = kept_sorted;
  }

 private:
  std::vector<Entry> entries_;
  std::size_t sorted_ = 0;  // entries_[0, sorted_) were sorted by the last refresh
  std::int64_t arrived_ = 0, preempted_ = 0;
};

}  // namespace servesim
