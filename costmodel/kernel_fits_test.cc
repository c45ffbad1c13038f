// Tests of the fitting machinery: NNLS recovery, monotone curves, recovery of
// the formulas behind a generated profile, held-out validation, and speed.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "costmodel/andpro_fits.h"
#include "costmodel/attention_pricer.h"
#include "costmodel/feature_fit.h"
#include "costmodel/gemm_guide.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/minference_fits.h"
#include "costmodel/monotone_curve.h"
#include "costmodel/profile_validation.h"
#include "costmodel/quest_fits.h"
#include "costmodel/synthetic_profile.h"
#include "sim/core/error.h"

#include <unistd.h>

using namespace servesim;

namespace {

const ProfileTable& synthetic_table(double noise) {
  static std::map<double, ProfileTable> cache;
  auto it = cache.find(noise);
  if (it == cache.end()) {
    SyntheticOptions o;
    o.noise = noise;
    o.seed = 7;
    it = cache.emplace(noise, ProfileTable::parse(synthetic_profile_csv(o), "synthetic.csv")).first;
  }
  return it->second;
}

double coef(const FeatureFit& f, const std::string& name) {
  for (std::size_t i = 0; i < f.names().size(); ++i)
    if (f.names()[i] == name) return f.coefficients()[i];
  FAIL("no feature " << name);
  return 0;
}

}  // namespace

TEST_CASE("non-negative relative least squares recovers exact coefficients and never goes negative") {
  std::vector<std::vector<double>> x;
  std::vector<double> t;
  for (double b : {1.0, 2.0, 8.0, 64.0})
    for (double bytes : {1e6, 1e8, 1e9}) {
      x.push_back({1.0, b, bytes});
      t.push_back(5 + 0.1 * b + bytes / 3e6);
    }
  FeatureFit f = FeatureFit::fit({"1", "seqs", "bytes"}, x, t);
  CHECK(f.coefficients()[0] == doctest::Approx(5).epsilon(1e-6));
  CHECK(f.coefficients()[1] == doctest::Approx(0.1).epsilon(1e-6));
  CHECK(f.coefficients()[2] == doctest::Approx(1 / 3e6).epsilon(1e-6));
  CHECK(f.residuals().max < 1e-9);
  // Data that would want a negative slope gets zero instead.
  FeatureFit g = FeatureFit::fit({"1", "n"}, {{1, 1}, {1, 2}, {1, 3}}, {3, 2, 1});
  CHECK(g.coefficients()[1] == 0);
  CHECK(g.coefficients()[0] > 0);
}

TEST_CASE("the GEMM curve is monotone, keeps tile steps and grows proportionally beyond the grid") {
  CHECK(isotonic_non_decreasing({1, 3, 2, 4}) == std::vector<double>{1, 2.5, 2.5, 4});
  MonotoneCurve c({1, 64, 128, 256}, {10, 10, 20, 20});  // a tile step between 64 and 128
  CHECK(c(0.5) == 10);
  CHECK(c(64) == 10);
  CHECK(c(96) == doctest::Approx(15));
  CHECK(c(200) == 20);
  CHECK(c(512) == doctest::Approx(40));
  MonotoneCurve noisy({1, 2, 4}, {10, 9, 11});
  CHECK(noisy(2) >= noisy(1));
}

TEST_CASE("a GEMM curve keeps the measured dips it is told about and pools noise between them") {
  // 448 -> 512 is a real drop (cuBLASLt's algorithm choice); 1 -> 2 is noise.
  const std::vector<double> xs{1, 2, 448, 512, 576}, ys{10, 9.5, 30, 16, 20};
  MonotoneCurve pooled(xs, ys);
  CHECK(pooled.kept_dips() == 0);
  CHECK(pooled(448) == doctest::Approx(22));  // 30, 16 and 20 pooled
  CHECK(pooled(512) == doctest::Approx(22));
  MonotoneCurve dipped(xs, ys, {}, {false, false, true, false, false});
  CHECK(dipped.kept_dips() == 1);
  CHECK(dipped(1) == doctest::Approx(9.75));  // the noisy stretch is still pooled
  CHECK(dipped(2) == doctest::Approx(9.75));
  CHECK(dipped(448) == 30);
  CHECK(dipped(512) == 16);
  CHECK(dipped(480) == doctest::Approx(23));  // linear between the two measured points
  CHECK(dipped(544) == doctest::Approx(18));
  // A dip marked where the values rise is no dip: nothing is cut.
  MonotoneCurve rising(xs, ys, {}, {false, true, false, false, false});
  CHECK(rising.kept_dips() == 0);
  CHECK_THROWS(MonotoneCurve(xs, ys, {}, {true}));
}

