// Tests of the calibrated backend's composition, attention methods, scaling
// rules and errors, on a profile generated from known formulas.
#include <doctest/doctest.h>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/noisy_cost_model.h"
#include "costmodel/synthetic_profile.h"
#include "sim/core/error.h"

using namespace servesim;

namespace {

std::shared_ptr<const KernelFits> fits(bool quick = false) {
  static std::shared_ptr<const KernelFits> full, small;
  auto& slot = quick ? small : full;
  if (!slot) {
    SyntheticOptions o;
    o.noise = 0;
    o.quick = quick;
    slot = std::make_shared<KernelFits>(KernelFits::fit(ProfileTable::parse(synthetic_profile_csv(o), "synth.csv")));
  }
  return slot;
}

ModelSpec llama8b() {
  ModelSpec m;
  m.name = "Llama-3-8B";
  return m;
}

CalibratedCostModel model(AttentionMethods a = {}, CalibratedOptions o = {}, ModelSpec m = llama8b()) {
  return CalibratedCostModel(fits(), std::move(m), HardwareSpec{}, std::move(a), o);
}

BatchShape decode_batch(std::int64_t n, std::int64_t ctx) {
  BatchShape b;
  b.decode_contexts.assign(static_cast<std::size_t>(n), ctx);
  return b;
}

BatchShape prompt(std::int64_t tokens, std::int64_t context = 0, bool completes = true) {
  BatchShape b;
  b.prefills.push_back({tokens, context, completes});
  return b;
}

}  // namespace

TEST_CASE("calibrated iteration time is positive and monotone in every token count") {
  const CalibratedCostModel c = model();
  CHECK(c.iteration_time(BatchShape{}) == 0);
  Time prev = 0;
  for (std::int64_t n : {1, 2, 8, 64, 256}) {
    const Time t = c.iteration_time(decode_batch(n, 2048));
    CHECK(t > prev);
    prev = t;
  }
  prev = 0;
  for (std::int64_t ctx : {100, 1000, 10000, 100000}) {
    const Time t = c.iteration_time(decode_batch(16, ctx));
    CHECK(t > prev);
    prev = t;
  }
  prev = 0;
  for (std::int64_t n : {1, 100, 1000, 8192, 20000}) {
    const Time t = c.iteration_time(prompt(n, 4096));
    CHECK(t > prev);
    prev = t;
  }
  CHECK(c.calibrated() == false);  // the profile is synthetic
  CHECK(c.identity().find("SYNTHETIC") != std::string::npos);
  CHECK(c.identity().find(',') == std::string::npos);
  CHECK(c.scaling_notes().empty());
}

TEST_CASE("an iteration is the sum of per-layer kernels plus overheads") {
  const CalibratedCostModel c = model();
  const SyntheticTruth t;
  const BatchShape b = decode_batch(8, 4095);  // 8 sequences reading 4096 KV tokens each
  const auto parts = c.breakdown(b);
  const double bytes = 8 * 4096 * 4.0 * 8 * 128;
  const double decode_layer = t.decode_t0_us + t.decode_per_seq_us * 8 + bytes / (t.decode_bw_gbps * 1e3) +
                              bytes / 8 / (t.decode_seq_bw_gbps * 1e3);
  CHECK(parts.decode_attention == doctest::Approx(32 * decode_layer).epsilon(0.01));
  CHECK(parts.overhead == doctest::Approx(50));
  CHECK(parts.linear > 0);
  CHECK(parts.lm_head > 0);
  CHECK(parts.prefill_attention == 0);
  CHECK(parts.allreduce == 0);
  CHECK(time_to_seconds(c.iteration_time(b)) * 1e6 == doctest::Approx(parts.total()).epsilon(1e-6));
}

TEST_CASE("Quest makes long-context decode cheaper and leaves short contexts dense") {
  AttentionMethods quest;
  quest.decode = DecodeMethod::kQuest;
  const CalibratedCostModel dense = model(), sparse = model(quest);
  const auto long_dense = dense.breakdown(decode_batch(8, 32768));
  const auto long_quest = sparse.breakdown(decode_batch(8, 32768));
  CHECK(long_quest.decode_attention < 0.4 * long_dense.decode_attention);
  // Within the budget Quest selects nothing: dense decode plus its metadata update only.
  const auto short_dense = dense.breakdown(decode_batch(8, 1000));
  const auto short_quest = sparse.breakdown(decode_batch(8, 1000));
  CHECK(short_quest.decode_attention >= short_dense.decode_attention);
  CHECK(short_quest.decode_attention < 1.2 * short_dense.decode_attention);
}

