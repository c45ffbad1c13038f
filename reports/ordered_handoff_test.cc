// OrderedHandoff (reports/ordered_handoff.h): every committed item is consumed
// once, in order, whether on the consumer thread or inline; a consumer error
// reaches the producer; a handoff destroyed early stops without hanging.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "reports/ordered_handoff.h"

using namespace servesim;

namespace {

struct Item {
  std::uint64_t n = 0;
  std::string text;  // reused slot by slot: its capacity stays
};

// Commits items 0..count-1 (text: the number); returns what consume() saw.
std::vector<std::uint64_t> run(std::uint64_t count, bool threaded, bool* started = nullptr) {
  std::vector<std::uint64_t> seen;
  bool text_ok = true;
  {
    OrderedHandoff<Item> h(
        1024,
        [&](Item& it) {
          seen.push_back(it.n);
          text_ok = text_ok && it.text == std::to_string(it.n);
        },
        threaded);
    for (std::uint64_t i = 0; i < count; ++i) {
      Item& it = h.slot();
      it.n = i;
      it.text = std::to_string(i);
      h.commit();
    }
    if (started) *started = h.threaded_now();
    h.finish();
  }
  CHECK(text_ok);
  return seen;
}

std::vector<std::uint64_t> iota(std::uint64_t count) {
  std::vector<std::uint64_t> v(count);
  for (std::uint64_t i = 0; i < count; ++i) v[i] = i;
  return v;
}

}  // namespace

TEST_CASE("an ordered handoff consumes every item once and in order, on its thread or inline") {
  using H = OrderedHandoff<Item>;
  for (const std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{H::kBatch},
                                    std::uint64_t{H::kStartAfter}, std::uint64_t{H::kStartAfter + 1},
                                    std::uint64_t{100'003}}) {
    CAPTURE(count);
    bool started = false;
    CHECK(run(count, true, &started) == iota(count));
    // The thread starts after kStartAfter items only (small runs stay on one thread).
    CHECK(started == (count >= H::kStartAfter + H::kBatch));
    CHECK(run(count, false, &started) == iota(count));
    CHECK(!started);
  }
}

TEST_CASE("an ordered handoff rethrows its consumer's error and consumes nothing after it") {
  for (const bool threaded : {true, false}) {
    CAPTURE(threaded);
    std::vector<std::uint64_t> seen;
    OrderedHandoff<Item> h(
        1024,
        [&](Item& it) {
          if (it.n == 5000) throw std::runtime_error("disk full at 5000");
          seen.push_back(it.n);
        },
        threaded);
    std::string error;
    try {
      for (std::uint64_t i = 0; i < 50'000; ++i) {
        h.slot().n = i;
        h.commit();
      }
      h.finish();
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    CHECK(error == "disk full at 5000");
    CHECK(seen == iota(5000));
  }
}

TEST_CASE("an ordered handoff destroyed before finish stops its thread with a prefix of the items consumed") {
  std::vector<std::uint64_t> seen;
  {
    OrderedHandoff<Item> h(1024, [&](Item& it) { seen.push_back(it.n); });
    for (std::uint64_t i = 0; i < 20'000; ++i) {
      h.slot().n = i;
      h.commit();
    }
    CHECK(h.threaded_now());
  }  // no finish(): e.g. the run failed
  CHECK(seen.size() <= 20'000);
  CHECK(seen.size() >= 1024);  // the inline ones at least
  CHECK(seen == iota(seen.size()));
}