TEST_CASE("gemm_dense rows keep a drop whose p10-p90 ranges do not overlap, and the grid alone stays monotone") {
  const std::string head = "# format=servesim-kernel-profile\n# schema_version=1\n# gpu_sms=132\n"
                           "kernel,variant,batch,ctx,q_len,prefix,heads,kv_heads,head_dim,page_size,budget,m,n,k,params,"
                           "reps,median_us,p10_us,p90_us,min_us,max_us,bytes,flops,gbps,tflops\n";
  auto row = [](int m, int n, double t, double spread, bool dense) {
    return fmt::format("gemm,cublaslt,,,,,,,,,,{},{},4096,model=x;layer=l;tp=1{},50,{},{},{},{},{},1,1,1,1\n", m, n,
                       dense ? ";dense=1" : "", t, t * (1 - spread), t * (1 + spread), t * (1 - spread),
                       t * (1 + spread));
  };
  std::string csv = head;
  for (int n : {4096, 8192}) {  // 8192: the same times as a grid-only shape
    csv += row(1, n, 50, 0.01, false) + row(64, n, 52, 0.01, false) + row(448, n, 290, 0.01, false) +
           row(512, n, 170, 0.01, false) + row(1024, n, 320, 0.01, false);
    if (n == 4096) csv += row(456, 4096, 292, 0.01, true) + row(460, 4096, 165, 0.01, true) +  // a real drop
                          row(2, 4096, 51, 0.03, true) + row(3, 4096, 50, 0.03, true);        // noise: overlapping
  }
  const KernelFits f = KernelFits::fit(ProfileTable::parse(csv, "dense.csv"));
  const MonotoneCurve& dense = f.gemm().at({4096, 4096}).curve;
  const MonotoneCurve& grid = f.gemm().at({8192, 4096}).curve;
  CHECK(dense.kept_dips() == 1);
  CHECK(dense(456) == doctest::Approx(292));
  CHECK(dense(460) == doctest::Approx(165));
  CHECK(dense(3) == doctest::Approx(dense(2)));  // 51 then 50 within their spreads: pooled
  CHECK(grid.kept_dips() == 0);
  double last = 0;
  for (double m = 1; m <= 2048; m += 3) {
    CHECK(grid(m) >= last);
    last = grid(m);
  }
}

TEST_CASE("a guided GEMM curve keeps measured points and steps where its guide steps") {
  // Guide: flat to 100, a step, then flat to 200, then proportional.
  auto guide = [](double m) { return m <= 100 ? 5.0 : (m <= 200 ? 9.0 : 9.0 * m / 200); };
  MonotoneCurve c({64, 256, 512}, {10, 30, 60}, guide);
  CHECK(c.guided());
  CHECK(c(64) == doctest::Approx(10));
  CHECK(c(256) == doctest::Approx(30));
  CHECK(c(80) == doctest::Approx(10));  // the guide is flat from 64 to 100: so is the curve
  // 150 is past the guide's step: (9-5)/(9*256/200-5) of the way from 10 to 30.
  CHECK(c(150) == doctest::Approx(10 + 20 * 4 / (9 * 256 / 200.0 - 5)));
  CHECK(c(1024) == doctest::Approx(60 * 2));  // beyond the grid: grows with the guide
  double last = 0;
  for (double m = 1; m <= 2048; m += 7) {
    CHECK(c(m) >= last);
    last = c(m);
  }
  // A guide that is flat over a measured rise falls back to a straight line there.
  MonotoneCurve flat({1, 3}, {10, 20}, [](double) { return 1.0; });
  CHECK(flat(2) == doctest::Approx(15));
}