TEST_CASE("MInference speeds up long prompts and falls back to dense below min_length") {
  AttentionMethods minf;
  minf.prefill = PrefillMethod::kMInference;
  const CalibratedCostModel dense = model(), sparse = model(minf);
  CHECK(sparse.breakdown(prompt(65536)).prefill_attention < 0.5 * dense.breakdown(prompt(65536)).prefill_attention);
  CHECK(sparse.iteration_time(prompt(4096)) == dense.iteration_time(prompt(4096)));
  // A chunk is sparse when its span (cached context + chunk) reaches min_length.
  CHECK(sparse.iteration_time(prompt(8192, 57344, false)) < dense.iteration_time(prompt(8192, 57344, false)));
  CHECK(sparse.iteration_time(prompt(8192, 8192, false)) == dense.iteration_time(prompt(8192, 8192, false)));
  // A head mix is priced as the share-weighted patterns.
  minf.minference.patterns = {{"vs_30_2048", 0.5}, {"bs_100", 0.5}};
  CHECK(model(minf).iteration_time(prompt(65536)) < dense.iteration_time(prompt(65536)));
}

TEST_CASE("AnDPro charges scoring once, when a long prompt completes") {
  AttentionMethods andpro;
  andpro.kv = KvMethod::kAndpro;
  const CalibratedCostModel dense = model(), evict = model(andpro);
  CHECK(evict.breakdown(prompt(16384)).andpro > 0);
  CHECK(evict.breakdown(prompt(8192, 8192, false)).andpro == 0);  // not the last chunk
  CHECK(evict.breakdown(prompt(1000)).andpro == 0);                // shorter than budget + window: nothing to evict
  CHECK(evict.breakdown(prompt(65536)).andpro < 0.05 * dense.breakdown(prompt(65536)).prefill_attention);
  CHECK(andpro.andpro.kept_tokens(100000) == 2048 + 32 + (100000 - 32) % 16);
  CHECK(andpro.andpro.kept_tokens(1000) == 1000);
}

TEST_CASE("AnDPro's allocation picks its selection and compaction kernels, and a profile without layer_topk rows is an error") {
  AttentionMethods layer, equal;
  layer.kv = equal.kv = KvMethod::kAndpro;
  equal.andpro.layer_topk = false;
  REQUIRE(layer.andpro.layer_topk);  // the default
  const CalibratedCostModel l = model(layer), e = model(equal);
  const SyntheticTruth truth;
  // 65536 tokens, window 32, 8 KV heads: the select kernels differ by their per-candidate
  // time; block 16 keeps the same rows in both compactions, priced alike here.
  const double cand = static_cast<double>(65536 - 32) * 8;
  const double want = 32 * (truth.andpro_select_layer_t0_us - truth.andpro_select_t0_us +
                            (truth.andpro_select_layer_per_cand_us - truth.andpro_select_per_cand_us) * cand);
  CHECK(l.breakdown(prompt(65536)).andpro - e.breakdown(prompt(65536)).andpro ==
        doctest::Approx(want).epsilon(0.02));
  CHECK(l.breakdown(prompt(1000)).andpro == 0);
  // A profile measured before the layer_topk kernels existed.
  SyntheticOptions quick;
  quick.noise = 0;
  quick.quick = true;
  std::string csv = synthetic_profile_csv(quick);
  std::string old;
  for (std::size_t at = 0; at < csv.size();) {
    const std::size_t end = csv.find('\n', at);
    const std::string line = csv.substr(at, end - at + 1);
    if (!line.starts_with("andpro_select_layer") && !line.starts_with("andpro_compact_ragged")) old += line;
    at = end == std::string::npos ? csv.size() : end + 1;
  }
  const auto old_fits = std::make_shared<KernelFits>(KernelFits::fit(ProfileTable::parse(old, "old.csv")));
  CHECK_THROWS_WITH_AS(CalibratedCostModel(old_fits, llama8b(), {}, layer, {}),
                       doctest::Contains("old.csv: attention.andpro allocation layer_topk needs andpro_select_layer"),
                       InputError);
  CHECK_NOTHROW(CalibratedCostModel(old_fits, llama8b(), {}, equal, {}));
}

