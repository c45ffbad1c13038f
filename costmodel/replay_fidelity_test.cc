// Fidelity report on a synthetic replay CSV whose "measured" times are the predictions
// times known factors, so every expected error is exact; the measured-substitution
// backend; bad replay files.
#include "costmodel/replay_fidelity.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "costmodel/fixed_cost_model.h"
#include "costmodel/operation_list.h"
#include "sim/core/error.h"

namespace servesim {
namespace {
namespace fs = std::filesystem;

fs::path write(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("servesim_replay_fidelity_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

// Decode-only iterations (1 and 3 tokens): recorded errors 0, 0.1, 0.2, 0.3, 0.4 (predicted =
// measured x (1 + e)); prefill-heavy (128 and 600 tokens): 0.25 (predicted 200, measured 160);
// mixed (2 prefill + 8 decodes): 1.0 (predicted 300, measured 150). The roofline column
// predicts twice the measured time everywhere: error 1.0.
const char* kSynthetic =
    "# servesim replay v1\n"
    "iteration,prefills,decodes,measured_us,predicted_us,predicted_roofline_us\n"
    "0,,5,100,100,200\n"
    "1,,5;6;7,100,110,200\n"
    "2,,5,100,120,200\n"
    "3,,9;9;9,100,130,200\n"
    "4,,1,100,140,200\n"
    "5,128:0:1,,160,200,320\n"
    "6,500:0:0;100:20:1,,160,200,320\n"
    "7,2:40:1,1;2;3;4;5;6;7;8,150,300,300\n";

}  // namespace

TEST_CASE("iteration kinds and batch buckets") {
  CHECK(iteration_kind(0, 5) == IterationKind::kDecodeOnly);
  CHECK(iteration_kind(10, 10) == IterationKind::kPrefillHeavy);
  CHECK(iteration_kind(9, 10) == IterationKind::kMixed);
  CHECK(iteration_kind(512, 0) == IterationKind::kPrefillHeavy);
  CHECK(batch_bucket(1) == "1");
  CHECK(batch_bucket(8) == "2-8");
  CHECK(batch_bucket(9) == "9-32");
  CHECK(batch_bucket(2048) == "513-2048");
  CHECK(batch_bucket(2049) == ">2048");
}

TEST_CASE("fidelity summary: median, p90 and max per backend, by kind and batch size, exact on synthetic data") {
  const ReplayTable t = read_replay_csv(write("synthetic.csv", kSynthetic).string());
  CHECK(t.backends == std::vector<std::string>{"recorded", "roofline"});
  REQUIRE(t.rows.size() == 8);
  const auto s = summarise_errors(t);
  auto find = [&](const std::string& backend, const std::string& group) {
    for (const auto& e : s)
      if (e.backend == backend && e.group == group) return e;
    FAIL("no group ", backend, "/", group);
    return ErrorSummary{};
  };
  const ErrorSummary dec = find("recorded", "decode_only");
  CHECK(dec.iterations == 5);
  CHECK(dec.median == doctest::Approx(0.2));
  CHECK(dec.p90 == doctest::Approx(0.36));  // between 0.3 and 0.4 at 0.9 x 4 = 3.6
  CHECK(dec.max == doctest::Approx(0.4));
  const ErrorSummary pre = find("recorded", "prefill_heavy");
  CHECK(pre.iterations == 2);
  CHECK(pre.median == doctest::Approx(0.25));
  CHECK(pre.max == doctest::Approx(0.25));
  CHECK(find("recorded", "mixed").median == doctest::Approx(1.0));
  const ErrorSummary all = find("recorded", "all");
  CHECK(all.iterations == 8);
  CHECK(all.median == doctest::Approx(0.25));  // 0 .1 .2 .25 .25 .3 .4 1 -> (0.25 + 0.25) / 2
  CHECK(all.max == doctest::Approx(1.0));
  CHECK(find("recorded", "1").iterations == 3);       // three single-decode iterations
  CHECK(find("recorded", "2-8").iterations == 2);     // 3-decode iterations
  CHECK(find("recorded", "9-32").iterations == 1);    // 2 + 8
  CHECK(find("recorded", "33-128").iterations == 1);  // 128
  CHECK(find("recorded", "513-2048").iterations == 1);
  for (const auto& e : s)
    if (e.backend == "roofline") {
      CHECK(e.median == doctest::Approx(1.0));
      CHECK(e.max == doctest::Approx(1.0));
    }
  const std::string csv = error_summary_csv(s);
  CHECK(csv.rfind("backend,group_by,group,iterations,median_abs_rel_err,p90_abs_rel_err,max_abs_rel_err,"
                  "signed_median_rel_err,measured_over_predicted\n",
                  0) == 0);
  // decode-only: every prediction slow by 0 .. 40 %, signed median +20 %; 500 us measured, 600 predicted
  CHECK(csv.find("recorded,kind,decode_only,5,0.200000,0.360000,0.400000,0.200000,0.833333\n") != std::string::npos);
  CHECK(csv.find("recorded,all,all,8,") < csv.find("recorded,kind,"));
  CHECK(csv.find("recorded,batch_tokens,1,") < csv.find("recorded,batch_tokens,2-8,"));
}

TEST_CASE("iterations.csv: one row per replayed iteration with its decode KV sums and each backend's signed error") {
  const ReplayTable t = read_replay_csv(write("synthetic.csv", kSynthetic).string());
  const std::string csv = iteration_table_csv(t);
  CHECK(csv.rfind("iteration,kind,batch_tokens,prefill_tokens,decodes,decode_kv_sum,decode_kv_max,measured_us,"
                  "predicted_recorded_us,err_recorded,predicted_roofline_us,err_roofline\n",
                  0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 9);
  // contexts 5;6;7 read 6 + 7 + 8 = 21 KV tokens, the longest 8; predicted 110 vs 100 measured
  CHECK(csv.find("1,decode_only,2-8,0,3,21,8,100.000,110.000,0.100000,200.000,1.000000\n") != std::string::npos);
  CHECK(csv.find("5,prefill_heavy,33-128,128,0,0,0,160.000,200.000,0.250000,320.000,1.000000\n") != std::string::npos);
  CHECK(csv.find("7,mixed,9-32,2,8,44,9,150.000,300.000,1.000000,300.000,1.000000\n") != std::string::npos);
  // With a backend's split by part: one column per part of the operation list, after the errors.
  ReplayTable split = t;
  split.parts_backend = "recorded";
  for (ReplayRow& r : split.rows) {
    r.parts_us.assign(kPartCount, 0.0);
    r.parts_us[static_cast<std::size_t>(Part::kAttentionDecode)] = r.predicted_us[0] / 4;
    r.parts_us[static_cast<std::size_t>(Part::kOther)] = r.predicted_us[0] * 3 / 4;
  }
  const std::string with_parts = iteration_table_csv(split);
  CHECK(with_parts.find(",err_roofline,recorded_embedding_us,recorded_attn_norm_us,") != std::string::npos);
  CHECK(with_parts.find(",recorded_attention_decode_us,") != std::string::npos);
  CHECK(with_parts.find(",recorded_other_us\n") != std::string::npos);
  // iteration 1: 110 us predicted -> attention_decode 27.5, other 82.5
  CHECK(with_parts.find("1,decode_only,2-8,0,3,21,8,100.000,110.000,0.100000,200.000,1.000000,0.000,") != std::string::npos);
  CHECK(with_parts.find(",27.500,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,82.500\n") !=
        std::string::npos);
}

TEST_CASE("measured substitution: replayed shapes get their measured time, others the prediction x ratio of their kind") {
  const ReplayTable t = read_replay_csv(write("synthetic.csv", kSynthetic).string());
  // The inner backend prices every iteration 100 µs, so ratios are measured sums / (100 x count).
  auto inner = std::make_shared<FixedCostModel>(FixedCostOptions{100 * kNsPerUs, 0, 0});
  MeasuredCostModel m(inner, t);
  CHECK(m.ratio(IterationKind::kDecodeOnly) == doctest::Approx(1.0));       // 500 / 500
  CHECK(m.ratio(IterationKind::kPrefillHeavy) == doctest::Approx(1.6));     // 320 / 200
  CHECK(m.ratio(IterationKind::kMixed) == doctest::Approx(1.5));            // 150 / 100
  BatchShape b;
  b.prefills = {{128, 0, true}};
  CHECK(m.iteration_time(b) == 160 * kNsPerUs);  // measured
  b.prefills = {{129, 0, true}};
  CHECK(m.iteration_time(b) == 160 * kNsPerUs);  // not replayed: 100 x 1.6
  BatchShape d;
  d.decode_contexts = {5};
  CHECK(m.iteration_time(d) == 100 * kNsPerUs);  // shape replayed twice (iterations 0 and 2): median of 100, 100
  CHECK(m.measured_hits() == 2);
  CHECK(m.scaled_misses() == 1);
  CHECK(m.iteration_time(BatchShape{}) == 0);
  // A kind never replayed takes the ratio of all iterations.
  ReplayTable only_decodes = t;
  only_decodes.rows.resize(5);
  MeasuredCostModel m2(inner, only_decodes);
  CHECK(m2.ratio(IterationKind::kMixed) == doctest::Approx(1.0));
  CHECK(m2.identity().find("measured substitution") == 0);
}

namespace {
// 100 µs of GPU time and 50 µs of host overhead per iteration, split as the backends split it.
class HostOverheadModel final : public CostModel {
 public:
  Time iteration_time(const BatchShape& b) const override { return b.empty() ? 0 : 150 * kNsPerUs; }
  std::string identity() const override { return "gpu 100us + host 50us"; }
  bool calibrated() const override { return true; }
  PartTimes parts(const BatchShape& b) const override {
    PartTimes p{};
    if (b.empty()) return p;
    p[static_cast<std::size_t>(Part::kOther)] = 100;
    p[static_cast<std::size_t>(Part::kOverhead)] = 50;
    return p;
  }
};
}  // namespace

TEST_CASE("measured substitution adds the backend's host overhead to measured times and scales only the GPU share") {
  const ReplayTable t = read_replay_csv(write("synthetic_host.csv", kSynthetic).string());
  const auto inner = std::make_shared<HostOverheadModel>();
  BatchShape prefill;
  prefill.prefills = {{128, 0, true}};
  CHECK(host_part_us(*inner, prefill) == doctest::Approx(50));
  MeasuredCostModel m(inner, t);
  CHECK(m.host_us() == doctest::Approx(50));
  CHECK(m.ratio(IterationKind::kPrefillHeavy) == doctest::Approx(1.6));  // 320 measured / 200 of GPU share
  CHECK(m.iteration_time(prefill) == 210 * kNsPerUs);                    // measured 160 + host 50
  prefill.prefills = {{129, 0, true}};
  CHECK(m.iteration_time(prefill) == 210 * kNsPerUs);                    // not replayed: 100 x 1.6 + 50
}

TEST_CASE("bad replay CSVs are errors naming file, line and field") {
  auto error_of = [](const std::string& name, const std::string& text) {
    const fs::path p = write(name, text);
    try {
      read_replay_csv(p.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("a.csv", "iteration,prefills,decodes,measured_us\n0,,1,5\n").find(
            "a.csv:1: the header has no predicted_us or predicted_<backend>_us column") != std::string::npos);
  CHECK(error_of("b.csv", "iteration,prefills,measured_us,predicted_us\n").find("b.csv:1: the header has no 'decodes' column") !=
        std::string::npos);
  const std::string head = "iteration,prefills,decodes,measured_us,predicted_us\n";
  CHECK(error_of("c.csv", head + "0,12:0,,5,5\n").find("c.csv:2: field 'prefills': chunk '12:0'") != std::string::npos);
  CHECK(error_of("d.csv", head + "0,,1,0,5\n").find("d.csv:2: field 'measured_us': not a positive number: '0'") !=
        std::string::npos);
  CHECK(error_of("e.csv", head + "0,,1;x,5,5\n").find("e.csv:2: field 'decodes': not a context length: 'x'") !=
        std::string::npos);
  CHECK(error_of("f.csv", head + "0,,,5,5\n").find("f.csv:2: field 'prefills': an iteration with neither") != std::string::npos);
  CHECK(error_of("g.csv", head + "0,,1,5\n").find("g.csv:2: has 4 fields, the header has 5") != std::string::npos);
  CHECK(error_of("h.csv", head).find("h.csv: no iterations") != std::string::npos);
}

}  // namespace servesim
