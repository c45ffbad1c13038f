// ReadAheadSource; see read_ahead_source.h.
#include "traces/read_ahead_source.h"

#include <chrono>
#include <system_error>
#include <utility>

namespace servesim {
namespace {
constexpr std::uint64_t kStop = std::uint64_t{1} << 63;  // tail_'s flag: the thread is to stop
}  // namespace

ReadAheadSource::ReadAheadSource(const Opener& open, ClientTable& clients, bool threaded)
    : clients_(clients), threaded_(threaded), ring_(kRing) {
  // The private table starts as a copy of the run's, so ids agree from the start.
  for (const std::string& n : clients_.names()) private_.intern(n);
  names_sent_ = private_.size();
  inner_ = open(private_);
  describe_ = inner_->describe();
  for (; names_sent_ < private_.size(); ++names_sent_) clients_.intern(private_.names()[names_sent_]);
}

ReadAheadSource::~ReadAheadSource() {
  if (!thread_.joinable()) return;
  tail_.store(tail_local_ | kStop, std::memory_order_release);
  thread_.join();
}

void ReadAheadSource::fill(Item& it) {
  // A default spec whose vectors keep the slot's buffers (allocated on this thread).
  std::vector<BlockHash> blocks = std::move(it.spec.prefix_blocks);
  std::vector<RequestId> parents = std::move(it.spec.parents);
  it.spec = RequestSpec{};
  blocks.clear();
  parents.clear();
  it.spec.prefix_blocks = std::move(blocks);
  it.spec.parents = std::move(parents);
  it.new_names.clear();
  it.error = nullptr;
  try {
    it.ok = inner_->next(it.spec);
  } catch (...) {
    it.ok = false;
    it.error = std::current_exception();
  }
  for (; names_sent_ < private_.size(); ++names_sent_) it.new_names.push_back(private_.names()[names_sent_]);
}

void ReadAheadSource::start() {
  threaded_ = false;  // one try: where no thread can be started, every pull stays inline
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
  }
}

void ReadAheadSource::run() {
  std::uint64_t head = 0, tail = 0;
  for (;;) {
    while (head - tail >= kRing) {  // full: hand over what is done, look for room every kPoll
      head_.store(head, std::memory_order_release);
      head_.notify_one();
      const std::uint64_t t = tail_.load(std::memory_order_acquire);
      if (t & kStop) return;
      if (t != tail) {
        tail = t;
        continue;
      }
      std::this_thread::sleep_for(kPoll);
    }
    if (tail_.load(std::memory_order_relaxed) & kStop) return;
    Item& it = ring_[head % kRing];
    fill(it);
    ++head;
    const bool end = !it.ok;
    if (end || head % kBatch == 0) {
      head_.store(head, std::memory_order_release);
      head_.notify_one();
    }
    if (end) return;
  }
}

bool ReadAheadSource::next(RequestSpec& out) {
  if (done_) return false;
  if (!thread_.joinable() && threaded_ && pulled_ >= kInline) start();
  Item* it = &inline_;
  if (!thread_.joinable()) {
    fill(inline_);
  } else {
    if (tail_local_ == head_seen_) {  // everything published is taken: give the slots back, wait for more
      tail_.store(tail_local_, std::memory_order_release);
      for (;;) {
        head_seen_ = head_.load(std::memory_order_acquire);
        if (head_seen_ != tail_local_) break;
        head_.wait(head_seen_, std::memory_order_acquire);
      }
    }
    it = &ring_[tail_local_ % kRing];
    // The slots ahead were written on the other core: their lines are asked for
    // early, in two stages (a slot's record kFar ahead; kNear ahead, its record has
    // arrived, so its block list's address is known and its lines are asked for).
    constexpr std::uint64_t kFar = 8, kNear = 4;
    if (tail_local_ + kFar < head_seen_) {
      const char* p = reinterpret_cast<const char*>(&ring_[(tail_local_ + kFar) % kRing]);
      for (std::size_t k = 0; k < sizeof(Item); k += 64) __builtin_prefetch(p + k);
    }
    if (tail_local_ + kNear < head_seen_) {
      const std::vector<BlockHash>& b = ring_[(tail_local_ + kNear) % kRing].spec.prefix_blocks;
      const char* p = reinterpret_cast<const char*>(b.data());
      for (std::size_t k = 0; k < b.size() * sizeof(BlockHash); k += 64) __builtin_prefetch(p + k);
    }
  }
  for (const std::string& n : it->new_names) clients_.intern(n);
  const bool ok = it->ok;
  std::exception_ptr error = ok ? nullptr : std::move(it->error);
  // A copy, not a move, from a slot the thread filled: the request's vectors are
  // then allocated on this thread, which frees them (glibc frees another thread's
  // chunk through that thread's arena, a slow path), and the slot keeps its buffers.
  // A copy assignment (not `out = cond ? std::move(a) : a`, which copies into a
  // temporary first): out's vectors keep their buffers where they are big enough.
  if (ok) {
    if (it == &inline_)
      out = std::move(it->spec);
    else
      out = it->spec;
  }
  if (it != &inline_ && ++tail_local_ % kGive == 0)  // the slot is read: hand it back with its batch
    tail_.store(tail_local_, std::memory_order_release);
  if (!ok) {
    done_ = true;
    if (error) std::rethrow_exception(error);
    return false;
  }
  ++pulled_;
  return true;
}

}  // namespace servesim