TEST_CASE("unmeasured shapes are scaled and reported, or rejected when scaling is off") {
  CalibratedOptions tp2;
  tp2.tp = 2;
  const CalibratedCostModel c = model({}, tp2);  // 16/4 heads per GPU were not measured
  CHECK(!c.scaling_notes().empty());
  CHECK(c.identity().find("scaled:") != std::string::npos);
  CHECK(c.iteration_time(decode_batch(8, 4096)) < model().iteration_time(decode_batch(8, 4096)));
  CHECK(c.breakdown(decode_batch(8, 4096)).allreduce > 0);
  tp2.allow_scaling = false;
  CHECK_THROWS_WITH_AS(model({}, tp2), doctest::Contains("no decode fit for head shape 16/4/128"), InputError);
  ModelSpec odd = llama8b();
  odd.head_dim = 64;
  CHECK_THROWS_WITH_AS(model({}, {}, odd), doctest::Contains("no measured shape has head_dim 64"), InputError);
  ModelSpec wide = llama8b();
  wide.intermediate = 16384;  // a GEMM shape the bench never measured
  CalibratedOptions strict;
  strict.allow_scaling = false;
  CHECK_THROWS_WITH_AS(model({}, strict, wide), doctest::Contains("no gemm rows for the gate_up layer"), InputError);
  CHECK(model({}, {}, wide).scaling_notes().size() == 2);  // gate_up and down
}

TEST_CASE("an attention method whose kernels the profile lacks is a clear error") {
  // The quick grid has no window 16; no grid has the paper's vs_1000_6096.
  AttentionMethods a;
  a.kv = KvMethod::kAndpro;
  a.andpro.window = 16;
  CHECK_THROWS_WITH_AS(CalibratedCostModel(fits(true), llama8b(), {}, a, {}),
                       doctest::Contains("andpro window 16 has no measured"), InputError);
  AttentionMethods m;
  m.prefill = PrefillMethod::kMInference;
  m.minference.patterns = {{"vs_1000_6096", 1.0}};
  CHECK_THROWS_WITH_AS(CalibratedCostModel(fits(), llama8b(), {}, m, {}),
                       doctest::Contains("pattern 'vs_1000_6096' has no measured"), InputError);
}

TEST_CASE("estimate noise is deterministic per batch and unbiased in the log") {
  auto exact = std::make_shared<CalibratedCostModel>(model());
  NoisyCostModel noisy(exact, 0.2, 9);
  const BatchShape b = decode_batch(8, 4096);
  CHECK(noisy.iteration_time(b) == noisy.iteration_time(b));
  double log_sum = 0;
  int differ = 0;
  for (std::int64_t n = 1; n <= 200; ++n) {
    const BatchShape x = decode_batch(n, 2048);
    const double r = static_cast<double>(noisy.iteration_time(x)) / static_cast<double>(exact->iteration_time(x));
    log_sum += std::log(r);
    differ += r != 1.0;
  }
  CHECK(differ == 200);
  CHECK(std::abs(log_sum / 200) < 0.05);
  CHECK(NoisyCostModel(exact, 0, 9).iteration_time(b) == exact->iteration_time(b));
}

namespace {

// The synthetic profile plus the ceilings' launch rows: alone 3 us, 256 queued launches
// behind a 3,000 us spin in 3,256 us (1 us each): an excess of 2 us per isolated row.
std::shared_ptr<const KernelFits> fits_with_launch_rows() {
  static std::shared_ptr<const KernelFits> f;
  if (!f) {
    SyntheticOptions o;
    o.noise = 0;
    std::string csv = synthetic_profile_csv(o);
    csv += "ceiling,launch_alone,,,,,,,,,,,,,launches=1,50,3.000,3.000,3.000,3.000,3.000,0,0,0,0\n"
           "ceiling,launch_queued_spin,,,,,,,,,,,,,launches=0;spin_ns=3000000,10,3000.000,3000.000,3000.000,3000.000,"
           "3000.000,0,0,0,0\n"
           "ceiling,launch_queued,,,,,,,,,,,,,launches=256;spin_ns=3000000,10,3256.000,3256.000,3256.000,3256.000,"
           "3256.000,0,0,0,0\n";
    f = std::make_shared<KernelFits>(KernelFits::fit(ProfileTable::parse(csv, "synth_launch.csv")));
  }
  return f;
}

}  // namespace

