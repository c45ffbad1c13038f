// The pricing fast path (priced_cost_model.h) answers bit-identically to its
// backend on random batches: roofline hardware model eager and with CUDA-graph
// decode, TP 1 and 2; the flat model and the fixed backend are not wrapped.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/fixed_cost_model.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/priced_cost_model.h"
#include "costmodel/roofline_cost_model.h"

using namespace servesim;

namespace {
BatchShape random_batch(std::mt19937_64& rng) {
  BatchShape b;
  const int prefills = static_cast<int>(rng() % 4);
  const int decodes = static_cast<int>(rng() % 300);
  for (int i = 0; i < prefills; ++i)
    b.prefills.push_back(PrefillChunk{1 + static_cast<std::int64_t>(rng() % 2048), static_cast<std::int64_t>(rng() % 8000),
                                      rng() % 2 == 0});
  for (int i = 0; i < decodes; ++i) b.decode_contexts.push_back(static_cast<std::int64_t>(rng() % 9000));
  if (b.empty()) b.decode_contexts.push_back(17);
  return b;
}

// The decode sums the engine's lane hands over with b (batch_shape.h): Σ (context + 1),
// Σ ceil((context + 1) / 256) written independently of the pricer's shift, the longest.
BatchShape::DecodeSums sums_of(const BatchShape& b) {
  BatchShape::DecodeSums sums;
  for (std::int64_t c : b.decode_contexts) {
    sums.kv += c + 1;
    sums.splits += (c + 1 + 255) / 256;
    sums.max_kv = std::max(sums.max_kv, c + 1);
  }
  return sums;
}

ModelSpec llama3_8b() {
  ModelSpec m;
  m.name = "Llama-3-8B";
  return m;
}
HardwareSpec h100() {
  HardwareSpec hw;
  hw.name = "H100-SXM";
  return hw;
}

// f(backend, graph, tp) for the roofline eager and with CUDA-graph decode, TP 1 and 2.
template <class F>
void each_roofline(F&& f) {
  for (bool graph : {false, true}) {
    for (int tp : {1, 2}) {
      RooflineOptions o;
      o.cuda_graph_decode = graph;
      o.tp = tp;
      f(std::make_shared<RooflineCostModel>(llama3_8b(), h100(), o), graph, tp);
    }
  }
}
}  // namespace

TEST_CASE("priced cost model: bit-identical to the roofline on 3,000 random batches, eager and CUDA graph, TP 1 and 2") {
  each_roofline([](const std::shared_ptr<const CostModel>& backend, bool graph, int tp) {
    auto fast = priced(backend);
    REQUIRE(fast != backend);
    const auto* p = dynamic_cast<const PricedCostModel*>(fast.get());
    REQUIRE(p != nullptr);
    CHECK(fast->identity() == backend->identity());
    std::mt19937_64 rng(42 + tp + (graph ? 10 : 0));
    for (int i = 0; i < 750; ++i) {
      const BatchShape b = random_batch(rng);
      CHECK(fast->iteration_time(b) == backend->iteration_time(b));
      CHECK(fast->iteration_time(b) == backend->iteration_time(b));  // from the filled tables
    }
    CHECK(p->table_rows() > 0);
    CHECK(fast->iteration_time(BatchShape{}) == 0);
    // Past the table: the backend answers.
    BatchShape big;
    big.prefills.push_back(PrefillChunk{PricedCostModel::kMaxTableTokens + 5, 0, true});
    CHECK(fast->iteration_time(big) == backend->iteration_time(big));
  });
}

TEST_CASE("priced cost model: backends that are not sums of parts stay unwrapped") {
  ModelSpec m;
  HardwareSpec hw;
  RooflineOptions flat;
  flat.model = RooflineModel::kFlat;
  auto f = std::make_shared<RooflineCostModel>(m, hw, flat);
  CHECK(priced(f) == f);
  auto fixed = std::make_shared<FixedCostModel>(FixedCostOptions{});
  CHECK(priced(fixed) == fixed);
}

