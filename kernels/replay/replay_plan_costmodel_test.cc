// The cross-check of issue 19, item 3: the replay planner's launches (what the GPU replay
// runs) carry, part by part, the FLOPs and bytes the cost model's operation list
// (costmodel/operation_list.h) prices for the same batch; and `calibrate fidelity` reads
// the replay.csv that the GPU replay writes (replay_csv.h). Built in the full tree only
// (it links the simulator's cost model; the kernels-only build has none).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "costmodel/operation_list.h"
#include "costmodel/replay_fidelity.h"
#include "kernels/replay/replay_csv.h"
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

TEST_CASE("calibrate fidelity reads the replay.csv the GPU replay writes: shapes, measured median, prediction") {
  kernels::RecordedIteration a, b;
  a.iteration = 0;
  a.attention = "dense/dense/none";
  a.prefills = {{512, 1536, false}, {37, 0, true}};
  a.decodes = {511, 37};
  b.iteration = 10;
  b.worker = 3;
  b.attention = "dense/dense/none";
  b.decodes = {4095};
  const std::string text = kernels::replay_csv_header("batches.csv", "llama3-8b", 2, 2, 5, "H100 (test)") +
                           kernels::replay_csv_row(a, {1234.5, {3.0f, 1.0f, 2.0f}, 291, false}) +
                           kernels::replay_csv_row(b, {20.25, {0.5f, 0.25f}, 290, true});
  CHECK(text.find("# tp > 1: one GPU's shard ran") != std::string::npos);
  const auto path = std::filesystem::temp_directory_path() / ("servesim_replay_csv_test_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path, std::ios::binary) << text;
  const ReplayTable t = read_replay_csv(path.string());
  CHECK(t.backends == std::vector<std::string>{"recorded"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].iteration == 0);
  REQUIRE(t.rows[0].shape.prefills.size() == 2);
  CHECK(t.rows[0].shape.prefills[0].new_tokens == 512);
  CHECK(t.rows[0].shape.prefills[0].context == 1536);
  CHECK_FALSE(t.rows[0].shape.prefills[0].completes);
  CHECK(t.rows[0].shape.prefills[1].completes);
  CHECK(t.rows[0].shape.decode_contexts == std::vector<std::int64_t>{511, 37});
  CHECK(t.rows[0].measured_us == doctest::Approx(2000.0));  // median of 1, 2, 3 ms
  CHECK(t.rows[0].predicted_us[0] == doctest::Approx(1234.5));
  CHECK(t.rows[1].shape.decode_contexts == std::vector<std::int64_t>{4095});
  CHECK(t.rows[1].measured_us == doctest::Approx(500.0));  // upper median of 0.25, 0.5 ms
}

}  // namespace servesim
