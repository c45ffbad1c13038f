// HugePageAllocator<T>: the allocator of the few large tables the engine reads
// at random on every event (the cost model's token rows, a global prefix
// index's nodes and child table). A block of at least kMinBytes (2 MiB) gets a
// mapping of its own that starts on a 2 MiB boundary, and the kernel is asked
// (madvise MADV_HUGEPAGE) to back its whole 2 MiB spans with transparent huge
// pages: one TLB entry covers 2 MiB instead of 4 KiB. On a virtual machine a
// TLB miss walks the guest's and the host's page tables, so a random read of a
// table of a few MiB costs a page walk on top of its cache miss
// (docs/performance.md, "Huge pages for the large tables and a large run's
// heap": measured there).
// sim/core/heap_huge_pages.h does the same for the heap of a large run.
//
// Contract:
//  - Smaller blocks come from std::allocator: a table that stays small costs
//    nothing more.
//  - Memory: a large block maps whole 4 KiB pages, as malloc's mapping of it
//    would; its whole 2 MiB spans become resident whole when first touched
//    (with small pages, only the pages touched), so a table is resident up to
//    its capacity at most; its last part short of 2 MiB keeps small pages.
//  - Where the kernel keeps huge pages off ("never" in
//    /sys/kernel/mm/transparent_hugepage/enabled) or refuses the advice, the
//    block is an ordinary mapping: the same contents, only the TLB reach
//    differs. No output depends on it.
//  - SERVESIM_HUGE_PAGES=off (or 0) in the environment: no advice is given here,
//    by advise() (also the profile loader's) or by heap_huge_pages_poll() (a host where huge pages do not pay; an A/B
//    measurement with one binary). Unset, `on` or 1: on. Another value:
//    huge_pages::env_error() names it (servesim and the engine bench exit with it).
//  - A failed mapping throws std::bad_alloc, as operator new does.
//  - Stateless: every HugePageAllocator compares equal (containers may swap and
//    move their blocks freely).
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace servesim {

namespace huge_pages {
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64's PMD-sized page
inline constexpr std::size_t kMinBytes = kHugePage;             // smaller blocks: std::allocator

// SERVESIM_HUGE_PAGES (see the contract): whether advice is given.
inline bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("SERVESIM_HUGE_PAGES");
    return v == nullptr || !(std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0);
  }();
  return on;
}
// Empty, or what is wrong with SERVESIM_HUGE_PAGES's value.
inline std::string env_error() {
  const char* v = std::getenv("SERVESIM_HUGE_PAGES");
  if (v == nullptr) return {};
  for (const char* ok : {"on", "off", "1", "0"})
    if (std::strcmp(v, ok) == 0) return {};
  return std::string("environment variable SERVESIM_HUGE_PAGES: '") + v + "' is not one of on, off, 1, 0";
}

inline std::size_t page_size() {
  static const auto p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}
// The bytes a block of `bytes` maps: whole (small) pages.
inline std::size_t mapped_bytes(std::size_t bytes) { return (bytes + page_size() - 1) / page_size() * page_size(); }
// An address rounded up to a kHugePage boundary.
inline std::uintptr_t huge_ceil(std::uintptr_t a) { return (a + kHugePage - 1) & ~(kHugePage - 1); }
// The whole 2 MiB spans inside [p, p + bytes): [first, last), empty when last <= first.
struct HugeSpans {
  std::uintptr_t first = 0, last = 0;
  std::size_t bytes() const { return last > first ? last - first : 0; }
};
inline HugeSpans huge_spans(const void* p, std::size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  return {huge_ceil(begin), (begin + bytes) & ~(kHugePage - 1)};
}

// Asks for huge pages on huge_spans(p, bytes) (none when SERVESIM_HUGE_PAGES is
// off): a hint; a refusal leaves the pages small.
inline void advise(const void* p, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  const HugeSpans s = huge_spans(p, bytes);
  if (s.bytes() > 0 && enabled()) madvise(reinterpret_cast<void*>(s.first), s.bytes(), MADV_HUGEPAGE);
#endif
}

// A mapping of mapped_bytes(bytes) that starts on a kHugePage boundary, its
// whole 2 MiB spans advised for huge pages.
inline void* map(std::size_t bytes) {
  const std::size_t n = mapped_bytes(bytes);
  // Over-map by one huge page and cut the ends so the block starts on a boundary.
  void* raw = mmap(nullptr, n + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = huge_ceil(start);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t end = start + n + kHugePage;
  if (end > aligned + n) munmap(reinterpret_cast<void*>(aligned + n), end - (aligned + n));
  advise(reinterpret_cast<void*>(aligned), bytes);
  return reinterpret_cast<void*>(aligned);
}
inline void unmap(void* p, std::size_t bytes) noexcept { munmap(p, mapped_bytes(bytes)); }
}  // namespace huge_pages

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor): rebinding

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= huge_pages::kMinBytes) return static_cast<T*>(huge_pages::map(bytes));
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= huge_pages::kMinBytes)
      huge_pages::unmap(p, bytes);
    else
      std::allocator<T>{}.deallocate(p, n);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace servesim
