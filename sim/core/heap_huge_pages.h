// heap_huge_pages_poll(): once malloc's main heap (the memory it takes with brk,
// from the [heap] mapping's start to the break) spans kHeapHugeAfter bytes, has the
// kernel back it with transparent huge pages (THP), much as glibc's
// `glibc.malloc.hugetlb=1` tunable would from the start. Large simulations
// (radix prefix caches, global prefix views) read their heap at random; past a
// few MiB those reads miss the TLB too (with 4 KiB pages the second-level TLB
// covers about 6-8 MiB), and on a virtual machine each TLB miss walks two page
// tables, the guest's and the host's. docs/performance.md, "Huge pages for the
// large tables and a large run's heap", has the measurements.
//
// Contract:
//  - Call it now and then: the run wiring calls it with the engine's progress
//    updates (every 65,536 events). Until the threshold each call costs a few
//    loads (the first one reads /proc/self/maps for the heap's start); after it,
//    one madvise per growth of the heap. Thread-safe (a call that finds another
//    one under way returns at once).
//  - Below the threshold nothing changes: a small run keeps its footprint (a
//    huge page makes the heap's resident size grow in 2 MiB steps).
//  - Past it, once per process: malloc's top pad becomes kHeapTopPad, so the
//    heap grows in large untouched steps; the heap is advised MADV_HUGEPAGE
//    (each later growth too, as it appears), and what was touched already is
//    merged into huge pages at once (MADV_COLLAPSE, Linux 6.1; older kernels
//    refuse it and those pages stay small). The large structures of such runs
//    are built in their first events, before the first call, hence the merge.
//  - SERVESIM_HUGE_PAGES=off turns it off (sim/core/huge_page_allocator.h).
//  - A hint only: where THP is off ("never"), a kernel refuses the advice, or
//    the allocator is not glibc's (sanitizer builds), nothing observable
//    changes. No output depends on it.
//  - The main heap only: threads' malloc arenas (sweep jobs > 1) stay as they are.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "sim/core/huge_page_allocator.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>  // mallopt
#include <sys/mman.h>
#include <unistd.h>
#define SERVESIM_HEAP_HUGE_PAGES 1
#endif

namespace servesim {

inline constexpr std::size_t kHeapHugeAfter = std::size_t{8} << 20;  // heap bytes before huge pages
inline constexpr std::size_t kHeapTopPad = std::size_t{32} << 20;     // the heap's growth step after it

// What heap_huge_pages_poll() did so far (the engine bench prints it; tests).
struct HeapHugePagesState {
  bool on = false;               // the threshold was passed
  std::uintptr_t from = 0;       // the heap's start then
  std::uintptr_t advised = 0;    // [from, advised) was advised (the break, as of the last call)
  std::size_t advice_calls = 0;  // madvise(MADV_HUGEPAGE) calls made
};

namespace heap_huge_pages_detail {
inline std::mutex& lock() {
  static std::mutex m;
  return m;
}
inline HeapHugePagesState& state() {
  static HeapHugePagesState s;
  return s;
}
#ifdef SERVESIM_HEAP_HUGE_PAGES
// glibc 2.36's <sys/mman.h> lacks MADV_COLLAPSE: Linux's value (uapi asm-generic/mman-common.h).
#ifdef MADV_COLLAPSE
inline constexpr int kCollapse = MADV_COLLAPSE;
#else
inline constexpr int kCollapse = 25;
#endif
// The start of the [heap] mapping (/proc/self/maps), or `brk` when it cannot be
// read (read once: a process's heap starts where it started).
inline std::uintptr_t heap_start(std::uintptr_t brk) {
  static const std::uintptr_t start = [brk] {
    std::FILE* f = std::fopen("/proc/self/maps", "r");
    if (f == nullptr) return brk;
    std::uintptr_t lo = brk;
    char line[512];
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::strstr(line, "[heap]") != nullptr) {
        const unsigned long long a = std::strtoull(line, nullptr, 16);
        if (a != 0 && a < brk) lo = static_cast<std::uintptr_t>(a);
        break;
      }
    std::fclose(f);
    return lo;
  }();
  return start;
}
inline std::uintptr_t current_break() {  // (glibc: the cached break, no system call)
  return reinterpret_cast<std::uintptr_t>(sbrk(0));
}
#endif
}  // namespace heap_huge_pages_detail

inline HeapHugePagesState heap_huge_pages_state() {
  std::lock_guard<std::mutex> g(heap_huge_pages_detail::lock());
  return heap_huge_pages_detail::state();
}

// The main heap's size now: from its start to the break (0 where it is not known).
inline std::size_t main_heap_bytes() {
#ifdef SERVESIM_HEAP_HUGE_PAGES
  const std::uintptr_t brk = heap_huge_pages_detail::current_break();
  return brk - heap_huge_pages_detail::heap_start(brk);
#else
  return 0;
#endif
}

inline void heap_huge_pages_poll() {
#ifdef SERVESIM_HEAP_HUGE_PAGES
  std::unique_lock<std::mutex> g(heap_huge_pages_detail::lock(), std::try_to_lock);
  if (!g.owns_lock()) return;
  HeapHugePagesState& s = heap_huge_pages_detail::state();
  const std::uintptr_t brk = heap_huge_pages_detail::current_break();
  if (!s.on) {
    // (An allocator that is not glibc's, as in sanitizer builds, leaves the heap small.)
    const std::uintptr_t start = heap_huge_pages_detail::heap_start(brk);
    if (!huge_pages::enabled() || brk - start < kHeapHugeAfter) return;
    mallopt(M_TOP_PAD, static_cast<int>(kHeapTopPad));
    s.on = true;
    s.from = start;
    // The heap so far: advised, and its touched pages merged now.
    void* p = reinterpret_cast<void*>(s.from);
    madvise(p, brk - s.from, MADV_HUGEPAGE);
    madvise(p, brk - s.from, heap_huge_pages_detail::kCollapse);
    ++s.advice_calls;
    s.advised = brk;
    return;
  }
  if (brk < s.advised) s.advised = std::max(brk, s.from);  // trimmed: what grows back is advised again
  if (brk > s.advised) {
    madvise(reinterpret_cast<void*>(s.advised), brk - s.advised, MADV_HUGEPAGE);
    ++s.advice_calls;
    s.advised = brk;
  }
#endif
}

}  // namespace servesim
