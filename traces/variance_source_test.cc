// Sources of variance for repetitions: the block bootstrap keeps sessions
// whole and arrivals ordered, with unique ids; jitter and output noise keep
// order and bounds; every source is a function of the seed alone.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "traces/variance_source.h"

namespace servesim {
namespace {

class VectorSource : public RequestSource {
 public:
  explicit VectorSource(std::vector<RequestSpec> r) : r_(std::move(r)) {}
  bool next(RequestSpec& out) override {
    if (i_ >= r_.size()) return false;
    out = r_[i_++];
    return true;
  }
  std::string describe() const override { return "vector"; }

 private:
  std::vector<RequestSpec> r_;
  std::size_t i_ = 0;
};

// 100 s of traffic: one request per second, every tenth the first turn of a
// two-turn session whose second turn depends on it.
std::vector<RequestSpec> trace() {
  std::vector<RequestSpec> out;
  RequestId id = 1;
  for (int s = 0; s < 100; ++s) {
    RequestSpec r;
    r.id = id++;
    r.arrival = seconds_to_time(s);
    r.prompt_tokens = 100 + s;
    r.output_tokens = 10 + s;
    if (s % 10 == 0) {
      r.session = static_cast<std::uint64_t>(s / 10 + 1);
      r.dependents = 1;
      out.push_back(r);
      RequestSpec turn = r;
      turn.id = id++;
      turn.parents = {r.id};
      turn.dependents = 0;
      turn.turn = 1;
      out.push_back(turn);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

std::vector<RequestSpec> drain(const VarianceConfig& v, std::uint64_t seed) {
  auto src = with_variance(std::make_unique<VectorSource>(trace()), v, seed);
  std::vector<RequestSpec> out;
  for (RequestSpec r; src->next(r);) out.push_back(r);
  return out;
}

VarianceConfig bootstrap(double block_s) {
  VarianceConfig v;
  v.resample = VarianceConfig::Resample::kBlockBootstrap;
  v.block_s = block_s;
  return v;
}

}  // namespace

TEST_CASE("block bootstrap: sessions whole, ids unique, arrivals ordered, a function of the seed") {
  const auto a = drain(bootstrap(10), 1);
  const auto b = drain(bootstrap(10), 2);
  const auto again = drain(bootstrap(10), 1);
  REQUIRE(!a.empty());
  std::set<RequestId> ids;
  Time last = 0;
  for (const RequestSpec& r : a) {
    CHECK(ids.insert(r.id).second);  // unique
    for (RequestId p : r.parents) CHECK(ids.count(p) == 1);  // parents first, in the stream
    if (r.parents.empty()) {
      CHECK(r.arrival >= last);
      last = r.arrival;
    }
    CHECK(r.arrival < seconds_to_time(100));  // 10 blocks of 10 s laid end to end
  }
  // Every session of the output has both its turns (each block has one session).
  std::multiset<std::uint64_t> sessions;
  for (const RequestSpec& r : a)
    if (r.session) sessions.insert(r.session);
  for (std::uint64_t s : sessions) CHECK(sessions.count(s) == 2);
  CHECK(sessions.size() == 20);  // 10 blocks, one session each
  // Another seed draws other blocks; the same seed the same ones.
  bool differ = a.size() != b.size();
  for (std::size_t i = 0; !differ && i < a.size(); ++i) differ = a[i].prompt_tokens != b[i].prompt_tokens;
  CHECK(differ);
  REQUIRE(again.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(again[i].id == a[i].id);
    CHECK(again[i].arrival == a[i].arrival);
  }
}

TEST_CASE("arrival jitter keeps order and the first arrival, and output noise keeps lengths at least 1") {
  VarianceConfig v;
  v.arrival_jitter = 0.5;
  v.output_noise = 2.0;
  const auto out = drain(v, 7);
  const auto base = trace();
  REQUIRE(out.size() == base.size());
  CHECK(out.front().arrival == base.front().arrival);
  Time last = 0;
  bool moved = false, changed = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    CHECK(out[i].id == base[i].id);
    CHECK(out[i].output_tokens >= 1);
    CHECK(out[i].prompt_tokens == base[i].prompt_tokens);
    if (out[i].parents.empty()) {
      CHECK(out[i].arrival >= last);
      last = out[i].arrival;
    }
    moved |= out[i].arrival != base[i].arrival;
    changed |= out[i].output_tokens != base[i].output_tokens;
  }
  CHECK(moved);
  CHECK(changed);
}

TEST_CASE("variance: auto resamples a trace only among repetitions, and nothing is active by default") {
  VarianceConfig v;
  CHECK(!v.active());
  VarianceConfig single = v;
  single.resolve(true);
  CHECK(single.resample == VarianceConfig::Resample::kNone);
  VarianceConfig repeated = v;
  repeated.repetitions = true;
  VarianceConfig synthetic = repeated;
  repeated.resolve(true);
  CHECK(repeated.resample == VarianceConfig::Resample::kBlockBootstrap);
  synthetic.resolve(false);
  CHECK(synthetic.resample == VarianceConfig::Resample::kNone);  // the seed already draws new arrivals
  const auto same = drain(single, 3);
  CHECK(same.size() == trace().size());
}

}  // namespace servesim
