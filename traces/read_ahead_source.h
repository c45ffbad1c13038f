// ReadAheadSource: a RequestSource that produces its inner source's requests
// ahead of the engine on a thread of its own (trace parsing, synthetic
// sampling), so on a machine with a second core that work runs beside the
// engine's. The stream is the inner source's, request for request, and so is
// the run's ClientTable:
//  - the inner source is opened on a private ClientTable; each request carries
//    the client names its source registered since the previous one, and next()
//    registers them in the run's table before returning it. The run's table
//    thus gets the same names with the same ids, each by the time a request of
//    that client is seen (its readers stay on the engine's thread).
//  - An exception thrown by the inner source (a malformed trace row) is
//    rethrown by the next() that reaches it, after every request before it.
//  - The first kInline requests are pulled on the caller's thread (small runs
//    never start a thread); then the thread reads up to kRing requests ahead.
//    With `threaded` false, or when no thread can be started, every request is
//    pulled on the caller's thread: the same stream.
// next() asks for the lines of the requests a few slots ahead (written on the
// other core) before it needs them: a hint, no effect on the stream.
// Not thread-safe itself: one caller. Destroying it stops the thread (after
// the request it is reading) and drops what was read ahead.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/request_source.h"

namespace servesim {

class ReadAheadSource final : public RequestSource {
 public:
  using Opener = std::function<std::unique_ptr<RequestSource>(ClientTable&)>;
  // The ring's slots. The thread publishes its requests kBatch at a time (a
  // next() that found the ring empty waits for them: C++20 atomic wait); next()
  // gives the slots back kGive at a time, and the thread, when the ring is
  // full, looks for room every kPoll: the engine's thread makes no system call
  // to wake it (a wake-up is several microseconds on a virtual machine).
  static constexpr std::size_t kRing = 2048, kBatch = 64, kGive = 256, kInline = 1024;
  static constexpr std::chrono::microseconds kPoll{200};

  // Opens the inner source (on this thread) with `open`, on a private table
  // whose names are copied into `clients` at once.
  ReadAheadSource(const Opener& open, ClientTable& clients, bool threaded = true);
  ~ReadAheadSource() override;
  ReadAheadSource(const ReadAheadSource&) = delete;
  ReadAheadSource& operator=(const ReadAheadSource&) = delete;

  bool next(RequestSpec& out) override;
  std::string describe() const override { return describe_; }
  bool threaded_now() const { return thread_.joinable(); }

 private:
  struct Item {
    bool ok = false;                     // false: the end (or error)
    RequestSpec spec;
    std::vector<std::string> new_names;  // registered by the inner source with (or before) this request
    std::exception_ptr error;            // the inner source threw here
  };
  void fill(Item& it);  // one pull from the inner source (either thread)
  void run();           // the thread: fills the ring until the end, an error or stop
  void start();

  ClientTable private_;  // the inner source's (declared before it: it outlives it)
  std::unique_ptr<RequestSource> inner_;
  ClientTable& clients_;
  std::string describe_;
  bool threaded_;
  std::size_t names_sent_ = 0;  // private_ names already attached to an item (filling thread)
  std::uint64_t pulled_ = 0;    // requests returned by next() so far, inline or not
  bool done_ = false;           // next() returned false
  std::vector<Item> ring_;
  Item inline_;
  // Ring counters: head_ published by the thread, tail_ by next().
  std::uint64_t tail_local_ = 0, head_seen_ = 0;
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // | kStop: the destructor stops the thread
  std::thread thread_;
};

}  // namespace servesim
