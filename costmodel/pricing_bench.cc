// Micro-benchmark (Google Benchmark; not a test): ns per priced iteration of
// each backend, plain and through the pricing fast path (priced_cost_model.h).
// The batches are a fixed mix like the engine bench's (Llama-3-8B on one
// H100): 70% decode-only (1-256 requests, contexts 100-4,000), 30% with 1-3
// prefill chunks (up to 2,048 tokens, up to 4,000 cached) beside the decodes.
//   servesim_pricing_bench [--benchmark_filter=...] [--benchmark_min_time=...]
// The calibrated backend uses costmodel/profiles/h100-sxm/profile.csv (skipped
// with an error line when it cannot be loaded). *_sums: the same batches with
// the decode sums the engine's decode lane hands over (batch_shape.h). *_decode: the
// mix's decode-only batches alone, with their sums (the engine's commonest). *_fit: decode by
// the linear fit, no launch excess (cost_model.decode_attention: fit, launch_excess: none).
// Each batch keeps its decode search hints (batch_shape.h) between its visits, so from the
// second pass on every hint is right: the calibrated *_sums figures are the hinted case
// (in the engine a worker's next batch usually, not always, finds its hints right).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/fixed_cost_model.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/priced_cost_model.h"
#include "costmodel/profile_table.h"
#include "costmodel/roofline_cost_model.h"

using namespace servesim;

