// ChildIndex: the child table of a radix tree over block ids — (parent node,
// block id) -> child node — as one flat open-addressing hash table (linear
// probing, backward-shift deletion, load <= 1/2). Radix caches of millions of
// nodes do most of their work here; a flat table costs about one cache miss
// per lookup where std::unordered_map costs two or three.
//
// Node ids are > 0 (0 is the root and never a child; it marks empty slots).
// add_child / find_child / remove_child: the same table behind an inline only
// child (PrefixCache, GlobalPrefixIndex).
// Lookups only: nothing iterates the table, so its layout never reaches an
// output (determinism).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/core/huge_page_allocator.h"
#include "sim/core/request.h"

namespace servesim {

class ChildIndex {
 public:
  ChildIndex() : slots_(16) {}

  // The child of `parent` reached by block `hash`, or 0.
  std::uint32_t find(std::uint32_t parent, BlockHash hash) const {
    for (std::size_t i = home(parent, hash);; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.child == 0) return 0;
      if (s.hash == hash && s.parent == parent) return s.child;
    }
  }
  // REQUIRES: no child of `parent` with `hash` yet; child > 0.
  void insert(std::uint32_t parent, BlockHash hash, std::uint32_t child) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(Slot{hash, parent, child});
    ++size_;
  }
  // REQUIRES: the entry exists.
  void erase(std::uint32_t parent, BlockHash hash) {
    std::size_t i = home(parent, hash);
    while (!(slots_[i].hash == hash && slots_[i].parent == parent)) i = (i + 1) & mask();
    // Backward shift: pull later entries of the probe run into the hole.
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      if (slots_[j].child == 0) break;
      const std::size_t k = home(slots_[j].parent, slots_[j].hash);
      const bool movable = i <= j ? (k <= i || k > j) : (k <= i && k > j);
      if (movable) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
  }
  // REQUIRES: the entry exists. Points it at another child.
  void replace(std::uint32_t parent, BlockHash hash, std::uint32_t child) {
    std::size_t i = home(parent, hash);
    while (!(slots_[i].hash == hash && slots_[i].parent == parent)) i = (i + 1) & mask();
    slots_[i].child = child;
  }
  std::size_t size() const { return size_; }

  // Children of radix nodes that keep their only child inline: while a parent
  // has at most one child it is `only` (0: none) and the table holds none of its
  // children; from its second child on all of them are in the table (in_table)
  // until it has none. Chains, most of a radix tree, never touch the table.
  // `hash_of(id)` gives a child's block id (read from the caller's node array).
  template <typename HashOf>
  std::uint32_t find_child(std::uint32_t parent, BlockHash hash, std::uint32_t only, bool in_table,
                           HashOf hash_of) const {
    if (in_table) return find(parent, hash);
    return only != 0 && hash_of(only) == hash ? only : 0;
  }
  template <typename HashOf>
  void add_child(std::uint32_t parent, BlockHash hash, std::uint32_t child, std::uint32_t& only, bool& in_table,
                 HashOf hash_of) {
    if (in_table) {
      insert(parent, hash, child);
    } else if (only == 0) {
      only = child;
    } else {  // a second child: both go to the table
      insert(parent, hash_of(only), only);
      insert(parent, hash, child);
      only = 0;
      in_table = true;
    }
  }
  // `children`: the parent's child count before the removal.
  void remove_child(std::uint32_t parent, BlockHash hash, std::int32_t children, std::uint32_t& only,
                    bool& in_table) {
    if (in_table) {
      erase(parent, hash);
      in_table = children > 1;
    } else {
      only = 0;
    }
  }
  // Invariant checks of the rule (check_invariants, O(1) each): a parent's state
  // fits its child count, and `child` is found and kept where the state says.
  static bool parent_state_ok(std::uint32_t only, bool in_table, std::int32_t children) {
    return in_table ? children > 0 && only == 0 : children <= 1;
  }
  template <typename HashOf>
  bool child_kept(std::uint32_t parent, BlockHash hash, std::uint32_t child, std::uint32_t only, bool in_table,
                  HashOf hash_of) const {
    return find_child(parent, hash, only, in_table, hash_of) == child && in_table == (find(parent, hash) == child);
  }

 private:
  struct Slot {
    BlockHash hash = 0;
    std::uint32_t parent = 0;
    std::uint32_t child = 0;  // 0 = empty
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t home(std::uint32_t parent, BlockHash hash) const {
    std::uint64_t z = hash ^ (static_cast<std::uint64_t>(parent) * 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(z ^ (z >> 29)) & mask();
  }
  void place(const Slot& s) {
    std::size_t i = home(s.parent, s.hash);
    while (slots_[i].child != 0) i = (i + 1) & mask();
    slots_[i] = s;
  }
  void grow() {
    std::vector<Slot, HugePageAllocator<Slot>> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.child != 0) place(s);
  }

  std::vector<Slot, HugePageAllocator<Slot>> slots_;  // huge pages when large (a global index's)
  std::size_t size_ = 0;
};

}  // namespace servesim
