// The replay's CPU side: the tiny model's reference forward pass (tiny_model.h) and the
// planner's launch list (replay_plan.h) shapes.
#include <doctest/doctest.h>

#include <cmath>

#include "kernels/common/host_util.h"
#include "kernels/replay/replay_plan.h"
#include "kernels/replay/tiny_model.h"

namespace servesim::kernels {
namespace {

RecordedIteration mixed() {
  RecordedIteration it;
  it.prefills = {{5, 3, true}, {4, 0, false}};
  it.decodes = {7, 1};
  return it;
}

}  // namespace

TEST_CASE("replay tiny model: logits are finite and deterministic, argmax is the sampled id") {
  const ReplayModel m = tiny_replay_model();
  CHECK(m.layers == 2);
  CHECK(m.hidden == 256);
  const ReplayWeights w = make_replay_weights(m, 11);
  ReplayReference a(w, 11), b(w, 11);
  const RecordedIteration it = mixed();
  const ForwardOutput x = a.run(replay_steps(it, 11, m.vocab, &a));
  const ForwardOutput y = b.run(replay_steps(it, 11, m.vocab, &b));
  REQUIRE(x.logits.size() == static_cast<size_t>(3 * m.vocab));  // one completing chunk + two decodes
  CHECK_FALSE(has_non_finite(x.logits));
  CHECK(x.logits == y.logits);
  CHECK(x.sampled == y.sampled);
  double sq = 0;
  for (float v : x.logits) sq += static_cast<double>(v) * v;
  CHECK(sq > 0);
  for (size_t r = 0; r < x.sampled.size(); ++r)
    for (int64_t v = 0; v < m.vocab; ++v) CHECK(x.logits[r * m.vocab + v] <= x.logits[r * m.vocab + x.sampled[r]]);
  // Another seed: other weights, other logits.
  const ReplayWeights w2 = make_replay_weights(m, 12);
  ReplayReference c(w2, 12);
  CHECK(c.run(replay_steps(it, 12, m.vocab, &c)).logits != x.logits);
}

TEST_CASE("replay tiny model: decoding token t after a prefill of t tokens equals the last row of a prefill of t+1") {
  const ReplayModel m = tiny_replay_model();
  const ReplayWeights w = make_replay_weights(m, 3);
  ReplayReference ref(w, 3);
  std::vector<int32_t> toks;
  for (int i = 0; i < 9; ++i) toks.push_back(replay_token(3, 0, i, m.vocab));
  const ForwardOutput whole = ref.run({{0, toks, true}});
  // Sequence 1: the first 8 tokens as two chunks (3 + 5), then the 9th as a decode.
  ref.run({{1, {toks.begin(), toks.begin() + 3}, false}});
  CHECK(ref.length(1) == 3);
  ref.run({{1, {toks.begin() + 3, toks.begin() + 8}, true}});
  const ForwardOutput dec = ref.run({{1, {toks[8]}, true}});
  REQUIRE(dec.logits.size() == whole.logits.size());
  CHECK(relative_error(dec.logits, whole.logits) < 1e-6);
  CHECK(dec.sampled == whole.sampled);
  // Batching does not change a row: the decode batched with an unrelated prefill gives the same logits.
  ReplayReference ref2(w, 3);
  ref2.run({{1, {toks.begin(), toks.begin() + 8}, false}});
  const ForwardOutput batched = ref2.run({{5, {1, 2, 3, 4}, true}, {1, {toks[8]}, true}});
  REQUIRE(batched.logits.size() == 2 * whole.logits.size());
  const std::vector<float> second(batched.logits.begin() + m.vocab, batched.logits.end());
  CHECK(relative_error(second, whole.logits) < 1e-6);
}

TEST_CASE("replay tiny model: RMSNorm, RoPE and SiLU helpers") {
  std::vector<float> x = {3, 4, 0, 0}, y;
  rms_norm_ref(x, {1, 1, 1, 1}, 1, 4, &y);  // rms = sqrt(25/4) = 2.5
  CHECK(y[0] == doctest::Approx(1.2).epsilon(0.01));
  CHECK(y[1] == doctest::Approx(1.6).epsilon(0.01));
  std::vector<float> r = {1, 0.5f, 0.25f, 2};
  const std::vector<float> r0 = r;
  rope_ref(r.data(), 1, 4, 0);  // position 0: identity
  CHECK(r == r0);
  rope_ref(r.data(), 1, 4, 7);  // a rotation keeps each pair's norm
  CHECK(r[0] * r[0] + r[2] * r[2] == doctest::Approx(1.0625).epsilon(0.01));
  CHECK(silu_ref(0) == 0);
  CHECK(silu_ref(10) == doctest::Approx(10).epsilon(0.001));
}

TEST_CASE("replay plan: launches per layer and per iteration, in engine order") {
  const ReplayModel m = tiny_replay_model();
  const ReplayPlan p = plan_iteration(m, 1, mixed());
  CHECK(p.tokens == 11);
  CHECK(p.logit_rows == 3);
  std::vector<std::string> once;
  for (const auto& l : p.launches)
    if (l.layer < 0) once.push_back(l.name);
  CHECK(once == std::vector<std::string>{"embedding", "final_norm", "logit_gather", "lm_head", "sampling"});
  size_t per_layer = 0;
  for (const auto& l : p.launches) per_layer += l.layer == 0;
  CHECK(per_layer == 11);  // norm qkv rope kv_append prefill decode o norm gate_up silu_mul down
  RecordedIteration decode_only;
  decode_only.decodes = {10, 20};
  CHECK(plan_iteration(m, 1, decode_only).launches.size() == 2 * 10 + 5);
  RecordedIteration no_logits;
  no_logits.prefills = {{8, 0, false}};
  CHECK(plan_iteration(m, 1, no_logits).logit_rows == 0);
  CHECK(plan_iteration(m, 1, no_logits).launches.size() == 2 * 10 + 2);
  CHECK_THROWS(plan_iteration(m, 3, mixed()));              // 3 does not divide 4 heads
  CHECK_THROWS(plan_iteration(m, 1, RecordedIteration{}));  // empty
  CHECK(replay_model_by_name("llama3-8b").layers == 32);
  CHECK(replay_model_by_name("Llama-3.1-70B").layers == 80);
  CHECK(replay_model_by_name("Llama-2-7B").vocab == 32000);
  CHECK(replay_model_by_name("nope").name.empty());
}

}  // namespace servesim::kernels

