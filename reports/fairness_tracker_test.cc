// FairnessTracker against service differences computed by hand on a small
// timeline (two clients, w_in = 1, w_out = 2, one sample per second).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

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

namespace {

// Two clients, both backlogged from 0 s to the end (10 s), w_in = 1, w_out = 2,
// one sample per second. Warm-up [0, 4): only client 0 is served (100 prompt
// tokens at 0 s, 10 output tokens at 1, 2 and 3 s): S0 = 160, S1 = 0.
// Window [4, 8]: both get 10 output tokens at 5 and 6 s (+40 each): D stays 160.
// Cool-down (8, 10]: client 0 gets 50 output tokens at 9 s (+100): D = 260.
void unfair_warmup_fair_window(FairnessTracker& f) {
  for (ClientId c : {0u, 1u})
    for (int i = 0; i < 3; ++i) {
      f.on_arrival(0);
      f.on_queued(c, 0);
    }
  f.on_admitted(request(0, 100), 0, 0, true);
  for (int t = 1; t <= 3; ++t) f.on_output_tokens(0, t * kNsPerSec, 10);
  for (int t = 5; t <= 6; ++t) {
    f.on_output_tokens(0, t * kNsPerSec, 10);
    f.on_output_tokens(1, t * kNsPerSec, 10);
  }
  f.on_output_tokens(0, 9 * kNsPerSec, 50);
  f.finish(10 * kNsPerSec);
}

}  // namespace

TEST_CASE("over the measurement window: fair inside it, unfair in the warm-up and cool-down") {
  FairnessTracker f(1.0, 2.0, kNsPerSec);
  WindowOptions w;
  w.warmup = 4 * kNsPerSec;    // start: first arrival (0) + 4 s
  w.cooldown = 2 * kNsPerSec;  // end: run end (10 s) - 2 s
  f.enable_window(w);
  unfair_warmup_fair_window(f);

  // Whole run: D goes 0 -> 100 (t=0) -> 160 (t=3) -> 260 (t=9): max - min = 260.
  const FairnessTracker::Measures run = f.measures(2, 10.0);
  CHECK(run.diff_max == doctest::Approx(260));
  CHECK(run.diff_mean > 100);
  // Jain over 30 and 4 tokens/s: 34^2 / (2 (900 + 16)).
  CHECK(run.jain == doctest::Approx(34.0 * 34 / (2 * 916.0)));

  const auto win = f.window_measures(4 * kNsPerSec, 8 * kNsPerSec, 2);
  REQUIRE(win.has_value());
  CHECK(win->m.diff_max == 0);
  CHECK(win->m.diff_mean == 0);
  CHECK(win->m.extend_diff_max == 0);
  CHECK(win->m.jain == doctest::Approx(1.0));
  CHECK(win->m.jain_extend == doctest::Approx(1.0));
  REQUIRE(win->service.size() == 2);
  CHECK(win->service[0] == 40);
  CHECK(win->service[1] == 40);
  CHECK(win->extend_service[1] == 40);
  CHECK(win->backlogged_s[0] == doctest::Approx(4.0));
  CHECK(win->backlogged_s[1] == doctest::Approx(4.0));

  // Another start than the one the tracker saw: not measurable.
  CHECK_FALSE(f.window_measures(3 * kNsPerSec, 8 * kNsPerSec, 2).has_value());
  // An empty window: no difference, equal (zero) service.
  const auto empty = f.window_measures(4 * kNsPerSec, 4 * kNsPerSec, 2);
  REQUIRE(empty.has_value());
  CHECK(empty->m.diff_max == 0);
  CHECK(empty->m.jain == 1.0);
}

