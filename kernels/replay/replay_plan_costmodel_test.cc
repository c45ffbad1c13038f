// The cross-check of issue 19, item 3: the replay planner's launches (what the GPU replay
// runs) carry, part by part, the FLOPs and bytes the cost model's operation list
// (costmodel/operation_list.h) prices for the same batch. Built in the full tree only
// (it links the simulator's cost model; the kernels-only build has none).
#include <doctest/doctest.h>

#include <set>

#include "costmodel/operation_list.h"
#include "kernels/replay/replay_plan.h"

namespace servesim {
namespace {

ModelSpec spec_of(const kernels::ReplayModel& r) {
  ModelSpec m;
  m.name = r.name;
  m.layers = r.layers;
  m.hidden = r.hidden;
  m.heads = r.q_heads;
  m.kv_heads = r.kv_heads;
  m.head_dim = r.head_dim;
  m.intermediate = r.intermediate;
  m.vocab = r.vocab;
  return m;
}

BatchShape shape_of(const kernels::RecordedIteration& it) {
  BatchShape b;
  for (const auto& c : it.prefills) b.prefills.push_back({c.new_tokens, c.context, c.completes});
  b.decode_contexts = it.decodes;
  return b;
}

void cross_check(const kernels::ReplayModel& model, int tp, const kernels::RecordedIteration& it) {
  const kernels::ReplayPlan plan = kernels::plan_iteration(model, tp, it);
  const std::vector<Operation> ops = operation_list(spec_of(model), tp, shape_of(it));
  std::set<std::string> priced;
  double flops = 0, bytes = 0;
  for (const Operation& op : ops) {
    const std::string part(part_name(op.part));
    priced.insert(part);
    const double times = op.per_layer ? static_cast<double>(model.layers) : 1.0;
    INFO(model.name, " tp=", tp, " part ", part);
    CHECK(plan.flops(part) == doctest::Approx(op.flops * times).epsilon(1e-12));
    CHECK(plan.bytes(part) == doctest::Approx(op.bytes * times).epsilon(1e-12));
    flops += op.flops * times;
    bytes += op.bytes * times;
  }
  // Every launch is priced, except the ones named here (what the cost model does not see).
  double unpriced_bytes = 0;
  for (const auto& l : plan.launches) {
    if (priced.count(l.part)) continue;
    INFO("launch ", l.name, " part ", l.part);
    CHECK(l.part == "unpriced");
    CHECK(l.name == "logit_gather");
    unpriced_bytes += l.bytes;
  }
  CHECK(plan.total_flops() == doctest::Approx(flops).epsilon(1e-12));
  CHECK(plan.total_bytes() == doctest::Approx(bytes + unpriced_bytes).epsilon(1e-12));
}

}  // namespace

TEST_CASE("replay plan FLOPs and bytes agree part by part with the cost model's operation list") {
  kernels::RecordedIteration prefill_heavy, decode_only, mix;
  prefill_heavy.prefills = {{2048, 0, true}, {512, 1536, false}};
  decode_only.decodes = {100, 4000, 1, 0, 8191};
  mix.prefills = {{256, 0, false}, {37, 900, true}};
  mix.decodes = {511, 37, 1002};
  for (const auto* it : {&prefill_heavy, &decode_only, &mix}) {
    cross_check(kernels::tiny_replay_model(), 1, *it);
    cross_check(kernels::tiny_replay_model(), 2, *it);
    for (int tp : {1, 2, 4, 8}) cross_check(kernels::replay_model_by_name("llama3-8b"), tp, *it);
    cross_check(kernels::replay_model_by_name("llama2-7b"), 1, *it);
    cross_check(kernels::replay_model_by_name("llama3-70b"), 8, *it);
  }
}

}  // namespace servesim
