// DependencyTracker: the parent/child bookkeeping of dependent requests
// (sessions, agent DAGs: RequestSpec::parents / dependents), out of the event
// loop. The Simulation tells it what it takes from the source and when
// parents end; it answers which children are ready (and when) or must fail.
//
// Contract (as the source guarantees and docs/simulation.md states): a child
// is pulled after all its parents; a parent's `dependents` counts the rows
// naming it. A finished parent's record is kept until its last dependent was
// pulled; children waiting on live parents are kept per parent. Only lookups
// and erasures touch the hash maps (nothing iterates them), so their layout
// never reaches an output.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/live_request.h"

namespace servesim {

class DependencyTracker {
 public:
  // A request with dependents was taken from the source (later rows may name it).
  void add_parent(RequestId id, RequestHandle h) { live_ids_[id] = h; }

  // t + think without int64 overflow: a chain of huge think times (each up
  // to the trace limit, 4e18 ns) saturates at kThinkCeiling (8e18 ns), which
  // still leaves room for the iterations that follow.
  static constexpr Time kThinkCeiling = 8'000'000'000'000'000'000;
  static Time after_think(Time t, Time think) {
    if (think > kThinkCeiling - t) return std::max(t, kThinkCeiling);
    return t + think;
  }

  // Dependent request `h` was taken from the source at `now`: resolves its
  // parents, setting r.parents_left (live parents it waits for) and r.ready_at
  // (latest finished parent's end + think time, at least now). Returns false
  // when it can never run: a parent failed, or never appeared before it.
  bool add_child(RequestHandle h, RequestTable& table, Time now) {
    LiveRequest& r = table[h];
    r.ready_at = now;
    bool failed = false;
    for (RequestId p : r.spec.parents) {
      if (auto it = finished_.find(p); it != finished_.end()) {
        Finished& rec = it->second;
        failed |= !rec.ok;
        r.ready_at = std::max(r.ready_at, after_think(rec.finish, r.spec.think_time));
        if (--rec.unseen <= 0) finished_.erase(it);
      } else if (auto lt = live_ids_.find(p); lt != live_ids_.end()) {
        table[lt->second].dependents_unseen--;
        r.parents_left++;
        waiting_[p].push_back(h);
      } else {
        failed = true;
      }
    }
    if (failed)
      for (RequestId p : r.spec.parents)
        if (auto it = waiting_.find(p); it != waiting_.end()) std::erase(it->second, h);
    return !failed;
  }

  // Parent r ended at `now`, finished (ok) or not. Each waiting child whose
  // last parent this was gets release(child) with its ready_at updated; when
  // the parent failed, each still-pending child gets reject(child). The
  // callbacks may report requests (and so call retire() again).
  template <class Release, class Reject>
  void retire(LiveRequest& r, bool ok, Time now, RequestTable& table, Release release, Reject reject) {
    if (r.spec.dependents == 0) return;
    live_ids_.erase(r.spec.id);
    if (r.dependents_unseen > 0) finished_[r.spec.id] = Finished{now, r.dependents_unseen, ok};
    auto it = waiting_.find(r.spec.id);
    if (it == waiting_.end()) return;
    std::vector<RequestHandle> children = std::move(it->second);
    waiting_.erase(it);
    for (RequestHandle c : children) {
      LiveRequest& child = table[c];
      if (!ok) {
        if (child.phase == Phase::kPending) reject(c);
        continue;
      }
      child.ready_at = std::max(child.ready_at, after_think(now, child.spec.think_time));
      if (--child.parents_left == 0) release(c);
    }
  }

 private:
  struct Finished {
    Time finish = 0;
    std::int32_t unseen = 0;  // dependents not yet pulled from the source
    bool ok = true;           // false: rejected or unfinished, dependents fail too
  };
  std::unordered_map<RequestId, Finished> finished_;                    // finished parents still awaited
  std::unordered_map<RequestId, std::vector<RequestHandle>> waiting_;  // children waiting on a live parent
  std::unordered_map<RequestId, RequestHandle> live_ids_;              // live parents by id
};

}  // namespace servesim
