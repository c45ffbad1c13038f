// WorkEstimator: its memoized answers must be exactly what the cost model
// says for the same batch, whichever model, token count and context is asked,
// in any order (the memo table is small, so entries collide and are replaced).
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "costmodel/batch_shape.h"
#include "policies/work_estimator.h"
#include "sim/core/rng.h"

using namespace servesim;

namespace {

// A pure model whose time depends on every input of a prefill chunk (tokens
// and context separately, not only their sum) and on the instance (`salt`).
class ShapeHashModel final : public CostModel {
 public:
  explicit ShapeHashModel(std::int64_t salt) : salt_(salt) {}
  Time iteration_time(const BatchShape& b) const override {
    Time t = 1000 + salt_;
    for (const PrefillChunk& p : b.prefills) t += p.new_tokens * (7 + salt_) + p.context * 3 + (p.new_tokens * p.context) % 101;
    for (std::int64_t c : b.decode_contexts) t += 11 + c;
    return t;
  }
  std::string identity() const override { return "shape hash"; }
  bool calibrated() const override { return false; }

 private:
  std::int64_t salt_;
};

double direct_prefill_s(const CostModel& m, std::int64_t tokens, std::int64_t context) {
  BatchShape b;
  b.prefills.push_back(PrefillChunk{tokens, context, true});
  return time_to_seconds(m.iteration_time(b));
}

}  // namespace

TEST_CASE("WorkEstimator::prefill_s answers exactly what the model says, memo or not") {
  const ShapeHashModel a(0), b(5);
  WorkEstimator est;
  Rng rng(42);
  for (int i = 0; i < 200000; ++i) {
    const CostModel& m = rng.below(2) == 0 ? static_cast<const CostModel&>(a) : b;
    // Small ranges: the same questions come back, and many share a memo slot.
    const std::int64_t tokens = static_cast<std::int64_t>(rng.below(300)) - 5;
    const std::int64_t context = static_cast<std::int64_t>(rng.below(40)) * 64;
    const double want = tokens <= 0 ? 0.0 : direct_prefill_s(m, tokens, context);
    REQUIRE(est.prefill_s(m, tokens, context) == want);
  }
}

TEST_CASE("WorkEstimator::decode_step_s is one decode step of the batch, and decode_token_s its share per request") {
  const ShapeHashModel a(0), b(5);
  WorkEstimator est;
  for (int round = 0; round < 2; ++round) {  // the second round answers from the memo
    for (const CostModel* m : {static_cast<const CostModel*>(&a), static_cast<const CostModel*>(&b)}) {
      for (const std::int64_t batch : {0, 1, 7, 256}) {
        for (const std::int64_t ctx : {0, 100, 129, 5000}) {
          CAPTURE(batch);
          CAPTURE(ctx);
          BatchShape s;
          const std::int64_t n = std::max<std::int64_t>(1, batch), rounded = (ctx + 128) / 256 * 256;
          s.decode_contexts.assign(static_cast<std::size_t>(n), rounded);
          const double step = time_to_seconds(m->iteration_time(s));
          CHECK(est.decode_step_s(*m, batch, ctx) == step);
          CHECK(est.decode_token_s(*m, batch, ctx) == step / static_cast<double>(n));
        }
      }
    }
  }
  // Many shapes over small ranges: the same questions come back, and many share a memo slot.
  Rng rng(7);
  for (int i = 0; i < 20000; ++i) {
    const CostModel& m = rng.below(2) == 0 ? static_cast<const CostModel&>(a) : b;
    const std::int64_t batch = static_cast<std::int64_t>(rng.below(300));
    const std::int64_t ctx = static_cast<std::int64_t>(rng.below(9000));
    BatchShape s;
    s.decode_contexts.assign(static_cast<std::size_t>(std::max<std::int64_t>(1, batch)), (ctx + 128) / 256 * 256);
    REQUIRE(est.decode_step_s(m, batch, ctx) == time_to_seconds(m.iteration_time(s)));
  }
}
