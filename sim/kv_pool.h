// KvPool: page accounting of one worker's KV memory. Pages are counted, not
// named: the engine needs capacity, use and peak, and the invariant that use
// never exceeds capacity (checked on every allocation).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>

#include "sim/core/error.h"

namespace servesim {

class KvPool {
 public:
  KvPool(std::int64_t capacity_pages, std::int64_t page_size) : capacity_(capacity_pages), page_size_(page_size) {
    if (page_size > 0 && (page_size & (page_size - 1)) == 0) shift_ = std::countr_zero(static_cast<std::uint64_t>(page_size));
  }

  // ceil(tokens / page_size), for any sign, without forming tokens + page_size - 1
  // (no overflow near INT64_MAX). A power-of-two page size (the usual 16) takes a
  // shift instead of a division: floor(x / 2^s) + (x mod 2^s != 0) is the same ceil.
  std::int64_t pages_for(std::int64_t tokens) const {
    if (shift_ >= 0) return (tokens >> shift_) + ((tokens & (page_size_ - 1)) != 0 ? 1 : 0);
    return tokens / page_size_ + (tokens % page_size_ > 0 ? 1 : 0);
  }
  std::int64_t free() const { return capacity_ - used_; }
  std::int64_t used() const { return used_; }
  std::int64_t capacity() const { return capacity_; }
  std::int64_t peak() const { return peak_; }
  std::int64_t page_size() const { return page_size_; }

  bool try_alloc(std::int64_t pages) {
    if (pages > free()) return false;
    used_ += pages;
    peak_ = std::max(peak_, used_);
    SIM_CHECK(used_ <= capacity_ && used_ >= 0, "KV pages used {} outside [0, {}]", used_, capacity_);
    return true;
  }
  void release(std::int64_t pages) {
    used_ -= pages;
    SIM_CHECK(used_ >= 0, "KV pages used went negative ({})", used_);
  }

 private:
  std::int64_t capacity_;
  std::int64_t page_size_;
  int shift_ = -1;  // log2(page_size_) when it is a power of two, else -1
  std::int64_t used_ = 0;
  std::int64_t peak_ = 0;
};

}  // namespace servesim
