// DependencyTracker: children wait for live parents and are released at the
// last parent's end + think time; finished parents are remembered for
// children pulled later; a failed or missing parent fails its children.
#include <doctest/doctest.h>

#include <vector>

#include "sim/dependency_tracker.h"

using namespace servesim;

namespace {

RequestHandle add(RequestTable& t, RequestId id, std::vector<RequestId> parents, std::int32_t dependents,
                  Time think = 0) {
  RequestSpec s;
  s.id = id;
  s.parents = std::move(parents);
  s.dependents = dependents;
  s.think_time = think;
  const RequestHandle h = t.add(std::move(s));
  t[h].dependents_unseen = dependents;
  return h;
}

}  // namespace

TEST_CASE("a child of two live parents is released at the later parent's end plus its think time") {
  RequestTable t;
  DependencyTracker d;
  const RequestHandle a = add(t, 1, {}, 1), b = add(t, 2, {}, 1);
  d.add_parent(1, a);
  d.add_parent(2, b);
  const RequestHandle c = add(t, 3, {1, 2}, 0, 5);
  REQUIRE(d.add_child(c, t, 10));
  CHECK(t[c].parents_left == 2);
  CHECK(t[c].ready_at == 10);
  std::vector<RequestHandle> released, rejected;
  auto release = [&](RequestHandle h) { released.push_back(h); };
  auto reject = [&](RequestHandle h) { rejected.push_back(h); };
  d.retire(t[a], true, 20, t, release, reject);
  CHECK(released.empty());
  CHECK(t[c].ready_at == 25);
  d.retire(t[b], true, 30, t, release, reject);
  CHECK(released == std::vector<RequestHandle>{c});
  CHECK(t[c].ready_at == 35);
  CHECK(rejected.empty());
}

TEST_CASE("a finished parent is remembered for a child pulled later, and a failed or missing parent fails the child") {
  RequestTable t;
  DependencyTracker d;
  std::vector<RequestHandle> released, rejected;
  auto release = [&](RequestHandle h) { released.push_back(h); };
  auto reject = [&](RequestHandle h) { rejected.push_back(h); };

  const RequestHandle p = add(t, 1, {}, 1);
  d.add_parent(1, p);
  d.retire(t[p], true, 40, t, release, reject);  // finished before its child is pulled
  const RequestHandle c = add(t, 2, {1}, 0, 3);
  REQUIRE(d.add_child(c, t, 50));
  CHECK(t[c].parents_left == 0);
  CHECK(t[c].ready_at == 50);  // max(now, 40 + 3)

  const RequestHandle q = add(t, 3, {}, 2);
  d.add_parent(3, q);
  const RequestHandle waiting = add(t, 4, {3}, 0);
  REQUIRE(d.add_child(waiting, t, 60));
  d.retire(t[q], false, 70, t, release, reject);  // rejected parent: the waiting child fails,
  CHECK(rejected == std::vector<RequestHandle>{waiting});
  const RequestHandle late = add(t, 5, {3}, 0);
  CHECK_FALSE(d.add_child(late, t, 80));           // and so does one pulled later
  const RequestHandle orphan = add(t, 6, {99}, 0);
  CHECK_FALSE(d.add_child(orphan, t, 80));         // a parent that never appeared
  CHECK(released.empty());
}

TEST_CASE("a chain of huge think times saturates instead of overflowing") {
  RequestTable t;
  DependencyTracker d;
  std::vector<RequestHandle> released, rejected;
  auto release = [&](RequestHandle h) { released.push_back(h); };
  auto reject = [&](RequestHandle h) { rejected.push_back(h); };
  const Time think = 4'000'000'000'000'000'000;
  const RequestHandle a = add(t, 1, {}, 1);
  d.add_parent(1, a);
  const RequestHandle b = add(t, 2, {1}, 1, think);
  REQUIRE(d.add_child(b, t, 0));
  d.add_parent(2, b);
  d.retire(t[a], true, think + 10, t, release, reject);
  CHECK(t[b].ready_at == DependencyTracker::kThinkCeiling);  // 8e18 + 10 would pass the ceiling
  const RequestHandle c = add(t, 3, {2}, 0, think);
  REQUIRE(d.add_child(c, t, DependencyTracker::kThinkCeiling));
  d.retire(t[b], true, DependencyTracker::kThinkCeiling + 5, t, release, reject);
  CHECK(t[c].ready_at == DependencyTracker::kThinkCeiling + 5);  // never before now, never overflowed
  CHECK(rejected.empty());
}
