// EventQueue: the simulation's agenda. Events are ordered by (time, seq) where
// seq is the insertion counter — so same-time events run in insertion order.
// This is the ONE place that defines event order.
#pragma once
#include <cstdint>
#include <queue>
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

class EventQueue {
 public:
  void push(Time t, EventKind kind, std::uint32_t target = 0) { heap_.push(Event{t, next_seq_++, kind, target}); }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.top(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  std::size_t size() const { return heap_.size(); }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace servesim
