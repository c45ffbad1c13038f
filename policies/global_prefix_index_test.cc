// GlobalPrefixIndex: a record() given the path an earlier record() (or match()) of the same
// prompt remembered must leave the index exactly as a plain record() does,
// whatever happened in between (evictions, node reuse, subtree moves), and
// the tops list must follow each worker's LRU order; and the index must behave
// exactly as the reference (its a3aeaa4 form, holders in a vector per node)
// with many workers per node (holder lists spilling out of the node and back).
// The workers' small capacities make their LRU logs compact often (each test
// rewrites logs several hundred times), so the LRU orders it compares cover
// logs before and after compaction. A worker's stamps renumbered (before they
// would wrap, or when its stale bits span far more stamps than it holds) must
// change nothing one can observe either.
#include <doctest/doctest.h>

#include <vector>

#include "policies/global_prefix_index.h"
#include "policies/testing/reference_prefix_index.h"
#include "sim/core/rng.h"

using namespace servesim;

namespace {

// Prompts over 6 templates of 1-8 blocks, with own tails of 0-6 blocks; a few
// reuse a template block id with another length (a partial last block).
RequestSpec random_prompt(Rng& rng, RequestId id) {
  RequestSpec s;
  s.id = id;
  s.prefix_block_size = 16;
  const std::uint64_t t = rng.below(6);
  const std::size_t shared = 1 + rng.below(8), own = rng.below(7);
  for (std::size_t i = 0; i < shared; ++i) s.prefix_blocks.push_back(t * 100 + i + 1);
  for (std::size_t i = 0; i < own; ++i) s.prefix_blocks.push_back(1'000'000 + id * 10 + i);
  const std::int64_t blocks = static_cast<std::int64_t>(s.prefix_blocks.size());
  s.prompt_tokens = 16 * blocks - (rng.below(4) == 0 ? static_cast<std::int64_t>(rng.below(15)) : 0);
  return s;
}

// Everything the index lets one observe, per worker, for the prompts seen.
template <class Index>
std::vector<std::int64_t> observe(const Index& v, const std::vector<RequestSpec>& prompts) {
  std::vector<std::int64_t> out, per;
  for (WorkerId w = 0; w < v.workers(); ++w) {
    out.push_back(v.held_tokens(w));
    v.visit_tops(w, [&](IndexNodeId t) { out.push_back(t); });
    v.visit_lru(w, 1 << 30, [&](IndexNodeId n, std::int64_t tokens, std::uint32_t generation) {
      out.insert(out.end(), {n, tokens, generation});
    });
  }
  for (const RequestSpec& s : prompts) {
    const auto m = v.match(s, per);
    out.insert(out.end(), {m.node, m.tokens});
    out.insert(out.end(), per.begin(), per.end());
  }
  out.push_back(static_cast<std::int64_t>(v.nodes()));
  return out;
}

// Two indexes of 4 workers with the same small capacities (their logs compact often).
void small_capacities(GlobalPrefixIndex& a, GlobalPrefixIndex& b) {
  for (WorkerId w = 0; w < 4; ++w) {
    a.set_capacity(w, 200 + 100 * w);
    b.set_capacity(w, 200 + 100 * w);
  }
}

// One random step, the same on both indexes (of 4 workers): a new prompt (half the
// time), an earlier prompt again on any worker (`b` with the path it remembered for
// it), or a subtree moving between workers. In a third of the records `b`'s path is
// instead what its match() of the prompt just walked (as D²LPM's routing does).
void random_step(Rng& rng, GlobalPrefixIndex& a, GlobalPrefixIndex& b, std::vector<RequestSpec>& prompts,
                 std::vector<GlobalPrefixIndex::RecordedPath>& paths) {
  const std::uint64_t op = rng.below(10);
  const WorkerId w = static_cast<WorkerId>(rng.below(4));
  const bool from_match = rng.below(3) == 0;
  const auto walk = [&](std::size_t i) {  // b's match of prompt i, both matches compared
    if (!from_match) return;
    std::vector<std::int64_t> per_a, per_b;
    const auto ma = a.match(prompts[i], per_a);
    const auto mb = b.match(prompts[i], per_b, &paths[i]);
    CHECK(ma.node == mb.node);
    CHECK(per_a == per_b);
  };
  if (op < 5 || prompts.empty()) {
    prompts.push_back(random_prompt(rng, prompts.size()));
    paths.emplace_back();
    walk(prompts.size() - 1);
    a.record(prompts.back(), w);
    b.record(prompts.back(), w, &paths.back());
  } else if (op < 9) {
    const std::size_t i = rng.below(prompts.size());
    walk(i);
    a.record(prompts[i], w);
    b.record(prompts[i], w, &paths[i]);
  } else {
    std::vector<std::int64_t> per;
    const RequestSpec& s = prompts[rng.below(prompts.size())];
    const IndexNodeId t = a.top_of(a.match(s, per).node);
    const WorkerId to = static_cast<WorkerId>(rng.below(4));
    if (t != 0 && a.owns(t, w)) CHECK(a.move_subtree(t, w, to) == b.move_subtree(t, w, to));
  }
}

// For seeds 1..seeds, 400 random steps on two fresh indexes `a` and `b` (above),
// both then compared and `b` checked; before(step, rng, b) runs before each step,
// done(a, b) after the last.
template <class Before, class Done>
void paired_runs(std::uint64_t seeds, Before before, Done done) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    CAPTURE(seed);
    Rng rng(seed);
    GlobalPrefixIndex a(4), b(4);
    small_capacities(a, b);
    std::vector<RequestSpec> prompts;
    std::vector<GlobalPrefixIndex::RecordedPath> paths;
    for (int step = 0; step < 400; ++step) {
      before(step, rng, b);
      random_step(rng, a, b, prompts, paths);
      REQUIRE(a.last_path() == b.last_path());
      REQUIRE(observe(a, prompts) == observe(b, prompts));
      b.check_invariants();
    }
    done(a, b);
  }
}

}  // namespace

