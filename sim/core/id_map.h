// IdMap<V>: a map from 64-bit ids (request ids: any value) to V, as one flat
// open-addressing table (linear probing, backward-shift deletion, load <= 1/2).
// For per-request state that a policy keeps from routing to finish: an entry
// costs no allocation of its own and a lookup about one cache miss, where
// std::unordered_map allocates a node per entry and a lookup reads its bucket
// array and then the node (two dependent misses when both are cold).
//
// Lookups only: nothing iterates the table, so its layout never reaches an
// output (determinism). A pointer or reference to a value stays valid until the
// next insertion or erasure (either may move entries).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace servesim {

template <class V>
class IdMap {
 public:
  IdMap() : slots_(16) {}

  // The value of `key`, or null.
  V* find(std::uint64_t key) {
    Slot& s = slots_[probe(key)];
    return s.used ? &s.value : nullptr;
  }
  // The value of `key`, default-constructed first when absent.
  V& operator[](std::uint64_t key) {
    std::size_t i = probe(key);
    if (slots_[i].used) return slots_[i].value;
    if (2 * (size_ + 1) > slots_.size()) {
      grow();
      i = probe(key);
    }
    ++size_;
    Slot& s = slots_[i];
    s.used = true;
    s.key = key;
    s.value = V{};
    return s.value;
  }
  // Removes `key`'s entry; false if there is none.
  bool erase(std::uint64_t key) {
    std::size_t i = probe(key);
    if (!slots_[i].used) return false;
    // Backward shift: pull later entries of the probe run into the hole.
    for (std::size_t j = (i + 1) & mask(); slots_[j].used; j = (j + 1) & mask()) {
      const std::size_t k = home(slots_[j].key);
      const bool movable = i <= j ? (k <= i || k > j) : (k <= i && k > j);
      if (movable) {
        slots_[i].key = slots_[j].key;
        slots_[i].value = std::move(slots_[j].value);
        i = j;
      }
    }
    slots_[i].used = false;
    slots_[i].value = V{};
    --size_;
    return true;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    bool used = false;
    V value{};
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t home(std::uint64_t key) const {  // splitmix64's finalizer: ids in sequence spread out
    std::uint64_t z = key * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(z ^ (z >> 29)) & mask();
  }
  // One probe run: the slot holding `key`, else the free slot that ends its run
  // (where an insertion of `key` goes).
  std::size_t probe(std::uint64_t key) const {
    std::size_t i = home(key);
    while (slots_[i].used && slots_[i].key != key) i = (i + 1) & mask();
    return i;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (Slot& s : old)
      if (s.used) slots_[probe(s.key)] = std::move(s);  // (keys are distinct: the run's free slot)
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace servesim