TEST_CASE("launch_excess: measured takes the ceilings' launch excess off every row-priced kernel") {
  REQUIRE(fits_with_launch_rows()->launch_excess_us().has_value());
  CHECK(*fits_with_launch_rows()->launch_excess_us() == doctest::Approx(2.0));
  CHECK_FALSE(fits()->launch_excess_us().has_value());
  CalibratedOptions off, on;
  off.launch_excess = LaunchExcess::kNone;
  off.decode_attention = on.decode_attention = DecodePricing::kFit;
  on.launch_excess = LaunchExcess::kMeasured;
  const CalibratedCostModel plain(fits_with_launch_rows(), llama8b(), HardwareSpec{}, {}, off);
  const CalibratedCostModel queued(fits_with_launch_rows(), llama8b(), HardwareSpec{}, {}, on);
  const BatchShape b = decode_batch(8, 4095);
  const auto p = plain.breakdown(b), q = queued.breakdown(b);
  CHECK(q.linear == doctest::Approx(p.linear - 4 * 32 * 2.0));        // qkv, o, gate_up, down per layer
  CHECK(q.decode_attention == doctest::Approx(p.decode_attention - 32 * 2.0));
  CHECK(q.lm_head == doctest::Approx(p.lm_head - 2.0));
  CHECK(q.elementwise == doctest::Approx(p.elementwise));  // no elementwise rows: priced at bytes, no launch in them
  CHECK(q.overhead == doctest::Approx(p.overhead));
  CHECK(queued.identity().find("launch_excess=2.000us") != std::string::npos);
  CHECK(plain.identity().find("launch_excess") == std::string::npos);
  // Never below half a row: a tiny kernel keeps half its time.
  CHECK(queued_us(3.0, 2.0) == doctest::Approx(1.5));
  CHECK(queued_us(10.0, 2.0) == doctest::Approx(8.0));
  // A profile without the rows: a clear error naming the option and the bench family.
  try {
    CalibratedCostModel(fits(), llama8b(), HardwareSpec{}, {}, on);
    FAIL("expected an InputError");  // (auto, the default, prices such a profile without the excess: below)
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("launch_excess") != std::string::npos);
    CHECK(std::string(e.what()).find("--family ceilings") != std::string::npos);
  }
}

TEST_CASE("auto (the default) takes the launch excess off and prices decode from the rows only where both are measured") {
  const CalibratedCostModel with_rows(fits_with_launch_rows(), llama8b(), HardwareSpec{}, {}, {});
  CHECK(with_rows.identity().find("launch_excess=2.000us") != std::string::npos);
  CHECK(with_rows.identity().find("decode=rows(") != std::string::npos);
  const CalibratedCostModel without = model();  // the synthetic profile alone: no launch rows
  CHECK(without.identity().find("launch_excess") == std::string::npos);
  CHECK(without.identity().find("decode=rows") == std::string::npos);  // the rows need the excess taken off
  CalibratedOptions rows_only;
  rows_only.launch_excess = LaunchExcess::kNone;
  const CalibratedCostModel no_excess(fits_with_launch_rows(), llama8b(), HardwareSpec{}, {}, rows_only);
  CHECK(no_excess.identity().find("decode=rows") == std::string::npos);
}

TEST_CASE("decode_attention: rows prices dense decode from the uniform rows and says so") {
  CalibratedOptions rows;
  rows.decode_attention = DecodePricing::kRows;
  const CalibratedCostModel fit = model(), grid = model({}, rows);
  REQUIRE(fits()->decode_grids().count(HeadShape{32, 8, 128}));
  CHECK(grid.identity().find("decode=rows(") != std::string::npos);
  CHECK(fit.identity().find("decode=rows") == std::string::npos);
  // The synthetic rows follow the fit's own formula: the grid agrees with the fit closely.
  for (std::int64_t n : {1, 3, 16, 100, 400})
    for (std::int64_t ctx : {300, 2047, 9000, 60000}) {
      CAPTURE(n);
      CAPTURE(ctx);
      const double a = fit.breakdown(decode_batch(n, ctx)).decode_attention;
      const double r = grid.breakdown(decode_batch(n, ctx)).decode_attention;
      CHECK(r == doctest::Approx(a).epsilon(0.1));
    }
  // Monotone in every KV length, and other parts unchanged.
  Time prev = 0;
  for (std::int64_t ctx : {100, 1000, 10000, 100000}) {
    const Time t = grid.iteration_time(decode_batch(16, ctx));
    CHECK(t > prev);
    prev = t;
  }
  CHECK(grid.breakdown(decode_batch(8, 4095)).linear == fit.breakdown(decode_batch(8, 4095)).linear);
}

