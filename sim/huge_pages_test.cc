// HugePageAllocator (sim/core/huge_page_allocator.h) and heap_huge_pages_poll()
// (sim/core/heap_huge_pages.h): blocks are where and what the contract says;
// the heap's advice starts only past its threshold, once, and covers the heap.
// Whether the kernel then backs the memory with huge pages is its affair (THP
// may be off): checked only where /proc says the mapping is eligible.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "sim/core/heap_huge_pages.h"
#include "sim/core/huge_page_allocator.h"

namespace servesim {
namespace {

constexpr std::uintptr_t kTwoMiB = std::uintptr_t{2} << 20;

bool aligned_2mib(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kTwoMiB == 0; }

// The kernel's THP mode ("always", "madvise" or "never"; empty when unknown).
std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(f, line);
  const auto open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// /proc/self/smaps' THPeligible for the mapping that holds p (-1: not found).
int thp_eligible(const void* p) {
  std::ifstream f("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    const auto dash = line.find('-');
    if (dash != std::string::npos && dash > 0 && line.find(' ') > dash && std::isxdigit(line[0])) {
      const std::uintptr_t lo = std::strtoull(line.c_str(), nullptr, 16);
      const std::uintptr_t hi = std::strtoull(line.c_str() + dash + 1, nullptr, 16);
      in = lo <= a && a < hi;
    } else if (in && line.rfind("THPeligible:", 0) == 0) {
      return std::atoi(line.c_str() + 12);
    }
  }
  return -1;
}

TEST_CASE("a large block is its own 2 MiB-aligned mapping, a small one comes from std::allocator") {
  HugePageAllocator<std::uint64_t> a;
  const std::size_t big = huge_pages::kMinBytes / sizeof(std::uint64_t) + 3;  // just over the threshold
  std::uint64_t* p = a.allocate(big);
  CHECK(aligned_2mib(p));
  for (std::size_t i = 0; i < big; ++i) p[i] = i * 7;  // writable to the end
  CHECK(p[big - 1] == (big - 1) * 7);
  CHECK(huge_pages::huge_spans(p, big * sizeof(std::uint64_t)).bytes() == kTwoMiB);  // its whole 2 MiB span
  if (const std::string mode = thp_mode(); mode == "always" || mode == "madvise") CHECK(thp_eligible(p) == 1);
  a.deallocate(p, big);

  std::uint64_t* q = a.allocate(16);  // small: an ordinary heap block
  q[15] = 1;
  CHECK(q[15] == 1);
  a.deallocate(q, 16);
  // Whole small pages mapped; whole 2 MiB spans advised (from a boundary, and from past one).
  CHECK(huge_pages::mapped_bytes(kTwoMiB + 1) == kTwoMiB + huge_pages::page_size());
  const void* at = reinterpret_cast<const void*>(kTwoMiB);
  CHECK(huge_pages::huge_spans(at, kTwoMiB - 1).bytes() == 0);
  CHECK(huge_pages::huge_spans(at, 3 * kTwoMiB - 1).bytes() == 2 * kTwoMiB);
  const void* past = reinterpret_cast<const void*>(kTwoMiB + 4096);
  CHECK(huge_pages::huge_spans(past, 2 * kTwoMiB).bytes() == kTwoMiB);
  CHECK(huge_pages::huge_spans(past, 3 * kTwoMiB).bytes() == 2 * kTwoMiB);
  CHECK(huge_pages::huge_spans(past, 3 * kTwoMiB).first == 2 * kTwoMiB);
}

TEST_CASE("a vector in huge pages keeps its contents across growth, copies and moves") {
  std::vector<std::int64_t, HugePageAllocator<std::int64_t>> v;
  for (std::int64_t i = 0; i < 600'000; ++i) v.push_back(i);  // 4.8 MB: crosses the threshold while growing
  CHECK(aligned_2mib(v.data()));
  CHECK(std::accumulate(v.begin(), v.end(), std::int64_t{0}) == std::int64_t{600'000} * 599'999 / 2);
  auto copy = v;
  CHECK(copy == v);
  auto moved = std::move(copy);
  CHECK(moved.size() == 600'000);
  moved.resize(10);
  moved.shrink_to_fit();  // back under the threshold: a heap block again
  CHECK(moved.back() == 9);
  CHECK(HugePageAllocator<int>() == HugePageAllocator<double>());
}

TEST_CASE("SERVESIM_HUGE_PAGES takes on, off, 1 or 0, and names any other value") {
  for (const char* ok : {"on", "off", "1", "0"}) {
    setenv("SERVESIM_HUGE_PAGES", ok, 1);
    CHECK(huge_pages::env_error().empty());
  }
  setenv("SERVESIM_HUGE_PAGES", "Off", 1);
  CHECK(huge_pages::env_error() == "environment variable SERVESIM_HUGE_PAGES: 'Off' is not one of on, off, 1, 0");
  unsetenv("SERVESIM_HUGE_PAGES");
  CHECK(huge_pages::env_error().empty());
}

TEST_CASE("the heap is advised once it passes the threshold, and its growth after") {
  heap_huge_pages_poll();  // this test binary's heap is small: nothing yet
#ifdef SERVESIM_HEAP_HUGE_PAGES
  if (main_heap_bytes() >= kHeapHugeAfter) {
    MESSAGE("the heap was large before the test: the threshold cannot be checked");
    return;
  }
  CHECK_FALSE(heap_huge_pages_state().on);
  // Small blocks (heap, not mmap) until the heap passes the threshold; under an
  // allocator that is not glibc's (sanitizers) the heap does not grow.
  std::vector<std::vector<char>> blocks;
  for (int i = 0; i < 1024 && main_heap_bytes() < kHeapHugeAfter + (std::size_t{1} << 20); ++i)
    blocks.emplace_back(64 << 10, 'x');
  heap_huge_pages_poll();
  HeapHugePagesState s = heap_huge_pages_state();
  if (main_heap_bytes() < kHeapHugeAfter) {
    MESSAGE("malloc is not glibc's here: the heap never grows, nothing is advised");
    CHECK_FALSE(s.on);
    return;
  }
  REQUIRE(s.on);
  CHECK(s.advice_calls == 1);
  CHECK(s.advised - s.from == main_heap_bytes());  // the whole heap, from its start
  heap_huge_pages_poll();                           // no growth: no call
  CHECK(heap_huge_pages_state().advice_calls == 1);
  // Growth past the top pad: the new part is advised by the next call.
  const std::uintptr_t before = s.advised;
  for (int i = 0; i < 4096 && reinterpret_cast<std::uintptr_t>(sbrk(0)) == before; ++i)
    blocks.emplace_back(64 << 10, 'y');
  REQUIRE(reinterpret_cast<std::uintptr_t>(sbrk(0)) > before);
  heap_huge_pages_poll();
  s = heap_huge_pages_state();
  CHECK(s.advice_calls == 2);
  CHECK(s.advised == reinterpret_cast<std::uintptr_t>(sbrk(0)));
  CHECK(s.advised - before >= kHeapTopPad);  // grown by the top pad at least
  if (const std::string mode = thp_mode(); mode == "always" || mode == "madvise")
    CHECK(thp_eligible(reinterpret_cast<const void*>(s.advised - 1)) == 1);
#else
  CHECK_FALSE(heap_huge_pages_state().on);  // not glibc on Linux: a no-op
  CHECK(main_heap_bytes() == 0);
#endif
}

}  // namespace
}  // namespace servesim
