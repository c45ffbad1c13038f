// FairnessTracker against service differences computed by hand on a small
// timeline (two clients, w_in = 1, w_out = 2, one sample per second).
#include <doctest/doctest.h>

#include "reports/fairness_tracker.h"

using namespace servesim;

namespace {

RequestSpec request(ClientId c, std::int64_t prompt) {
  RequestSpec r;
  r.client = c;
  r.prompt_tokens = prompt;
  return r;
}

}  // namespace

TEST_CASE("service, backlogged service differences and Jain's index match a hand computation") {
  // t=0   client 0 queues two requests, client 1 one: both backlogged, D = S0 - S1 = 0.
  // t=1   client 0's first is admitted: 100 prompt tokens, 40 cached.
  //       S0 = 100, E0 = 60 (extend counts uncached tokens only).
  // t=2   client 0 generates 5 tokens: S0 = 110, E0 = 70.
  // t=3   client 1's request is admitted (50 tokens, none cached): S1 = E1 = 50;
  //       client 1 has nothing waiting, so the joint interval [0, 3] closes.
  // t=4   end; client 0 still has one request waiting.
  // Samples of D over [0, 3]: 0, 100, 110, 60 -> diff_max = 110 - 0 = 110.
  // |D - D(0)| is 0 on [0,1), 100 on [1,2), 110 on [2,3) -> mean (0+100+110)/3 = 70.
  // Extend: D_e = 0, 60, 70, 20 -> max 70, mean (0+60+70)/3 = 130/3.
  FairnessTracker f(1.0, 2.0, kNsPerSec);
  f.on_queued(0, 0);
  f.on_queued(0, 0);
  f.on_queued(1, 0);
  CHECK(f.backlogged(0));
  CHECK(f.backlogged(1));
  f.on_admitted(request(0, 100), 1 * kNsPerSec, 40, true);
  f.on_output_tokens(0, 2 * kNsPerSec, 5);
  f.on_admitted(request(1, 50), 3 * kNsPerSec, 0, true);
  CHECK_FALSE(f.backlogged(1));
  f.finish(4 * kNsPerSec);

  CHECK(f.service(0) == 110);
  CHECK(f.extend_service(0) == 70);
  CHECK(f.service(1) == 50);
  CHECK(f.extend_service(1) == 50);
  CHECK(f.backlogged_s(0) == doctest::Approx(4.0));
  CHECK(f.backlogged_s(1) == doctest::Approx(3.0));

  const FairnessTracker::Measures m = f.measures(2, 4.0);
  CHECK(m.diff_max == doctest::Approx(110));
  CHECK(m.diff_mean == doctest::Approx(70));
  CHECK(m.extend_diff_max == doctest::Approx(70));
  CHECK(m.extend_diff_mean == doctest::Approx(130.0 / 3));
  // Jain over rates x = service / 4 s: (27.5 + 12.5)^2 / (2 (27.5^2 + 12.5^2)).
  CHECK(m.jain == doctest::Approx(1600.0 / (2 * 912.5)));
  CHECK(m.jain_extend == doctest::Approx(900.0 / (2 * 462.5)));
}

TEST_CASE("a re-admission after preemption adds no input service, and lone backlog has no pairs") {
  FairnessTracker f(1.0, 2.0, kNsPerSec);
  f.on_queued(0, 0);
  f.on_admitted(request(0, 100), 0, 0, true);
  f.on_queued(0, kNsPerSec);  // preempted, queued again
  f.on_admitted(request(0, 100), 2 * kNsPerSec, 0, false);
  f.finish(3 * kNsPerSec);
  CHECK(f.service(0) == 100);
  const FairnessTracker::Measures m = f.measures(1, 3.0);
  CHECK(m.diff_max == 0);
  CHECK(m.diff_mean == 0);
  CHECK(m.jain == doctest::Approx(1.0));
}
