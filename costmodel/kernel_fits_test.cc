// Tests of the fitting machinery: NNLS recovery, monotone curves, recovery of
// the formulas behind a generated profile, held-out validation, and speed.
#include <doctest/doctest.h>

#include <chrono>
#include <map>

#include "costmodel/feature_fit.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/monotone_curve.h"
#include "costmodel/profile_validation.h"
#include "costmodel/synthetic_profile.h"
#include "sim/error.h"

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
  const QuestFits& q = f.quest().at("kvhead");
  CHECK(coef(q.topk, "scores") == doctest::Approx(truth.quest_topk_per_score_us).epsilon(0.02));
  CHECK(1 / coef(q.decode, "selected_kv_bytes") / 1e3 == doctest::Approx(truth.quest_dec_bw_gbps).epsilon(0.02));
  for (const char* p : {"vs_30_2048", "vs_3000_200", "bs_100", "ashape_1024_4096"}) {
    const MinfFits& m = f.minference().at(std::string(p) + "/structured");
    CHECK(m.band_width == doctest::Approx(synthetic_minf_band_width(p)).epsilon(0.01));
    CHECK(coef(m.attention, "tiles") == doctest::Approx(truth.minf_att_per_tile_us).epsilon(0.02));
  }
  CHECK(f.minference().at("ashape_1024_4096/structured").estimate.empty());  // static pattern: no estimate
  const AndproFits& a = f.andpro().at(32);
  CHECK(coef(a.score, "candidates") == doctest::Approx(truth.andpro_score_per_cand_us).epsilon(0.01));
  CHECK(coef(a.compact, "kept") == doctest::Approx(truth.andpro_compact_per_kept_us).epsilon(0.01));
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
    if (fam.family == "gemm") {
      // A held-out M is interpolated across a 4x gap, and the generated GEMMs have
      // whole-wave steps at arbitrary M that no power-of-two grid resolves (the
      // same limit applies between measured points in a simulation; docs/costmodel.md).
      CHECK(fam.error.median <= 0.05);
      CHECK(fam.error.p90 <= 0.20);
    } else {
      CHECK(fam.meets_target());
    }
  }
  // Deterministic: the same split and numbers again.
  const ValidationResult w = validate_profile(t, ValidationOptions{});
  CHECK(validation_csv(v) == validation_csv(w));
  CHECK(validation_csv(v) != validation_csv(validate_profile(t, ValidationOptions{0.2, 2})));
}

TEST_CASE("fitting a full profile takes well under a second") {
  const ProfileTable& t = synthetic_table(0.02);
  const auto start = std::chrono::steady_clock::now();
  const KernelFits f = KernelFits::fit(t);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("fit of " << t.points().size() << " rows: " << s * 1e3 << " ms");
  CHECK(s < 2.0);
  CHECK(!f.summary().empty());
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