TEST_CASE("leave-one-out curve predictions equal refitting without each point, bit for bit") {
  // Noisy non-monotone times (so pooling crosses the held-out point) over 40
  // M values, with a stepped guide, a flat stretch and no guide; steps 1 and 3.
  std::vector<double> xs, ys;
  for (int i = 0; i < 40; ++i) {
    xs.push_back(1 + 7.0 * i + (i % 3));
    ys.push_back(5 + 0.3 * i + ((i * 37) % 11) * 0.4 - ((i % 5) == 0 ? 2.5 : 0));
  }
  const MonotoneCurve::Guide guides[] = {
      {}, [](double m) { return 3 + std::ceil(m / 64) * 2; }, [](double m) { return m < 100 ? 4.0 : m / 25; }};
  int compared = 0;
  for (const auto& guide : guides)
    for (std::size_t step : {std::size_t{1}, std::size_t{3}}) {
      std::vector<double> gx;
      if (guide)
        for (double x : xs) gx.push_back(guide(x));
      const std::vector<double> fast = monotone_loo_predictions(xs, ys, gx, step);
      std::size_t k = 0;
      for (std::size_t i = 1; i + 1 < xs.size(); i += step, ++k) {
        std::vector<double> lx = xs, ly = ys;
        lx.erase(lx.begin() + static_cast<std::ptrdiff_t>(i));
        ly.erase(ly.begin() + static_cast<std::ptrdiff_t>(i));
        REQUIRE(k < fast.size());
        CHECK(fast[k] == MonotoneCurve(lx, ly, guide)(xs[i]));  // exact, not approximate
        ++compared;
      }
      CHECK(k == fast.size());
    }
  CHECK(compared == 3 * (38 + 13));  // 3 guides x (step 1: 38 interior points, step 3: 13)
}

TEST_CASE("the GEMM guide is chosen by leave-one-out error and recovers a roofline") {
  // Times generated by a plain roofline (t0 = 5 us, 2000 GB/s, 500 TFLOP/s):
  // the roofline guide interpolates them exactly, straight lines do not.
  GemmPoints pts;
  for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}, {1024, 8192}}) {
    const GemmGuide truth{n, k, 0, 0, 5, 2000, 500, 132};
    for (std::int64_t m = 1; m <= 16384; m *= 2) pts[{n, k}][m] = truth(static_cast<double>(m));
  }
  const GemmGuideSelection sel = select_gemm_guide(pts, 132);
  CHECK(sel.best().name == "roofline");
  CHECK(sel.best().loo.p90 < 1e-6);
  CHECK(sel.candidates.front().name == "linear");
  CHECK(sel.candidates.front().loo.p90 > 0.01);  // the knee falls between grid points
  CHECK(sel.t0_us == doctest::Approx(5).epsilon(1e-6));
  CHECK(sel.bw_gbps == doctest::Approx(2000).epsilon(1e-6));
  CHECK(sel.guides.at({14336, 4096}).tflops == doctest::Approx(500).epsilon(1e-6));
  CHECK(sel.describe().find("roofline guide") != std::string::npos);
  // Without the SM count no wave-quantized guide is tried; without interior
  // points there is nothing to choose by and straight lines stay.
  for (const auto& c : select_gemm_guide(pts, 0).candidates) CHECK(c.name.find("waves") == std::string::npos);
  GemmPoints two{{{4096, 4096}, {{1, 10.0}, {1024, 40.0}}}};
  CHECK(select_gemm_guide(two, 132).best().linear);
}

