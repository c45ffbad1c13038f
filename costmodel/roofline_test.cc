// Tests of the operation list (hand-computed FLOPs and bytes for two models)
// and of the hardware roofline: monotonicity, the latency floor, tile and
// wave quantisation, the split by part, the flat model, fit-roofline.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "costmodel/operation_list.h"
#include "costmodel/roofline_cost_model.h"
#include "costmodel/roofline_fit.h"
#include "costmodel/synthetic_profile.h"
#include "sim/core/error.h"

using namespace servesim;

namespace {
ModelSpec roofline_llama3_8b() {
  ModelSpec m;
  m.name = "Llama-3-8B";
  return m;
}
ModelSpec llama2_7b() {  // configs/models/llama-2-7b.yaml
  ModelSpec m;
  m.name = "Llama-2-7B";
  m.kv_heads = 32;
  m.intermediate = 11008;
  m.vocab = 32000;
  m.max_context = 4096;
  return m;
}
HardwareSpec roofline_h100() {
  HardwareSpec h;
  h.name = "H100-SXM";
  return h;
}
const Operation& op(const std::vector<Operation>& ops, Part p) {
  auto it = std::find_if(ops.begin(), ops.end(), [&](const Operation& o) { return o.part == p; });
  REQUIRE(it != ops.end());
  return *it;
}
bool has(const std::vector<Operation>& ops, Part p) {
  return std::any_of(ops.begin(), ops.end(), [&](const Operation& o) { return o.part == p; });
}
BatchShape prefill(std::int64_t n, std::int64_t ctx = 0) {
  BatchShape b;
  b.prefills.push_back({n, ctx, true});
  return b;
}
BatchShape decode(std::int64_t batch, std::int64_t ctx) {
  BatchShape b;
  b.decode_contexts.assign(static_cast<std::size_t>(batch), ctx);
  return b;
}
double part(const PartTimes& p, Part x) { return p[static_cast<std::size_t>(x)]; }
}  // namespace

TEST_CASE("operation list: Llama-3-8B prefill of 512 tokens, FLOPs and bytes of every part by hand") {
  const auto ops = operation_list(roofline_llama3_8b(), 1, prefill(512));
  CHECK(op(ops, Part::kQkv).flops == 25769803776.0);  // 2·512·6144·4096
  CHECK(op(ops, Part::kQkv).bytes == 60817408.0);     // 2·(512·4096 + 6144·4096 + 512·6144)
  CHECK(op(ops, Part::kO).flops == 17179869184.0);
  CHECK(op(ops, Part::kO).bytes == 41943040.0);
  CHECK(op(ops, Part::kGateUp).flops == 120259084288.0);
  CHECK(op(ops, Part::kGateUp).bytes == 268435456.0);
  CHECK(op(ops, Part::kDown).flops == 60129542144.0);
  CHECK(op(ops, Part::kDown).bytes == 136314880.0);
  CHECK(op(ops, Part::kAttnNorm).bytes == 16777216.0);  // 8·512·4096
  CHECK(op(ops, Part::kAttnNorm).flops == 10485760.0);  // 5·512·4096
  CHECK(op(ops, Part::kMlpNorm).bytes == 16777216.0);
  CHECK(op(ops, Part::kRope).bytes == 10485760.0);      // 4·512·40·128
  CHECK(op(ops, Part::kRope).flops == 7864320.0);       // 3·512·40·128
  CHECK(op(ops, Part::kKvWrite).bytes == 4194304.0);    // 4·512·8·128·2
  CHECK(op(ops, Part::kActivation).bytes == 44040192.0);  // 6·512·14336
  CHECK(op(ops, Part::kActivation).flops == 36700160.0);
  CHECK(op(ops, Part::kAttentionPrefill).flops == 2151677952.0);  // 4·32·128·(512·513/2)
  CHECK(op(ops, Part::kAttentionPrefill).bytes == 10485760.0);    // 512·4096 KV + 2·512·32·128·2 Q,O
  CHECK(op(ops, Part::kLmHead).m == 1);                            // one completing chunk
  CHECK(op(ops, Part::kLmHead).flops == 1050673152.0);             // 2·128256·4096
  CHECK(op(ops, Part::kLmHead).bytes == 1050937856.0);
  CHECK(op(ops, Part::kSampling).bytes == 513024.0);               // 4·128256
  CHECK(op(ops, Part::kEmbedding).bytes == 8388608.0);             // 4·512·4096
  CHECK(op(ops, Part::kFinalNorm).bytes == 16777216.0);
  CHECK_FALSE(has(ops, Part::kAttentionDecode));
  CHECK_FALSE(has(ops, Part::kAllreduce));  // tp = 1
  CHECK(op(ops, Part::kQkv).per_layer);
  CHECK_FALSE(op(ops, Part::kLmHead).per_layer);
}