TEST_CASE("a record() with a remembered path equals a plain one, and the tops list keeps LRU order") {
  // `a` records plainly, `b` with the paths it remembered.
  paired_runs(
      20, [](int, Rng&, GlobalPrefixIndex&) {},
      [](const GlobalPrefixIndex& a, const GlobalPrefixIndex& b) { CHECK(a.nodes() == b.nodes()); });
}

namespace {
// Random records and moves on `used` (eight workers) of an index of `workers`,
// compared with the reference index after every step, for seeds 1..seeds.
struct Shape {
  WorkerId workers;
  std::vector<WorkerId> used;
  std::uint64_t seeds;
};
void compare_with_reference(const Shape& shape) {
  for (std::uint64_t seed = 1; seed <= shape.seeds; ++seed) {
    CAPTURE(shape.workers);
    CAPTURE(seed);
    Rng rng(seed);
    GlobalPrefixIndex index(shape.workers);
    testing::ReferencePrefixIndex ref(shape.workers);
    for (std::size_t k = 0; k < shape.used.size(); ++k) {
      index.set_capacity(shape.used[k], static_cast<std::int64_t>(150 + 60 * k));
      ref.set_capacity(shape.used[k], static_cast<std::int64_t>(150 + 60 * k));
    }
    const auto any_worker = [&] { return shape.used[rng.below(shape.used.size())]; };
    std::vector<RequestSpec> prompts;
    std::vector<GlobalPrefixIndex::RecordedPath> paths;
    std::vector<testing::ReferencePrefixIndex::RecordedPath> ref_paths;
    std::size_t most_holders = 0;
    for (int step = 0; step < 600; ++step) {
      const std::uint64_t op = rng.below(10);
      const WorkerId w = any_worker();
      if (op < 4 || prompts.empty()) {  // a new prompt
        prompts.push_back(random_prompt(rng, prompts.size()));
        paths.emplace_back();
        ref_paths.emplace_back();
        index.record(prompts.back(), w, &paths.back());
        ref.record(prompts.back(), w, &ref_paths.back());
      } else if (op < 9) {  // an earlier prompt again, anywhere; half the time with its remembered path
        const std::size_t i = rng.below(prompts.size());
        if (rng.below(2) == 0) {
          index.record(prompts[i], w, &paths[i]);
          ref.record(prompts[i], w, &ref_paths[i]);
        } else {
          index.record(prompts[i], w);
          ref.record(prompts[i], w);
        }
      } else {  // a subtree moves
        std::vector<std::int64_t> per;
        const RequestSpec& s = prompts[rng.below(prompts.size())];
        const IndexNodeId t = ref.top_of(ref.match(s, per).node);
        const WorkerId to = any_worker();
        if (t != 0 && ref.owns(t, w)) REQUIRE(index.move_subtree(t, w, to) == ref.move_subtree(t, w, to));
      }
      REQUIRE(index.last_path() == ref.last_path());
      REQUIRE(index.slots() == ref.slots());
      REQUIRE(observe(index, prompts) == observe(ref, prompts));
      for (IndexNodeId n = 1; n < ref.slots(); ++n) {
        if (!ref.alive(n)) continue;
        std::size_t holders = 0;
        for (WorkerId x : shape.used) {
          REQUIRE(index.owns(n, x) == ref.owns(n, x));
          holders += ref.owns(n, x) ? 1 : 0;
        }
        most_holders = std::max(most_holders, holders);
      }
      index.check_invariants();
    }
    CHECK(most_holders > 3);  // the spilled holder lists were exercised
  }
}
}  // namespace