#include "kernels/bench/cli_args.h"

namespace servesim::kernels {

TEST_CASE("servesim-kernels replay: command line") {
  KernelsCli cli;
  std::string err;
  const char* ok[] = {"servesim-kernels", "replay", "b.csv", "--model", "llama3-8b", "--tp", "2", "-o", "r.csv", "--warmup", "0"};
  REQUIRE(parse_kernels_cli(11, ok, &cli, &err));
  CHECK(cli.command == "replay");
  CHECK(cli.inputs == std::vector<std::string>{"b.csv"});
  CHECK(cli.model == "llama3-8b");
  CHECK(cli.tp == 2);
  CHECK(cli.warmup == 0);
  CHECK(cli.reps == 5);
  const char* no_model[] = {"servesim-kernels", "replay", "b.csv", "-o", "r.csv"};
  CHECK_FALSE(parse_kernels_cli(5, no_model, &cli, &err));
  CHECK(err == "replay needs a batch record FILE and --model NAME");
  const char* no_out[] = {"servesim-kernels", "replay", "b.csv", "--model", "tiny"};
  CHECK_FALSE(parse_kernels_cli(5, no_out, &cli, &err));
  CHECK(err == "replay needs -o FILE");
  const char* bad_tp[] = {"servesim-kernels", "replay", "b.csv", "--model", "tiny", "--tp", "0", "-o", "r.csv"};
  CHECK_FALSE(parse_kernels_cli(9, bad_tp, &cli, &err));
  CHECK(err.find("--tp expects an integer >= 1") == 0);
  const char* two_files[] = {"servesim-kernels", "replay", "a.csv", "b.csv", "--model", "tiny", "-o", "r.csv"};
  CHECK_FALSE(parse_kernels_cli(8, two_files, &cli, &err));
}

}  // namespace servesim::kernels