TEST_CASE("decode_ragged pairs price a ragged batch above the uniform one at its mean, and feed nothing else") {
  SyntheticOptions o;
  o.noise = 0;
  std::string csv = synthetic_profile_csv(o);
  const KernelFits plain_fits = KernelFits::fit(ProfileTable::parse(csv, "synth.csv"));
  // One pair at batch 64: the ragged batch (spread 4: longest 4,096, mean 1,024) took 1.2x its
  // uniform partner; the partner's time is nonsense on purpose (it must not reach the grid or fit).
  csv += "decode,splitkv,64,1024,1,,32,8,128,16,,,,,model=llama3-8b;ragged=1;ctx_min=16;ctx_max=4096;ctx_sum=65536;"
         "split_tokens=0;work_items=0;dist=test,10,120.000,120.000,120.000,120.000,120.000,0,0,0,0\n"
         "decode,splitkv,64,1024,1,,32,8,128,16,,,,,model=llama3-8b;ragged=0;ctx_min=1024;ctx_max=1024;ctx_sum=65536;"
         "split_tokens=0;work_items=0;dist=test-uniform,10,100.000,100.000,100.000,100.000,100.000,0,0,0,0\n";
  auto with = std::make_shared<KernelFits>(KernelFits::fit(ProfileTable::parse(csv, "synth_ragged.csv")));
  REQUIRE(with->ragged_decode().count(HeadShape{32, 8, 128}));
  CHECK(with->ragged_decode().at(HeadShape{32, 8, 128}).factor(64, 4.0) == doctest::Approx(1.2));
  CHECK(with->decode().at(HeadShape{32, 8, 128}).coefficients() ==
        plain_fits.decode().at(HeadShape{32, 8, 128}).coefficients());  // the fit did not see the pair
  CHECK(with->decode_grids().at(HeadShape{32, 8, 128}).points() ==
        plain_fits.decode_grids().at(HeadShape{32, 8, 128}).points());  // nor did the grid
  CalibratedOptions rows;
  rows.decode_attention = DecodePricing::kRows;
  const CalibratedCostModel m(with, llama8b(), HardwareSpec{}, {}, rows);
  CHECK(m.identity().find("ragged factor from 1 decode_ragged pairs") != std::string::npos);
  BatchShape uniform = decode_batch(64, 1023), ragged;
  for (int i = 0; i < 63; ++i) ragged.decode_contexts.push_back(975);  // mean KV 1,024, longest 4,096:
  ragged.decode_contexts.push_back(4095);                              // 63 x 976 + 4,096 = 65,584 ~ 64 x 1,024.75
  const double u = m.breakdown(uniform).decode_attention, r = m.breakdown(ragged).decode_attention;
  const double spread = 4096.0 * 64 / 65584.0;  // longest / mean KV length
  CHECK(r / u == doctest::Approx(1 + 0.2 * std::log(spread) / std::log(4.0)).epsilon(0.01));
  // Sums handed over by the engine (max_kv included) price the same as the contexts.
  BatchShape with_sums = ragged;
  with_sums.decode_sums = BatchShape::DecodeSums{65584, 0, 4096};
  for (std::int64_t c : ragged.decode_contexts) with_sums.decode_sums->splits += decode_split_count(static_cast<std::uint64_t>(c));
  CHECK(m.breakdown(with_sums).decode_attention == r);
}

TEST_CASE("a sparse method's own measured kernels are charged the launch excess too, one per launch") {
  AttentionMethods quest;
  quest.decode = DecodeMethod::kQuest;
  CalibratedOptions off, on;
  off.launch_excess = LaunchExcess::kNone;
  on.launch_excess = LaunchExcess::kMeasured;
  off.decode_attention = on.decode_attention = DecodePricing::kFit;
  const CalibratedCostModel a(fits_with_launch_rows(), llama8b(), HardwareSpec{}, quest, off);
  const CalibratedCostModel b(fits_with_launch_rows(), llama8b(), HardwareSpec{}, quest, on);
  // Every context beyond the budget: 2 dense layers (one launch each) and 30 Quest layers
  // (metadata, estimate, top-k, sparse decode: four launches each), 2 us less per launch,
  // but never more than half a row (the synthetic metadata update is a ~3 us kernel).
  const BatchShape batch = decode_batch(8, 32768);
  const double less = a.breakdown(batch).decode_attention - b.breakdown(batch).decode_attention;
  CHECK(less > 2.0 * (2 * 1 + 30 * 3) + 30 * 1.0);  // all four launches of a Quest layer, the fourth at least half
  CHECK(less <= 2.0 * (2 * 1 + 30 * 4) + 1e-9);
}