TEST_CASE("operation list: Llama-2-7B (no GQA) decode of 4 requests, and TP 2 shards") {
  BatchShape b;
  b.decode_contexts = {100, 200, 300, 400};
  const auto ops = operation_list(llama2_7b(), 1, b);
  CHECK(op(ops, Part::kQkv).flops == 402653184.0);  // 2·4·12288·4096
  CHECK(op(ops, Part::kQkv).bytes == 100794368.0);  // 2·(4·4096 + 12288·4096 + 4·12288)
  CHECK(op(ops, Part::kGateUp).flops == 721420288.0);  // 2·4·22016·4096
  CHECK(op(ops, Part::kDown).flops == 360710144.0);    // 2·4·4096·11008
  CHECK(op(ops, Part::kAttentionDecode).flops == 16449536.0);  // 4·32·128·1004
  CHECK(op(ops, Part::kAttentionDecode).bytes == 16515072.0);  // 1004·16384 KV + 2·4·32·128·2 Q,O
  CHECK(op(ops, Part::kKvWrite).bytes == 131072.0);            // 4·4·32·128·2
  CHECK(op(ops, Part::kLmHead).m == 4);
  CHECK(op(ops, Part::kLmHead).n == 32000);
  CHECK_FALSE(has(ops, Part::kAttentionPrefill));

  const auto tp2 = operation_list(llama2_7b(), 2, b);
  CHECK(op(tp2, Part::kQkv).n == 6144);  // (16 + 2·16)·128
  CHECK(op(tp2, Part::kDown).k == 5504);
  CHECK(op(tp2, Part::kAllreduce).bytes == 2 * 2 * 0.5 * 4 * 4096 * 2);
  CHECK(op(tp2, Part::kAllreduce).launches == 2);
}

TEST_CASE("hardware roofline is monotone in tokens, batch and context, and its parts add up") {
  RooflineCostModel r(roofline_llama3_8b(), roofline_h100(), RooflineOptions{});
  Time last = 0;
  for (std::int64_t n = 1; n <= 8192; n += 37) {
    const Time t = r.iteration_time(prefill(n));
    CHECK(t >= last);
    last = t;
  }
  last = 0;
  for (std::int64_t batch = 1; batch <= 256; ++batch) {
    const Time t = r.iteration_time(decode(batch, 2048));
    CHECK(t >= last);
    last = t;
  }
  last = 0;
  for (std::int64_t ctx = 16; ctx <= 65536; ctx += 509) {
    const Time t = r.iteration_time(decode(32, ctx));
    CHECK(t >= last);
    last = t;
  }
  for (const BatchShape& b : {prefill(3000, 1000), decode(64, 4096)}) {
    double sum = 0;
    for (double x : r.parts(b)) sum += x;
    CHECK(sum == doctest::Approx(time_to_seconds(r.iteration_time(b)) * 1e6).epsilon(1e-6));
  }
  CHECK(r.identity().find("uncalibrated") != std::string::npos);
}