TEST_CASE("priced cost model: bit-identical to the calibrated backend (own and imported profiles, sparse methods)") {
  ModelSpec m;
  m.name = "Llama-3-8B";
  HardwareSpec hw;
  hw.name = "H100-SXM";
  for (const char* profile : {"/costmodel/profiles/h100-sxm/profile.csv", "/costmodel/profiles/a100-80gb/vllm-0.14/profile.csv"}) {
    auto fits = std::make_shared<const KernelFits>(
        KernelFits::fit(ProfileTable::load(std::string(SERVESIM_SOURCE_DIR) + profile)));
    AttentionMethods sparse;
    sparse.decode = DecodeMethod::kQuest;
    sparse.kv = KvMethod::kAndpro;
    for (const AttentionMethods& a : {AttentionMethods{}, sparse})
      for (int tp : {1, 2}) {
        CalibratedOptions o;
        o.tp = tp;
        auto backend = std::make_shared<CalibratedCostModel>(fits, m, hw, a, o);
        auto fast = priced(backend);
        REQUIRE(dynamic_cast<const PricedCostModel*>(fast.get()) != nullptr);
        std::mt19937_64 rng(7 + tp);
        for (int i = 0; i < 300; ++i) {
          const BatchShape b = random_batch(rng);
          CHECK(fast->iteration_time(b) == backend->iteration_time(b));
          CHECK(fast->iteration_time(b) == backend->iteration_time(b));  // from the filled tables
        }
      }
  }
}

TEST_CASE("decode sums handed over with a batch price it exactly as the pricer's own pass does") {
  // batch_shape.h: the engine's decode lane hands the dense decode pricer
  // Σ (context + 1), Σ ceil((context + 1) / 256) and max (context + 1); the price must be the same
  // bits as when the pricer sums the contexts itself (roofline, calibrated; plain
  // and table-priced). Contexts include the split boundaries 255, 256, 511, 512.
  ModelSpec m;
  m.name = "Llama-3-8B";
  HardwareSpec hw;
  hw.name = "H100-SXM";
  std::vector<std::shared_ptr<const CostModel>> models;
  auto roofline = std::make_shared<RooflineCostModel>(m, hw, RooflineOptions{});
  models.push_back(roofline);
  models.push_back(priced(roofline));
  auto fits = std::make_shared<const KernelFits>(
      KernelFits::fit(ProfileTable::load(SERVESIM_SOURCE_DIR "/costmodel/profiles/h100-sxm/profile.csv")));
  auto calibrated = std::make_shared<CalibratedCostModel>(fits, m, hw, AttentionMethods{}, CalibratedOptions{});
  models.push_back(calibrated);
  models.push_back(priced(calibrated));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 400; ++i) {
    BatchShape b = random_batch(rng);
    if (i % 4 == 0) b.decode_contexts.insert(b.decode_contexts.end(), {0, 255, 256, 511, 512});
    BatchShape with = b;
    with.decode_sums = sums_of(b);
    for (const auto& cm : models) CHECK(cm->iteration_time(with) == cm->iteration_time(b));
  }
}

TEST_CASE("roofline decode-only shortcut: the same nanoseconds as the part-by-part sum on 20,000 decode batches") {
  // roofline_cost_model.cc: a decode-only batch with the engine's decode sums is
  // priced without the pricers' virtual calls, and its tail parts are added as one
  // sum computed ahead, unless the answer is near a rounding boundary. Against the
  // plain backend (part by part) on batches of 1-400 decodes, eager and CUDA graph,
  // TP 1 and 2, each batch with and without sums.
  each_roofline([](const std::shared_ptr<const CostModel>& backend, bool graph, int tp) {
    auto fast = priced(backend);
    std::mt19937_64 rng(350 + tp + (graph ? 10 : 0));
    int differ = 0;
    for (int i = 0; i < 5000; ++i) {
      BatchShape b;
      const int n = 1 + static_cast<int>(rng() % 400);
      for (int j = 0; j < n; ++j) b.decode_contexts.push_back(static_cast<std::int64_t>(rng() % (i % 2 ? 1000 : 100000)));
      BatchShape with = b;
      with.decode_sums = sums_of(b);
      const Time exact = backend->iteration_time(b);
      differ += fast->iteration_time(with) != exact;
      differ += fast->iteration_time(b) != exact;
    }
    CHECK(differ == 0);
  });
}