TEST_CASE("fits recover the formulas a noiseless generated profile was made from") {
  const SyntheticTruth truth;
  const KernelFits f = KernelFits::fit(synthetic_table(0));
  CHECK(f.problems().empty());
  CHECK(f.synthetic());
  const FeatureFit& dec = f.decode().at(HeadShape{32, 8, 128});
  CHECK(coef(dec, "1") == doctest::Approx(truth.decode_t0_us).epsilon(0.01));
  CHECK(1 / coef(dec, "kv_bytes") / 1e3 == doctest::Approx(truth.decode_bw_gbps).epsilon(0.01));
  CHECK(dec.residuals().p90 < 1e-3);  // rounding of the CSV's 3 decimals only
  const FeatureFit& pre = f.prefill().at(HeadShape{32, 8, 128});
  CHECK(1 / coef(pre, "flops") / 1e6 == doctest::Approx(truth.prefill_tflops).epsilon(0.01));
  CHECK(pre.residuals().p90 < 1e-3);
  CHECK(f.decode().count(HeadShape{8, 1, 128}));
  CHECK(f.prefill().count(HeadShape{64, 8, 128}));
  CHECK(f.gemm().count({6144, 4096}));  // llama-3-8b qkv at tp 1
  const QuestFits& q = quest_fits(f).variants.at("kvhead").at(HeadShape{32, 8, 128});
  CHECK(coef(q.topk, "scores") == doctest::Approx(truth.quest_topk_per_score_us).epsilon(0.02));
  CHECK(1 / coef(q.decode, "selected_kv_bytes") / 1e3 == doctest::Approx(truth.quest_dec_bw_gbps).epsilon(0.02));
  for (const char* p : {"vs_30_2048", "vs_3000_200", "bs_100", "ashape_1024_4096"}) {
    const MinfFits& m = minference_fits(f).patterns.at(std::string(p) + "/structured");
    CHECK(m.band_width == doctest::Approx(synthetic_minf_band_width(p)).epsilon(0.01));
    CHECK(coef(m.attention, "tiles") == doctest::Approx(truth.minf_att_per_tile_us).epsilon(0.02));
  }
  CHECK(minference_fits(f).patterns.at("ashape_1024_4096/structured").estimate.empty());  // static pattern: no estimate
  const AndproFits& a = andpro_fits(f).windows.at(32);
  CHECK(coef(a.score, "candidates") == doctest::Approx(truth.andpro_score_per_cand_us).epsilon(0.01));
  CHECK(coef(a.compact, "kept") == doctest::Approx(truth.andpro_compact_per_kept_us).epsilon(0.01));
  CHECK(coef(a.select_layer, "candidates") == doctest::Approx(truth.andpro_select_layer_per_cand_us).epsilon(0.01));
  CHECK(coef(a.compact_ragged, "kept") == doctest::Approx(truth.andpro_compact_ragged_per_kept_us).epsilon(0.01));
  CHECK(f.copy_gbps() == doctest::Approx(truth.copy_gbps).epsilon(0.001));
}

TEST_CASE("noisy generated profiles are recovered within tolerance and validate within the targets") {
  const SyntheticTruth truth;
  const ProfileTable& t = synthetic_table(0.02);
  const KernelFits f = KernelFits::fit(t);
  const FeatureFit& dec = f.decode().at(HeadShape{32, 8, 128});
  CHECK(1 / coef(dec, "kv_bytes") / 1e3 == doctest::Approx(truth.decode_bw_gbps).epsilon(0.03));
  const FeatureFit& pre = f.prefill().at(HeadShape{32, 8, 128});
  CHECK(1 / coef(pre, "flops") / 1e6 == doctest::Approx(truth.prefill_tflops).epsilon(0.03));
  const ValidationResult v = validate_profile(t, ValidationOptions{});
  CHECK(v.problems.empty());
  REQUIRE(v.families.size() >= 16);
  for (const auto& fam : v.families) {
    INFO(fam.family << " median " << fam.error.median << " p90 " << fam.error.p90 << " n " << fam.error.points);
    CHECK(fam.error.points > 0);
    CHECK(fam.meets_target());
    if (fam.family == "gemm") {
      // GEMMs are validated on exactly the off-grid probe rows, fitted on the whole grid.
      CHECK(fam.kind == "off-grid");
      std::size_t probes = 0;
      for (const ProfilePoint& p : t.points()) probes += p.kernel == "gemm" && p.param("probe") == "1";
      CHECK(probes > 0);
      CHECK(fam.error.points == probes);
    }
  }
  // Every guided GEMM curve is non-decreasing at every token count.
  for (const auto& entry : f.gemm()) {
    // Not a structured binding: clang 14 (CI's sanitizer compiler) cannot capture one in
    // CAPTURE's lambda.
    const auto& key = entry.first;
    const auto& g = entry.second;
    CAPTURE(key.first);
    CAPTURE(key.second);
    CHECK(g.curve.guided());
    double last = 0;
    bool monotone = true;
    for (double m = 1; m <= 40000; m += 3) {
      monotone = monotone && g.curve(m) >= last;
      last = g.curve(m);
    }
    CHECK(monotone);
  }
  // Deterministic: the same split and numbers again.
  const ValidationResult w = validate_profile(t, ValidationOptions{});
  CHECK(validation_csv(v) == validation_csv(w));
  CHECK(validation_csv(v) != validation_csv(validate_profile(t, ValidationOptions{0.2, 2})));
}