TEST_CASE("latency floor: small kernels cost the floor, launch-bound eagerly and min_kernel_us in a CUDA graph") {
  const HardwareSpec hw = roofline_h100();  // min_kernel_us 2, kernel_launch_us 4
  RooflineCostModel eager(roofline_llama3_8b(), hw, RooflineOptions{});
  RooflineOptions g;
  g.cuda_graph_decode = true;
  RooflineCostModel graph(roofline_llama3_8b(), hw, g);
  const BatchShape b = decode(1, 16);
  // Decode attention of one 17-token sequence: 86 KB, well under a µs even on 8 of 132 SMs.
  CHECK(part(eager.parts(b), Part::kAttentionDecode) == doctest::Approx(32 * 4.0));
  CHECK(part(graph.parts(b), Part::kAttentionDecode) == doctest::Approx(32 * 2.0));
  CHECK(part(eager.parts(b), Part::kRope) == doctest::Approx(32 * 4.0));
  CHECK(part(graph.parts(b), Part::kLaunch) == doctest::Approx(4.0));  // one graph launch
  CHECK(part(eager.parts(b), Part::kLaunch) == 0);
  CHECK(graph.iteration_time(b) < eager.iteration_time(b));
  // A prefill iteration is launched eagerly even with cuda_graph_decode.
  CHECK(graph.iteration_time(prefill(64)) == eager.iteration_time(prefill(64)));
  // Large decode attention is bandwidth-bound, far above the floor.
  CHECK(part(eager.parts(decode(64, 8192)), Part::kAttentionDecode) > 32 * 50.0);
}

TEST_CASE("GEMM tile and wave quantisation: flat in M inside a wave, steps at wave edges, memory-bound at small M") {
  RooflineCostModel r(roofline_llama3_8b(), roofline_h100(), RooflineOptions{});
  // M = 1..8: reading the 4096x6144 weight dominates (within 1%).
  CHECK(r.gemm_kernel_us(8, 6144, 4096) == doctest::Approx(r.gemm_kernel_us(1, 6144, 4096)).epsilon(0.01));
  // Compute-bound: piecewise constant with steps (a plain roofline would rise smoothly with M).
  std::set<double> levels;
  double biggest_step = 0;
  for (int m = 2048; m < 8192; ++m) {
    const double a = r.gemm_kernel_us(m, 4096, 14336), b = r.gemm_kernel_us(m + 1, 4096, 14336);
    CHECK(b >= a * (1 - 1e-12));
    levels.insert(a);
    biggest_step = std::max(biggest_step, b / a);
  }
  CHECK(levels.size() < 60);
  CHECK(biggest_step > 1.05);
  // Quantised time is never below the exact-FLOP roofline at the same efficiency.
  const HardwareSpec hw = roofline_h100();
  for (int m : {100, 777, 3333}) {
    const double exact = 2.0 * m * 4096 * 14336 / (hw.bf16_tflops * 1e12 * hw.gemm_flops_fraction) * 1e6;
    CHECK(r.gemm_kernel_us(m, 4096, 14336) >= exact * (1 - 1e-9));
  }
}

TEST_CASE("prefill attention efficiency grows with size: one short prompt fills few SMs") {
  RooflineCostModel r(roofline_llama3_8b(), roofline_h100(), RooflineOptions{});
  const auto per_flop = [&](std::int64_t n) {
    const auto ops = operation_list(roofline_llama3_8b(), 1, prefill(n));
    return part(r.parts(prefill(n)), Part::kAttentionPrefill) / op(ops, Part::kAttentionPrefill).flops;
  };
  CHECK(per_flop(128) > 3 * per_flop(4096));  // 32 CTAs on 132 SMs vs 1024 CTAs in 8 waves
  CHECK(wave_fill(32, 132) == doctest::Approx(32.0 / 132));
  CHECK(wave_fill(264, 132) == 1.0);
  CHECK(wave_fill(265, 132) == doctest::Approx(265.0 / 396));
}

TEST_CASE("model flat keeps the old roofline: single-token decode near weights over 0.8 x bandwidth") {
  RooflineOptions o;
  o.model = RooflineModel::kFlat;
  o.iteration_overhead_us = 0;
  o.kernels_per_layer = 0;
  RooflineCostModel r(roofline_llama3_8b(), roofline_h100(), o);
  const double t = time_to_seconds(r.iteration_time(decode(1, 1)));
  CHECK(t == doctest::Approx(roofline_llama3_8b().weight_bytes_total() / (3350e9 * 0.8)).epsilon(0.05));
}

