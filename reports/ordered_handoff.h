// OrderedHandoff<T>: one producer thread hands items, in order, to a consumer
// function that runs on a thread of its own. The run report uses it to keep its
// per-request work (latency sketches, requests.csv rows) off the engine's
// thread: on a machine with a second core that work runs beside the engine.
//
// Contract:
//  - The producer fills slot() in place, then commit()s it. Slots are reused
//    round a ring of fixed size (no allocation per item; an item's members keep
//    their capacity from the slot's last use).
//  - consume(T&) is called exactly once per committed item, in commit order,
//    never on two threads at once: on the consumer thread once it started, else
//    on the producer's thread (inside commit() or finish()). Whatever consume()
//    touches belongs to it until finish() returns: the producer must not read
//    or write it before then.
//  - Items are handed over in batches of kBatch. The first kStartAfter items are
//    consumed on the producer's thread, batch by batch; the consumer thread
//    starts after them, so a small run never starts one. With `threaded` false,
//    or when no thread can be started, every batch is consumed on the
//    producer's thread: the same calls in the same order.
//  - An exception thrown by consume() is rethrown on the producer's thread, by
//    the commit() that next hands over a batch or by finish(); the items after
//    it are not consumed.
//  - finish(): hands over the rest, waits until all are consumed and joins.
//    Destroyed without finish() (e.g. while unwinding), the consumer stops after
//    the item it is on and the rest are dropped.
// Synchronisation: the ring's two counters. The consumer thread, when it has
// caught up, sleeps kPoll and looks again: a handover costs the producer no
// system call (a wake-up is several microseconds on a virtual machine). A
// producer that finds the ring full waits on the consumed counter (C++20 atomic
// wait), which the consumer notifies after each batch (one load when nobody waits).
#pragma once
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace servesim {

template <class T>
class OrderedHandoff {
 public:
  static constexpr std::size_t kBatch = 64, kStartAfter = 1024;
  static constexpr std::chrono::microseconds kPoll{200};

  // capacity: slots in the ring, rounded up to a power of two of at least kStartAfter.
  OrderedHandoff(std::size_t capacity, std::function<void(T&)> consume, bool threaded = true)
      : ring_(std::bit_ceil(std::max(capacity, kStartAfter))),
        mask_(ring_.size() - 1),
        consume_(std::move(consume)),
        threaded_(threaded) {}
  OrderedHandoff(const OrderedHandoff&) = delete;
  OrderedHandoff& operator=(const OrderedHandoff&) = delete;
  ~OrderedHandoff() {
    if (!thread_.joinable()) return;
    stop_.store(true, std::memory_order_relaxed);
    head_.store(published_ | kClosed, std::memory_order_release);
    thread_.join();
  }

  // The next slot to fill (waits while the ring is full).
  T& slot() {
    if (next_ - room_until_ >= ring_.size()) wait_for_room();
    return ring_[next_ & mask_];
  }
  void commit() {
    if (++next_ - published_ >= kBatch) hand_over();
  }
  // REQUIRES: called once, after the last commit().
  void finish() {
    if (!thread_.joinable()) {
      consume_inline(next_);
    } else {
      head_.store(next_ | kClosed, std::memory_order_release);
      thread_.join();
    }
    published_ = next_;
    rethrow_if_failed();
  }
  // Whether a consumer thread was started (tests, benchmarks).
  bool threaded_now() const { return thread_.joinable(); }

 private:
  static constexpr std::uint64_t kClosed = std::uint64_t{1} << 63;  // head_'s flag: no more items

  void hand_over() {
    if (!thread_.joinable() && threaded_ && next_ > kStartAfter) start();
    if (!thread_.joinable()) {
      consume_inline(next_);
    } else {
      head_.store(next_, std::memory_order_release);
    }
    published_ = next_;
    rethrow_if_failed();
  }
  void start() {
    threaded_ = false;  // one try: a machine that cannot start a thread consumes inline
    head_.store(published_, std::memory_order_relaxed);  // (the items before it were consumed here)
    tail_.store(published_, std::memory_order_relaxed);
    try {
      thread_ = std::thread([this, from = published_] { run(from); });
    } catch (const std::system_error&) {
    }
  }
  void consume_inline(std::uint64_t until) {
    for (; published_ < until; ++published_) consume_one(ring_[published_ & mask_]);
    room_until_ = published_;
  }
  void wait_for_room() {
    if (published_ != next_) hand_over();  // the consumer can only free what it was given
    if (!thread_.joinable()) return;       // consumed here: the ring is empty
    for (;;) {
      const std::uint64_t t = tail_.load(std::memory_order_acquire);
      if (next_ - t < ring_.size()) {
        room_until_ = t;
        return;
      }
      tail_.wait(t, std::memory_order_acquire);
    }
  }
  void consume_one(T& item) {
    if (failed_.load(std::memory_order_relaxed)) return;  // after an error: dropped
    try {
      consume_(item);
    } catch (...) {
      error_ = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
  }
  void rethrow_if_failed() {
    if (failed_.load(std::memory_order_acquire) && error_) {
      std::exception_ptr e = std::exchange(error_, nullptr);
      std::rethrow_exception(e);
    }
  }
  // The consumer thread, from item `tail` on: takes what head_ publishes until it is closed and empty.
  void run(std::uint64_t tail) {
    for (;;) {
      const std::uint64_t raw = head_.load(std::memory_order_acquire);
      const std::uint64_t head = raw & ~kClosed;
      if (head == tail) {
        if (raw & kClosed) return;
        std::this_thread::sleep_for(kPoll);
        continue;
      }
      for (; tail != head; ++tail) {
        if (stop_.load(std::memory_order_relaxed)) return;
        consume_one(ring_[tail & mask_]);
      }
      tail_.store(tail, std::memory_order_release);
      tail_.notify_one();
    }
  }

  std::vector<T> ring_;
  std::size_t mask_;
  std::function<void(T&)> consume_;
  bool threaded_;
  // Producer side: items committed, handed over, and the tail it last saw.
  std::uint64_t next_ = 0, published_ = 0, room_until_ = 0;
  alignas(64) std::atomic<std::uint64_t> head_{0};  // handed over (| kClosed at the end)
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // consumed
  std::atomic<bool> stop_{false}, failed_{false};
  std::exception_ptr error_;  // written by the consumer before failed_, read after it
  std::thread thread_;
};

}  // namespace servesim