TEST_CASE("rows that lack a parameter a family needs are errors naming the line") {
  std::string csv = "# format=servesim-kernel-profile\n# schema_version=1\n"
                    "kernel,variant,batch,ctx,q_len,prefix,heads,kv_heads,head_dim,page_size,budget,m,n,k,params,reps,"
                    "median_us,p10_us,p90_us,min_us,max_us,bytes,flops,gbps,tflops\n"
                    "minf_attention,vs_30_2048,1,16384,16384,0,32,8,128,16,,,,,pattern=vs_30_2048,5,100,99,101,98,102,"
                    "0,0,0,0\n";
  ProfileTable t = ProfileTable::parse(csv, "p.csv");
  CHECK_THROWS_WITH_AS(KernelFits::fit(t), "p.csv:4: minf_attention/vs_30_2048: needs 'tiles=' in params (the visited area)",
                       InputError);
}

TEST_CASE("an unmeasured GEMM shape priced from its nearest measured shape by the guides' ratio") {
  // Leave each weight shape out in turn and price it from the nearest other one
  // (log distance in n and k): the ratio of the two shapes' guides versus the
  // plain n*k ratio, which also scales the fixed launch cost.
  const KernelFits f = KernelFits::fit(synthetic_table(0.02));
  std::vector<double> by_guide, by_nk, measured;
  for (const auto& [key, g] : f.gemm()) {
    double best = 1e300;
    std::pair<std::int64_t, std::int64_t> from;
    for (const auto& [other, unused] : f.gemm()) {
      if (other == key) continue;
      const double dn = std::log(double(other.first) / double(key.first));
      const double dk = std::log(double(other.second) / double(key.second));
      if (dn * dn + dk * dk < best) best = dn * dn + dk * dk, from = other;
    }
    const MonotoneCurve& src = f.gemm().at(from).curve;
    GemmGuide a = f.gemm_guide_of(from), b = a;
    b.n = key.first;
    b.k = key.second;
    const double nk = double(key.first) * double(key.second) / (double(from.first) * double(from.second));
    for (std::size_t i = 0; i < g.curve.xs().size(); ++i) {
      const double m = g.curve.xs()[i];
      by_guide.push_back(src(m) * b(m) / a(m));
      by_nk.push_back(src(m) * nk);
      measured.push_back(g.curve.ys()[i]);
    }
  }
  const RelativeError guide = relative_error(by_guide, measured), plain = relative_error(by_nk, measured);
  MESSAGE("guide ratio: median " << guide.median << " p90 " << guide.p90 << "; n*k: median " << plain.median << " p90 "
                                 << plain.p90);
  CHECK(guide.median < 0.03);
  CHECK(guide.p90 < 0.15);
  CHECK(guide.p90 < 0.6 * plain.p90);
}

namespace {

// The noiseless synthetic profile plus a copy of its 32/8/128 Quest rows at
// head shape 32/16/128 whose times are `factor` x the originals' (the five
// time columns; bytes and flops kept): two head shapes, different timings.
std::string with_second_quest_shape(double factor) {
  SyntheticOptions o;
  o.noise = 0;
  std::string csv = synthetic_profile_csv(o), extra;
  std::stringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("quest_") || line.starts_with("quest_dense_decode") || line.starts_with("quest_e2e")) continue;
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string c; std::getline(row, c, ',');) cells.push_back(c);
    REQUIRE(cells.size() == 25);
    if (cells[6] != "32" || cells[7] != "8") continue;  // the Llama-3-8B rows only
    cells[7] = "16";  // kv_heads: a shape the bench grid does not have
    for (int i = 16; i <= 20; ++i) cells[i] = fmt::format("{:.3f}", std::stod(cells[i]) * factor);
    std::string out;
    for (const auto& c : cells) out += (out.empty() ? "" : ",") + c;
    extra += out + "\n";
  }
  REQUIRE(!extra.empty());
  return csv + extra;
}

}  // namespace