TEST_CASE("the roofline prices dense attention only: a sparse method is an error naming the fix") {
  AttentionMethods quest;
  quest.decode = DecodeMethod::kQuest;
  CHECK_THROWS_WITH_AS(RooflineCostModel(roofline_llama3_8b(), roofline_h100(), RooflineOptions{}, quest),
                       doctest::Contains("priced from measured kernels only"), InputError);
}

TEST_CASE("fit-roofline recovers the generated profile's rates as knobs and writes a loadable YAML") {
  SyntheticOptions o;
  o.noise = 0;
  const ProfileTable t = ProfileTable::parse(synthetic_profile_csv(o), "syn.csv");
  const RooflineKnobFit f = fit_roofline_knobs(t, roofline_h100());
  const SyntheticTruth truth;
  CHECK(f.hardware.sms == 132);
  CHECK(f.hardware.bandwidth_fraction == doctest::Approx(truth.copy_gbps / 3350).epsilon(1e-6));
  // Prefill rows at >= 1024-token chunks: the FLOP term dominates the generator's formula.
  CHECK(f.hardware.prefill_attention_flops_fraction == doctest::Approx(truth.prefill_tflops / 989).epsilon(0.1));
  CHECK(f.hardware.gemm_flops_fraction > 0.5);
  CHECK(f.hardware.gemm_flops_fraction <= truth.gemm_tflops / 989 * 1.05);
  CHECK(f.hardware.decode_attention_bandwidth_fraction ==
        doctest::Approx(truth.decode_bw_gbps / 3350).epsilon(0.1));
  CHECK(f.hardware.min_kernel_us >= truth.gemm_t0_us);
  CHECK(f.hardware.min_kernel_us < 2 * truth.decode_t0_us);
  const std::string yaml = roofline_knobs_yaml(f, t);
  for (const char* key : {"sms:", "bandwidth_fraction:", "gemm_flops_fraction:", "prefill_attention_flops_fraction:",
                          "decode_attention_bandwidth_fraction:", "min_kernel_us:", "SYNTHETIC"})
    CHECK(yaml.find(key) != std::string::npos);
  // A profile without the rows keeps the hardware file's values and says so.
  const std::string csv = synthetic_profile_csv(o);
  const std::string header = "kernel,variant,";
  const std::size_t at = csv.find(header);
  std::string only_andpro = "# format=servesim-kernel-profile\n# schema_version=1\n" +
                           csv.substr(at, csv.find('\n', at) - at + 1);
  for (std::size_t line = csv.find("\nandpro_score"); line != std::string::npos;
       line = csv.find("\nandpro_score", line + 1))
    only_andpro += csv.substr(line + 1, csv.find('\n', line + 1) - line);
  const ProfileTable empty = ProfileTable::parse(only_andpro, "andpro_only.csv");
  const RooflineKnobFit kept = fit_roofline_knobs(empty, roofline_h100());
  CHECK(kept.hardware == roofline_h100());
}

namespace {

// Extra rows that fit-roofline must ignore when they carry `marker` in their params (as the
// same rows without it they pull the knob `knob` below 0.9 of its value): row(i) is the i-th
// row's cells up to params, timing(i) the rest of the line.
void check_marked_rows_ignored(const std::function<std::string(int)>& row, const std::function<std::string(int)>& timing,
                               int rows, const std::string& marker, double HardwareSpec::*knob) {
  SyntheticOptions o;
  o.noise = 0;
  const std::string csv = synthetic_profile_csv(o);
  const RooflineKnobFit plain = fit_roofline_knobs(ProfileTable::parse(csv, "syn.csv"), roofline_h100());
  std::string marked, unmarked;
  for (int i = 0; i < rows; ++i) {
    marked += row(i) + marker + timing(i);
    unmarked += row(i) + timing(i);
  }
  const RooflineKnobFit with_marked = fit_roofline_knobs(ProfileTable::parse(csv + marked, "marked.csv"), roofline_h100());
  CHECK(with_marked.hardware.*knob == doctest::Approx(plain.hardware.*knob));
  const RooflineKnobFit with_rows = fit_roofline_knobs(ProfileTable::parse(csv + unmarked, "rows.csv"), roofline_h100());
  CHECK(with_rows.hardware.*knob < 0.9 * plain.hardware.*knob);
}

}  // namespace