TEST_CASE("over (nearly) the whole run the windowed measures are the whole-run ones, which a window leaves unchanged") {
  FairnessTracker plain(1.0, 2.0, kNsPerSec);
  unfair_warmup_fair_window(plain);
  CHECK_FALSE(plain.window_measures(0, 10 * kNsPerSec, 2).has_value());  // no window enabled

  FairnessTracker f(1.0, 2.0, kNsPerSec);
  WindowOptions w;
  w.cooldown = 1;  // 1 ns: the window is [first arrival, run end - 1 ns], nearly the whole run
  f.enable_window(w);
  unfair_warmup_fair_window(f);
  const FairnessTracker::Measures a = plain.measures(2, 10.0), b = f.measures(2, 10.0);
  CHECK(a.diff_max == b.diff_max);
  CHECK(a.diff_mean == b.diff_mean);
  CHECK(a.jain == b.jain);
  // Over (nearly) the whole run the windowed measures are the whole-run ones.
  const auto win = f.window_measures(0, 10 * kNsPerSec - 1, 2);
  REQUIRE(win.has_value());
  CHECK(win->m.diff_max == doctest::Approx(a.diff_max));
  CHECK(win->m.diff_mean == doctest::Approx(a.diff_mean));
  CHECK(win->m.jain == doctest::Approx(a.jain));
  CHECK(win->service[0] == plain.service(0));
  CHECK(win->service[1] == plain.service(1));
  CHECK(win->backlogged_s[0] == doctest::Approx(plain.backlogged_s(0)));
}

TEST_CASE("the window history stays bounded on a long run (cool-down by time and by count)") {
  // 20,000 s, two clients alternately served every 0.5 s, both always backlogged.
  for (int by_count = 0; by_count < 2; ++by_count) {
    FairnessTracker f(1.0, 2.0, kNsPerSec);
    WindowOptions w;
    w.warmup = 100 * kNsPerSec;
    if (by_count) w.cooldown_requests = 10;
    else w.cooldown = 10 * kNsPerSec;
    f.enable_window(w);
    f.on_arrival(0);
    f.on_queued(0, 0);
    f.on_arrival(0);
    f.on_queued(1, 0);
    std::size_t most = 0;
    const int steps = 40000;
    for (int i = 1; i <= steps; ++i) {
      const Time t = i * kNsPerSec / 2;
      if (i % 10 == 0) {  // an arrival every 5 s keeps the count-based end moving
        f.on_arrival(t);
        f.on_queued(i % 20 == 0 ? 0 : 1, t);
      }
      f.on_output_tokens(static_cast<ClientId>(i % 2), t, 1);
      most = std::max(most, f.window_history_kept());
    }
    f.finish(static_cast<Time>(steps) * kNsPerSec / 2);
    CAPTURE(by_count);
    CHECK(most < 400);  // not growing with the 40,000 steps
    // End 10 s before the run's end (by time) or at the 10th-last arrival (every 5 s: 50 s before).
    const Time end = static_cast<Time>(steps) * kNsPerSec / 2 - (by_count ? 45 : 10) * kNsPerSec;
    const auto win = f.window_measures(100 * kNsPerSec, end, 2);
    REQUIRE(win.has_value());
    // Each client got 1 output token (service 2) per second of the window (± the edges).
    const double span = time_to_seconds(end - 100 * kNsPerSec);
    CHECK(std::abs(win->service[0] - 2 * span) <= 4.0);  // w_out = 2
    CHECK(std::abs(win->service[1] - 2 * span) <= 4.0);
    CHECK(win->m.jain > 0.999);
    CHECK(win->m.diff_max <= 2.0);
  }
}