TEST_CASE("the index equals the reference index, holder lists spilling out of nodes and back") {
  // Of 8 workers; of 192 (a spilled node keeps a holder mask of three words: ids
  // in each word are used); of 200 (too many for the mask: holder lists are read).
  compare_with_reference({8, {0, 1, 2, 3, 4, 5, 6, 7}, 20});
  compare_with_reference({192, {0, 1, 63, 64, 127, 128, 190, 191}, 4});
  compare_with_reference({200, {0, 1, 63, 64, 127, 128, 191, 199}, 4});
}

TEST_CASE("a worker's stamps renumbered before they wrap change nothing one can observe") {
  // `b` draws each worker's stamps from just below the largest one, again and
  // again, so its logs are renumbered many times; `a` only when its stale bits
  // span too many stamps (rarely, at these sizes).
  paired_runs(
      10,
      [](int step, Rng& rng, GlobalPrefixIndex& b) {
        if (step % 25 != 0) return;  // the next few touches reach the last stamp
        for (WorkerId w = 0; w < 4; ++w) b.skip_stamps(w, 0xFFFFFFFFu - static_cast<std::uint32_t>(rng.below(8)));
      },
      [](const GlobalPrefixIndex& a, const GlobalPrefixIndex& b) {
        CHECK(b.renumbers() >= a.renumbers() + 32);  // most workers wrapped most times
      });
}

TEST_CASE("stale bits spanning far more stamps than a worker holds are renumbered, and change nothing") {
  // One prompt recorded once and never touched again stays the least recent
  // holding while three others are touched over and over: the stale bits would
  // span ever more stamps; the index renumbers instead. Compared with the
  // reference (which has no stale bits) throughout.
  GlobalPrefixIndex index(2);
  testing::ReferencePrefixIndex ref(2);
  for (WorkerId w = 0; w < 2; ++w) {
    index.set_capacity(w, 1 << 20);
    ref.set_capacity(w, 1 << 20);
  }
  Rng rng(7);
  std::vector<RequestSpec> prompts;
  for (RequestId id = 0; id < 4; ++id) prompts.push_back(random_prompt(rng, id));
  index.record(prompts[0], 0);
  ref.record(prompts[0], 0);
  for (int step = 0; step < 3000; ++step) {
    const RequestSpec& s = prompts[1 + rng.below(3)];
    const WorkerId w = static_cast<WorkerId>(rng.below(2));
    index.record(s, w);
    ref.record(s, w);
    if (step % 100 == 0) {
      REQUIRE(observe(index, prompts) == observe(ref, prompts));
      index.check_invariants();
    }
  }
  REQUIRE(observe(index, prompts) == observe(ref, prompts));
  index.check_invariants();
  CHECK(index.renumbers() >= 2);
}