namespace {

const std::vector<BatchShape>& batches() {
  static const std::vector<BatchShape> all = [] {
    std::mt19937_64 rng(35);
    std::vector<BatchShape> v(1024);
    for (BatchShape& b : v) {
      const std::size_t decodes = 1 + rng() % 256;
      for (std::size_t i = 0; i < decodes; ++i) b.decode_contexts.push_back(100 + static_cast<std::int64_t>(rng() % 3900));
      if (rng() % 10 < 3) {
        const int chunks = 1 + static_cast<int>(rng() % 3);
        for (int c = 0; c < chunks; ++c)
          b.prefills.push_back(PrefillChunk{1 + static_cast<std::int64_t>(rng() % 2048),
                                            static_cast<std::int64_t>(rng() % 4000), rng() % 2 == 0});
      }
    }
    return v;
  }();
  return all;
}

// The same batches carrying the decode sums the engine's decode lane keeps
// (batch_shape.h), as the engine prices them in mixed mode.
const std::vector<BatchShape>& batches_with_sums() {
  static const std::vector<BatchShape> all = [] {
    std::vector<BatchShape> v = batches();
    for (BatchShape& b : v) {
      BatchShape::DecodeSums sums;
      for (std::int64_t c : b.decode_contexts) {
        sums.kv += c + 1;
        sums.splits += static_cast<std::int64_t>(decode_split_count(static_cast<std::uint64_t>(c)));
        sums.max_kv = std::max(sums.max_kv, c + 1);
      }
      b.decode_sums = sums;
    }
    return v;
  }();
  return all;
}

ModelSpec llama3_8b() {
  ModelSpec m;
  m.name = "Llama-3-8B";
  return m;
}
HardwareSpec h100() {
  HardwareSpec h;
  h.name = "H100-SXM";
  return h;
}

// The decode-only batches of batches_with_sums() (70% of the mix): the engine's
// commonest iteration, priced from a decode row (priced_cost_model.h).
const std::vector<BatchShape>& decode_batches_with_sums() {
  static const std::vector<BatchShape> all = [] {
    std::vector<BatchShape> v;
    for (const BatchShape& b : batches_with_sums())
      if (b.prefills.empty()) v.push_back(b);
    while (v.size() & (v.size() - 1)) v.pop_back();  // a power of two (run() wraps with a mask)
    return v;
  }();
  return all;
}

enum class Mix { kPlain, kSums, kDecodeSums };

void run(benchmark::State& state, const CostModel& cost, Mix mix = Mix::kPlain) {
  const auto& v = mix == Mix::kPlain ? batches() : mix == Mix::kSums ? batches_with_sums() : decode_batches_with_sums();
  std::size_t i = 0;
  Time sum = 0;
  for (auto _ : state) {
    sum += cost.iteration_time(v[i]);
    i = (i + 1) & (v.size() - 1);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_roofline(benchmark::State& s) { run(s, RooflineCostModel(llama3_8b(), h100(), RooflineOptions{})); }
void BM_roofline_priced(benchmark::State& s) {
  run(s, *priced(std::make_shared<RooflineCostModel>(llama3_8b(), h100(), RooflineOptions{})));
}
void BM_roofline_priced_sums(benchmark::State& s) {
  run(s, *priced(std::make_shared<RooflineCostModel>(llama3_8b(), h100(), RooflineOptions{})), Mix::kSums);
}
void BM_roofline_priced_decode(benchmark::State& s) {
  run(s, *priced(std::make_shared<RooflineCostModel>(llama3_8b(), h100(), RooflineOptions{})), Mix::kDecodeSums);
}
void BM_roofline_flat(benchmark::State& s) {
  RooflineOptions o;
  o.model = RooflineModel::kFlat;
  run(s, RooflineCostModel(llama3_8b(), h100(), o));
}
void BM_fixed(benchmark::State& s) { run(s, FixedCostModel(FixedCostOptions{})); }

// decode_fit: decode priced by the linear fit without the launch excess (the pricing
// before the decode rows; *_fit benchmarks) instead of the default (auto: the rows).
std::shared_ptr<const CostModel> calibrated_model(bool decode_fit = false) {
  auto make = [](bool fit) -> std::shared_ptr<const CostModel> {
    try {
      auto fits = std::make_shared<const KernelFits>(
          KernelFits::fit(ProfileTable::load(SERVESIM_SOURCE_DIR "/costmodel/profiles/h100-sxm/profile.csv")));
      CalibratedOptions o;
      if (fit) o.launch_excess = LaunchExcess::kNone, o.decode_attention = DecodePricing::kFit;
      return std::make_shared<CalibratedCostModel>(fits, llama3_8b(), h100(), AttentionMethods{}, o);
    } catch (const std::exception&) {
      return nullptr;
    }
  };
  static std::shared_ptr<const CostModel> rows = make(false), fit = make(true);
  return decode_fit ? fit : rows;
}
// The calibrated model (decode by the fit with `decode_fit`), table-priced unless
// `plain`, over `mix`; skipped with an error line when the profile cannot be loaded.
void run_calibrated(benchmark::State& s, bool plain, Mix mix, bool decode_fit = false) {
  auto m = calibrated_model(decode_fit);
  if (!m) {
    s.SkipWithError("costmodel/profiles/h100-sxm/profile.csv could not be loaded and fitted");
    return;
  }
  run(s, plain ? *m : *priced(m), mix);  // CalibratedCostModel implements TablePricedBackend
}
void BM_calibrated(benchmark::State& s) { run_calibrated(s, true, Mix::kPlain); }
void BM_calibrated_priced(benchmark::State& s) { run_calibrated(s, false, Mix::kPlain); }
void BM_calibrated_priced_sums(benchmark::State& s) { run_calibrated(s, false, Mix::kSums); }
void BM_calibrated_priced_decode(benchmark::State& s) { run_calibrated(s, false, Mix::kDecodeSums); }
void BM_calibrated_priced_sums_fit(benchmark::State& s) { run_calibrated(s, false, Mix::kSums, true); }

}  // namespace

BENCHMARK(BM_roofline);
BENCHMARK(BM_roofline_priced);
BENCHMARK(BM_roofline_priced_sums);
BENCHMARK(BM_roofline_priced_decode);
BENCHMARK(BM_roofline_flat);
BENCHMARK(BM_calibrated);
BENCHMARK(BM_calibrated_priced);
BENCHMARK(BM_calibrated_priced_sums);
BENCHMARK(BM_calibrated_priced_decode);
BENCHMARK(BM_calibrated_priced_sums_fit);
BENCHMARK(BM_fixed);
BENCHMARK_MAIN();