TEST_CASE("Quest fits are per (variant, head shape): two shapes with different timings keep their own fits") {
  const ProfileTable t = ProfileTable::parse(with_second_quest_shape(3.0), "two_shapes.csv");
  const KernelFits f = KernelFits::fit(t);
  const auto& kv = quest_fits(f).variants.at("kvhead");
  REQUIRE(kv.count(HeadShape{32, 8, 128}) == 1);
  REQUIRE(kv.count(HeadShape{32, 16, 128}) == 1);
  CHECK(kv.at(HeadShape{32, 16, 128}).shape == HeadShape{32, 16, 128});
  // Every measured Quest row is predicted by the fit of its own shape (the
  // times differ 3x between the shapes: one fit over both could not do this).
  int rows = 0;
  for (const ProfilePoint& p : t.points()) {
    if (!p.kernel.starts_with("quest_") || p.kernel == "quest_dense_decode" || p.kernel == "quest_e2e") continue;
    if (p.heads != 32 || (p.kv_heads != 8 && p.kv_heads != 16)) continue;
    const auto pred = f.predict(p);
    REQUIRE(pred.has_value());
    CAPTURE(p.line);
    CHECK(*pred == doctest::Approx(p.median_us).epsilon(0.02));
    ++rows;
  }
  CHECK(rows > 10);
  // The pricer uses the model's own shape: 32/16 costs 3x 32/8's sparse decode
  // parts, with no scaling note; an unmeasured shape takes the nearest.
  struct Dense final : DenseAttentionKernels {
    double prefill_us(const PrefillWork&) const override { return 0; }
    double decode_us(const DecodeWork&) const override { return 0; }
  } dense;
  AttentionMethods a;
  a.decode = DecodeMethod::kQuest;
  a.quest.dense_layers = 0;
  BatchShape b;
  b.decode_contexts = {32767};
  auto price = [&](HeadShape h, std::vector<std::string>& notes) {
    const AttentionPricingContext ctx{&dense, &f, h, 1, 1, true, &notes};
    return make_attention_pricers(a, ctx).decode->us(b);
  };
  std::vector<std::string> gqa_notes, mha_notes, tp_notes;
  const double gqa = price(HeadShape{32, 8, 128}, gqa_notes), other = price(HeadShape{32, 16, 128}, mha_notes);
  CHECK(gqa_notes.empty());
  CHECK(mha_notes.empty());
  CHECK(other == doctest::Approx(3 * gqa).epsilon(0.03));
  price(HeadShape{16, 8, 128}, tp_notes);  // 32/16 at TP 2: nearest is the 32/16 fit (same GQA group)
  REQUIRE(tp_notes.size() == 1);
  CHECK(tp_notes[0].find("from 32/16/128") != std::string::npos);
}

namespace {

// The noiseless synthetic profile plus a copy of its fa2 prefill rows as variant
// hopper_wgmma (family prefill_hopper) with `factor` x their times.
std::string with_hopper_rows(double factor) {
  SyntheticOptions o;
  o.noise = 0;
  std::string csv = synthetic_profile_csv(o), extra;
  std::stringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("prefill,fa2,")) continue;
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string c; std::getline(row, c, ',');) cells.push_back(c);
    REQUIRE(cells.size() == 25);
    cells[1] = "hopper_wgmma";
    for (int i = 16; i <= 20; ++i) cells[i] = fmt::format("{:.3f}", std::stod(cells[i]) * factor);
    std::string out;
    for (const auto& c : cells) out += (out.empty() ? "" : ",") + c;
    extra += out + "\n";
  }
  REQUIRE(!extra.empty());
  return csv + extra;
}

}  // namespace

TEST_CASE("prefill fits consider every measured variant and use the fastest valid one per head shape") {
  const HeadShape h{32, 8, 128};
  for (const double factor : {0.5, 2.0}) {
    CAPTURE(factor);
    const ProfileTable t = ProfileTable::parse(with_hopper_rows(factor), "hopper.csv");
    const KernelFits f = KernelFits::fit(t);
    REQUIRE(f.prefill_variants().count("fa2") == 1);
    REQUIRE(f.prefill_variants().count("hopper_wgmma") == 1);
    const std::string want = factor < 1 ? "hopper_wgmma" : "fa2";
    CHECK(f.prefill_variant().at(h) == want);
    // prefill() is the chosen variant's fit, and the summary says which one.
    PrefillWork w;
    w.add(4096, 0);
    const double fa2 = f.prefill_variants().at("fa2").at(h).predict(prefill_features(h, w));
    CHECK(f.prefill().at(h).predict(prefill_features(h, w)) == doctest::Approx(std::min(1.0, factor) * fa2).epsilon(0.02));
    bool listed = false;
    for (const FitSummaryRow& r : f.summary())
      if (r.family == "prefill" && r.key == h.label() + " (" + want + ")") listed = true;
    CHECK(listed);
    // Each row is validated against its own variant's fit.
    for (const ProfilePoint& p : t.points())
      if (p.kernel == "prefill" && p.variant == "hopper_wgmma") {
        REQUIRE(f.predict(p).has_value());
        CHECK(*f.predict(p) == doctest::Approx(p.median_us).epsilon(0.02));
      }
  }
  // The forced-tile diagnostics are never candidates.
  const KernelFits plain = KernelFits::fit(synthetic_table(0));
  CHECK(plain.prefill_variants().count("fa2_m64") == 0);
  CHECK(plain.prefill_variant().at(h) == "fa2");
}