TEST_CASE("roofline decode-only shortcut: the rounding check declines near a half nanosecond") {
  // An approximate sum decides the answer only when every sum within 2^-47 of it
  // rounds alike; at or next to x.5 ns it declines (the caller then sums exactly).
  const double us_per_ns = 1e-3;
  CHECK_FALSE(roofline_time_if_clear_for_test(12345678.5 * us_per_ns).has_value());
  CHECK_FALSE(roofline_time_if_clear_for_test(std::nextafter(12345678.5 * us_per_ns, 1e9)).has_value());
  CHECK_FALSE(roofline_time_if_clear_for_test(std::nextafter(12345678.5 * us_per_ns, 0.0)).has_value());
  CHECK_FALSE(roofline_time_if_clear_for_test(0.0).has_value());
  CHECK_FALSE(roofline_time_if_clear_for_test(-5.0).has_value());
  // Clear of a half: the nearest nanosecond (at least 1), as seconds_to_time rounds.
  CHECK(roofline_time_if_clear_for_test(12345678.25 * us_per_ns) == Time{12345678});
  CHECK(roofline_time_if_clear_for_test(12345678.75 * us_per_ns) == Time{12345679});
  CHECK(roofline_time_if_clear_for_test(12345678.0 * us_per_ns) == Time{12345678});
  CHECK(roofline_time_if_clear_for_test(0.1 * us_per_ns) == Time{1});
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const double us = 1.0 + static_cast<double>(rng() % 100000000) / 997.0;
    const std::optional<Time> t = roofline_time_if_clear_for_test(us);
    if (t) CHECK(*t == std::max<Time>(1, seconds_to_time(us * 1e-6)));
  }
}

TEST_CASE("which cost models read the decode context values when a batch carries its decode sums") {
  // CostModel::reads_decode_contexts: false lets the engine's decode lane leave the
  // values unwritten (sim/worker.h). The roofline and the calibrated backend with the
  // default (dense) methods, plain and table-priced, read only the sums (the operation
  // list too); a sparse method, the fixed model and any model that does not say
  // otherwise may read them.
  const ModelSpec m = llama3_8b();
  const HardwareSpec hw = h100();
  auto roofline = std::make_shared<RooflineCostModel>(m, hw, RooflineOptions{});
  CHECK_FALSE(roofline->reads_decode_contexts());
  CHECK_FALSE(priced(roofline)->reads_decode_contexts());
  auto fits = std::make_shared<const KernelFits>(
      KernelFits::fit(ProfileTable::load(SERVESIM_SOURCE_DIR "/costmodel/profiles/h100-sxm/profile.csv")));
  auto calibrated = std::make_shared<CalibratedCostModel>(fits, m, hw, AttentionMethods{}, CalibratedOptions{});
  CHECK_FALSE(calibrated->reads_decode_contexts());
  CHECK_FALSE(priced(calibrated)->reads_decode_contexts());
  AttentionMethods quest;
  quest.decode = DecodeMethod::kQuest;
  auto sparse = std::make_shared<CalibratedCostModel>(fits, m, hw, quest, CalibratedOptions{});
  CHECK(sparse->reads_decode_contexts());
  CHECK(priced(sparse)->reads_decode_contexts());
  CHECK(FixedCostModel(FixedCostOptions{}).reads_decode_contexts());
  // With sums, the dense models' parts (their operation list) are the same with the
  // values zeroed: nothing but the sums and the count is read.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    BatchShape b = random_batch(rng);
    b.decode_sums = sums_of(b);
    BatchShape zeroed = b;
    std::fill(zeroed.decode_contexts.begin(), zeroed.decode_contexts.end(), 0);
    for (const std::shared_ptr<const CostModel>& cm :
         std::vector<std::shared_ptr<const CostModel>>{roofline, calibrated}) {
      CHECK(cm->parts(zeroed) == cm->parts(b));
      CHECK(cm->iteration_time(zeroed) == cm->iteration_time(b));
      CHECK(priced(cm)->iteration_time(zeroed) == cm->iteration_time(b));
    }
    // A sparse decode method reads them (Quest's page budget per request).
    if (!b.decode_contexts.empty() && b.decode_contexts.size() < 50)
      CHECK(sparse->iteration_time(zeroed) != sparse->iteration_time(b));
  }
}