TEST_CASE("n tokens in one call give the same bits as n calls of one token, for every kind of weight") {
  // on_output_tokens takes one multiply-add where that is exact (integral
  // weight and sums) and adds token by token otherwise; both must give the
  // sums of n single-token calls bit for bit. Weights: integral, fractional
  // with and without an exact binary value, and integral but with a
  // fractional service from a fractional input weight.
  const std::vector<std::pair<double, double>> weights = {{1, 2}, {1, 1}, {3, 7}, {0.5, 0.5}, {1, 0.1}, {0.3, 2}};
  const std::vector<std::int64_t> counts = {1, 2, 3, 17, 250, 1000};
  for (const auto& w : weights) {
    FairnessTracker one(w.first, w.second, kNsPerSec), many(w.first, w.second, kNsPerSec);
    Time t = 0;
    std::int64_t prompt = 7;
    for (std::int64_t n : counts) {
      t += kNsPerSec / 3;
      one.on_admitted(request(0, prompt), t, 3, true);
      many.on_admitted(request(0, prompt), t, 3, true);
      for (std::int64_t i = 0; i < n; ++i) one.on_output_tokens(0, t, 1);
      many.on_output_tokens(0, t, n);
      prompt = prompt * 5 + 1;
      CHECK(one.service(0) == many.service(0));
      CHECK(one.extend_service(0) == many.extend_service(0));
    }
    CHECK(std::signbit(one.service(0)) == std::signbit(many.service(0)));
  }
  // Near 2^53 the integral shortcut must not be taken: there token-by-token
  // sums round differently from one addition.
  FairnessTracker one(1, 1, kNsPerSec), many(1, 1, kNsPerSec);
  const std::int64_t big = (std::int64_t{1} << 53) - 2;
  one.on_admitted(request(0, big), 1, 0, true);
  many.on_admitted(request(0, big), 1, 0, true);
  for (int i = 0; i < 5; ++i) one.on_output_tokens(0, 2, 1);
  many.on_output_tokens(0, 2, 5);
  CHECK(one.service(0) == many.service(0));
  CHECK(one.service(0) == 9007199254740992.0);  // 2^53 - 2 + 1 + 1, then 2^53 + 1 rounds to 2^53 each time
}

TEST_CASE("output service equals token-by-token sums across clients, also once the sums leave the fast path") {
  // on_output_tokens skips the per-client exactness test while every sum is a
  // small integer (a bound kept over all clients). The sums must be those of
  // adding the weight once per token, whatever the path: check many clients
  // with random prompts and token counts, some prompts huge enough to push the
  // bound past 2^53 while other clients' sums stay small.
  const std::vector<std::pair<double, double>> weights = {{1, 2}, {2, 1}, {0.5, 3}, {1, 0.25}, {1, 0.1}};
  for (const auto& w : weights) {
    for (const bool huge : {false, true}) {
      FairnessTracker f(w.first, w.second, kNsPerSec);
      std::vector<double> s(3, 0.0), e(3, 0.0);
      std::uint64_t x = 88172645463325252ull;
      auto next = [&x] {  // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
      };
      Time t = 0;
      for (int step = 0; step < 400; ++step) {
        t += 1 + static_cast<Time>(next() % 3);
        const bool push = huge && step == 200;  // client 0's sums go near 2^53 here
        const auto c = push ? ClientId{0} : static_cast<ClientId>(next() % 3);
        if (push || next() % 4 == 0) {
          std::int64_t prompt = 1 + static_cast<std::int64_t>(next() % 5000);
          if (push) prompt = (std::int64_t{1} << 53) - 3;
          const std::int64_t cached = prompt / 3;
          f.on_queued(c, t);
          f.on_admitted(request(c, prompt), t, cached, true);
          s[c] += w.first * static_cast<double>(prompt);
          e[c] += w.first * static_cast<double>(prompt - cached);
        } else {
          const auto n = static_cast<std::int64_t>(next() % 40);
          f.on_output_tokens(c, t, n);
          for (std::int64_t i = 0; i < n; ++i) {
            s[c] += w.second;
            e[c] += w.second;
          }
        }
        for (ClientId k = 0; k < 3; ++k) {
          if (k >= f.clients()) continue;
          INFO("weights " << w.first << "/" << w.second << ", step " << step << ", client " << k);
          REQUIRE(f.service(k) == s[k]);
          REQUIRE(f.extend_service(k) == e[k]);
        }
      }
    }
  }
}
