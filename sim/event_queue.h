// EventQueue: the simulation's agenda. Events are ordered by (time, seq) where
// seq is the insertion counter — so same-time events run in insertion order.
// This is the ONE place that defines event order.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/core/time.h"

namespace servesim {

enum class EventKind : std::uint8_t {
  kArrival,       // the source's next request(s) arrive (target unused)
  kRelease,       // a dependent request becomes ready (target = request handle)
  kIterationEnd,  // a worker's iteration finishes (target = worker)
  kWake,          // an idle worker that received work starts an iteration (target = worker)
  kTimer,         // the global policy's periodic timer
  kTransferLatency,   // PD: a KV transfer's latency passed; its bytes start moving (target = request handle)
  kTransferProgress,  // PD: a KV transfer may have finished (target unused)
};

struct Event {
  Time time;
  std::uint64_t seq;
  EventKind kind;
  std::uint32_t target;
};

// A 4-ary min-heap on (time, seq): (time, seq) is a strict total order, so the
// pop order is that of any correct priority queue (std::priority_queue before);
// four children per node make the heap about half as deep (an iteration end
// per worker is the usual content: 16-1,024 events). pop() leaves a hole at the
// root that the next push fills (one sift down, as heapreplace: the engine
// mostly pushes right after a pop); any other call fills it first.
class EventQueue {
 public:
  void push(Time t, EventKind kind, std::uint32_t target = 0) {
    const Event e{t, next_seq_++, kind, target};
    if (hole_) {  // the popped root's place: sift e down from there
      hole_ = false;
      sift_down(e, heap_.size());
      return;
    }
    std::size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {  // sift up
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  bool empty() {
    fill_hole();
    return heap_.empty();
  }
  const Event& top() {
    fill_hole();
    return heap_.front();
  }
  // REQUIRES: !empty().
  Event pop() {
    fill_hole();
    hole_ = true;
    return heap_.front();
  }
  std::size_t size() const { return heap_.size() - (hole_ ? 1 : 0); }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  static bool before(const Event& a, const Event& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; }
  // Places e at the root of heap_[0, n) and sifts it down.
  void sift_down(const Event& e, std::size_t n) {
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (before(heap_[c], heap_[best])) best = c;
      if (!before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }
  // The popped root's hole (if any) takes the last event, sifted down.
  void fill_hole() {
    if (!hole_) return;
    hole_ = false;
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last, heap_.size());
  }
  std::vector<Event> heap_;
  bool hole_ = false;  // heap_[0] was popped and awaits the next push (or fill_hole)
  std::uint64_t next_seq_ = 0;
};

}  // namespace servesim
