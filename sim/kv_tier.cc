// One lower KV tier (LRU store of prefix blocks); see kv_tier.h.
#include "sim/kv_tier.h"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

std::uint64_t tier_block_key(std::uint64_t prev, BlockHash block, std::int64_t tokens) {
  // splitmix64 finalizer over the chained inputs
  std::uint64_t z = prev * 0x9E3779B97F4A7C15ull ^ block ^ (static_cast<std::uint64_t>(tokens) << 40);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

KvTier::KvTier(std::string name, std::int64_t capacity_pages, std::int64_t page_size, double bytes_per_token,
               double bandwidth_gbps, Time latency, KvTier* below, KvTierStats* stats)
    : name_(std::move(name)), capacity_(capacity_pages), page_size_(page_size), bytes_per_token_(bytes_per_token),
      bandwidth_gbps_(bandwidth_gbps), latency_(latency), below_(below), stats_(stats ? stats : &own_stats_) {
  SIM_CHECK(capacity_pages >= 0 && page_size > 0 && bytes_per_token > 0 && bandwidth_gbps > 0 && latency >= 0,
            "KV tier {}: invalid settings", name_);
  // Every load must fit the engine's nanosecond clock: the longest one, the whole tier,
  // may take at most kMaxTierLoadS (with the 1e9 s horizon that stays below int64's 9.2e18 ns).
  const double worst_ns = static_cast<double>(capacity_pages) * static_cast<double>(page_size) * bytes_per_token / bandwidth_gbps;
  if (!(worst_ns <= kMaxTierLoadS * 1e9))
    throw InputError(fmt::format(
        "kv_cache.{}.bandwidth_gbps: loading the whole tier ({:.3g} GB) at {} GB/s would take {:.3g} s, more than the "
        "{:.0e} s one load may take; raise bandwidth_gbps or lower capacity_gb",
        name_, static_cast<double>(capacity_pages) * static_cast<double>(page_size) * bytes_per_token * 1e-9,
        bandwidth_gbps, worst_ns * 1e-9, kMaxTierLoadS));
  stats_->capacity_pages = capacity_pages;
}

void KvTier::touch(std::uint64_t key) {
  auto it = index_.find(key);
  SIM_CHECK(it != index_.end(), "KV tier {}: touch of a block it does not hold", name_);
  lru_.splice(lru_.end(), lru_, it->second);
}

void KvTier::put(std::uint64_t key, std::int64_t tokens) {
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.end(), lru_, it->second);
    return;
  }
  const std::int64_t pages = pages_for(tokens);
  if (pages > capacity_) {  // can never fit here
    if (below_) below_->put(key, tokens);
    else stats_->dropped_blocks++;
    return;
  }
  while (used_ + pages > capacity_) {
    const Entry victim = lru_.front();
    lru_.pop_front();
    index_.erase(victim.key);
    used_ -= victim.pages;
    if (below_) {
      stats_->demoted_blocks++;
      below_->put(victim.key, victim.tokens);
    } else {
      stats_->dropped_blocks++;
    }
  }
  lru_.push_back(Entry{key, tokens, pages});
  index_[key] = std::prev(lru_.end());
  used_ += pages;
  stats_->stored_blocks++;
  stats_->peak_pages = std::max(stats_->peak_pages, used_);
  SIM_CHECK(used_ <= capacity_, "KV tier {}: {} pages used > capacity {}", name_, used_, capacity_);
}

Time KvTier::load_time(std::int64_t tokens) const {
  if (tokens <= 0) return 0;
  // bytes / (GB/s) = ns
  const double ns = std::ceil(static_cast<double>(tokens) * bytes_per_token_ / bandwidth_gbps_);
  // The constructor bounded the whole tier's load; a cast of more would be undefined.
  SIM_CHECK(ns >= 0 && ns <= kMaxTierLoadS * 1e9, "KV tier {}: a load of {} tokens takes {} ns", name_, tokens, ns);
  return static_cast<Time>(ns) + latency_;
}

std::vector<std::uint64_t> KvTier::lru_keys() const {
  std::vector<std::uint64_t> out;
  for (const Entry& e : lru_) out.push_back(e.key);
  return out;
}

void KvTier::check_invariants() const {
  std::int64_t pages = 0;
  for (const Entry& e : lru_) {
    pages += e.pages;
    auto it = index_.find(e.key);
    SIM_CHECK(it != index_.end() && it->second->key == e.key, "KV tier {}: index out of step", name_);
  }
  SIM_CHECK(index_.size() == lru_.size(), "KV tier {}: index holds {} keys for {} blocks", name_, index_.size(),
            lru_.size());
  SIM_CHECK(pages == used_, "KV tier {}: pages {} != tracked {}", name_, pages, used_);
  SIM_CHECK(used_ <= capacity_, "KV tier {}: {} pages used > capacity {}", name_, used_, capacity_);
}

}  // namespace servesim