TEST_CASE("a profile file is loaded and fitted once per process until it changes") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("servesim_fits_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "p.csv").string();
  SyntheticOptions o;
  o.quick = true;
  const std::string text = synthetic_profile_csv(o);
  std::ofstream(path, std::ios::binary) << text;
  const auto a = load_kernel_fits(path);
  const auto b = load_kernel_fits(path);
  CHECK(a == b);  // the same object: not read again
  CHECK(!a->gemm().empty());
  // Rewritten (another size, a later time): read and fitted again.
  std::ofstream(path, std::ios::binary) << text << "\n";
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::seconds(2));
  const auto c = load_kernel_fits(path);
  CHECK(c != a);
  CHECK(c->gemm().size() == a->gemm().size());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the run-to-run spread is the median over fitted rows of ln(p90/p10)/2.563, 0 without p10 and p90") {
  const std::string head = "# format=servesim-kernel-profile\n# schema_version=1\n"
                           "kernel,variant,batch,ctx,q_len,prefix,heads,kv_heads,head_dim,page_size,budget,m,n,k,"
                           "params,reps,median_us,p10_us,p90_us,min_us,max_us,bytes,flops,gbps,tflops\n";
  // Three GEMM rows with p90/p10 = e^0.1, e^0.2, e^0.4: the median is ln(p90/p10) = 0.2.
  auto row = [](int m, double p10, double p90) {
    return fmt::format("gemm,cublaslt,,,,,,,,,,{},4096,4096,,5,{},{},{},{},{},0,0,0,0\n", m, p10 * 1.01, p10, p90, p10,
                       p90);
  };
  const ProfileTable t = ProfileTable::parse(
      head + row(16, 10, 10 * std::exp(0.1)) + row(32, 11, 11 * std::exp(0.4)) + row(64, 12, 12 * std::exp(0.2)),
      "spread.csv");
  const KernelFits f = KernelFits::fit(t);
  CHECK(f.spread_rows() == 3);
  CHECK(f.spread_sigma() == doctest::Approx(0.2 / 2.5631031).epsilon(1e-9));
  // Imported tables keep medians only (empty p10/p90): no spread.
  const ProfileTable medians = ProfileTable::parse(
      head + "gemm,cublaslt,,,,,,,,,,16,4096,4096,,5,10,,,,,0,0,0,0\ngemm,cublaslt,,,,,,,,,,32,4096,4096,,5,11,,,,,0,"
             "0,0,0\n",
      "medians.csv");
  CHECK(KernelFits::fit(medians).spread_rows() == 0);
  CHECK(KernelFits::fit(medians).spread_sigma() == 0);
}

TEST_CASE("relative_error's median, p90 and max are the nearest-rank order statistics of the sorted errors") {
  // Selection instead of a full sort must give the same values: sizes 1..200, with
  // repeated errors (ties) and exact predictions (zeros), and with a NaN.
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  auto next = [&x] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  int compared = 0;
  for (std::size_t n = 1; n <= 200; ++n)
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<double> pred, meas, r;
      for (std::size_t i = 0; i < n; ++i) {
        meas.push_back(1 + static_cast<double>(next() % 1000));
        pred.push_back(trial == 0 ? meas.back() * (1 + static_cast<double>(next() % 4) / 8)
                                  : static_cast<double>(next() % 3000) / 2);
        r.push_back(std::abs(pred.back() - meas.back()) / meas.back());
      }
      std::sort(r.begin(), r.end());
      auto q = [&r](double share) {
        const auto idx = static_cast<std::size_t>(std::ceil(share * static_cast<double>(r.size()))) - 1;
        return r[std::min(idx, r.size() - 1)];
      };
      const RelativeError e = relative_error(pred, meas);
      CHECK(e.points == n);
      CHECK(e.median == q(0.5));
      CHECK(e.p90 == q(0.9));
      CHECK(e.max == r.back());
      ++compared;
    }
  CHECK(compared == 1000);
  const std::vector<double> pred = {1, std::nan(""), 3}, meas = {1, 2, 3};
  CHECK(relative_error(pred, meas).points == 3);
}