TEST_CASE("fit-roofline: decode_ragged pair rows (params dist=) do not enter the decode bandwidth fraction") {
  // Many slow decode rows that would fill the SMs.
  check_marked_rows_ignored([](int) { return std::string("decode,splitkv,256,8192,1,,32,8,128,16,,,,,model=llama3-8b;ragged=1"); },
                            [](int) { return std::string(",20,5000,4900,5100,4900,5100,8.6e9,1e9,,\n"); }, 400,
                            ";dist=halves_512_8192", &HardwareSpec::decode_attention_bandwidth_fraction);
}

TEST_CASE("fit-roofline: gemm_dense rows (params dense=1) do not enter the GEMM rate") {
  // Many slow rows of one shape at M >= 1024 (~1 us per token).
  check_marked_rows_ignored(
      [](int i) { return fmt::format("gemm,cublaslt,,,,,,,,,,{},4096,4096,model=x;layer=o;tp=1", 1032 + 8 * i); },
      [](int i) {
        const int m = 1032 + 8 * i;
        return fmt::format(",50,{},{},{},{},{},1,1,,\n", m, m, m, m, m);
      },
      800, ";dense=1", &HardwareSpec::gemm_flops_fraction);
}

TEST_CASE("roofline decode attention: the header's formula to the bit, SMs partly and fully busy") {
  // roofline_cost_model.h: max(bytes / (BW·decode_attention_bandwidth_fraction·fill),
  // FLOPs / (peak·prefill_attention_flops_fraction), floor) per layer, fill = min(1,
  // split-KV items / sms). Written here term by term, so the kernels' precomputed
  // factors and their no-division path at fill 1 must give the same bits; the
  // batches span fill < 1 and fill 1.
  const ModelSpec m = roofline_llama3_8b();
  const HardwareSpec hw = roofline_h100();
  for (bool graph : {false, true}) {
    RooflineOptions o;
    o.cuda_graph_decode = graph;
    const RooflineCostModel r(m, hw, o);
    const double floor = r.kernel_floor_us(graph);
    const double qh = static_cast<double>(m.heads), kvh = static_cast<double>(m.kv_heads), d = static_cast<double>(m.head_dim);
    int fill_below = 0, fill_one = 0;
    for (std::int64_t n : {1, 2, 3, 7, 16, 17, 33, 64, 128, 255}) {
      for (std::int64_t ctx : {0, 100, 255, 256, 1000, 4095, 30000}) {
        const BatchShape b = decode(n, ctx);
        const double kv = static_cast<double>(n * (ctx + 1));
        const double splits = static_cast<double>(n * ((ctx + 1 + 255) / 256));
        const double flops = 4.0 * qh * d * kv;
        const double bytes = kv * 2 * kvh * d * m.kv_bytes + 2.0 * static_cast<double>(n) * qh * d * 2;
        const double fill = std::min(1.0, splits * kvh / hw.sms);
        (fill < 1 ? fill_below : fill_one)++;
        const double memory = bytes / (hw.mem_bandwidth_gbps * 1e9 * hw.decode_attention_bandwidth_fraction * fill);
        const double compute = flops / (hw.bf16_tflops * 1e12 * hw.prefill_attention_flops_fraction);
        const double expected = static_cast<double>(m.layers) * std::max({compute * 1e6, memory * 1e6, floor});
        CHECK(part(r.parts(b), Part::kAttentionDecode) == expected);
      }
    }
    CHECK(fill_below > 0);
    CHECK(fill_one > 0);
  }
}
