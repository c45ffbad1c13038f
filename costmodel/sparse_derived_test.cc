// Sparse methods priced from a profile's dense kernels (derived_sparse.h):
// the H100 profile with its quest/minf/andpro rows removed stands for a
// dense-only (imported) profile; the full H100 profile, which measured every
// family, is the reference the derived pricing is compared with.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/derived_sparse.h"
#include "costmodel/sparse_ratio_checks.h"
#include "sim/core/error.h"

using namespace servesim;

namespace {

const char* kH100 = SERVESIM_SOURCE_DIR "/costmodel/profiles/h100-sxm/profile.csv";

bool sparse_row(const ProfilePoint& p) {
  return p.kernel.starts_with("quest") || p.kernel.starts_with("minf") || p.kernel.starts_with("andpro");
}

std::shared_ptr<const KernelFits> h100(bool dense_only) {
  static std::shared_ptr<const KernelFits> full, dense;
  auto& slot = dense_only ? dense : full;
  if (!slot) {
    const ProfileTable t = ProfileTable::load(kH100);
    slot = std::make_shared<KernelFits>(
        dense_only ? KernelFits::fit(t, [](const ProfilePoint& p) { return !sparse_row(p); }) : KernelFits::fit(t));
  }
  return slot;
}

ModelSpec llama8b() {
  ModelSpec m;
  m.name = "Llama-3-8B";
  return m;
}

AttentionMethods all_sparse() {
  AttentionMethods a;
  a.prefill = PrefillMethod::kMInference;
  a.decode = DecodeMethod::kQuest;
  a.kv = KvMethod::kAndpro;
  return a;
}

CalibratedCostModel model(bool dense_only, AttentionMethods a = all_sparse(), CalibratedOptions o = {}) {
  return CalibratedCostModel(h100(dense_only), llama8b(), HardwareSpec{}, std::move(a), o);
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

std::string notes_of(const CalibratedCostModel& c) {
  std::string s;
  for (const auto& n : c.scaling_notes()) s += n + "\n";
  return s;
}

}  // namespace

TEST_CASE("a dense-only profile prices Quest, MInference and AnDPro from its dense kernels, and says so") {
  const CalibratedCostModel c = model(true);
  const std::string notes = notes_of(c);
  CHECK(notes.find("quest derived from the dense kernels") != std::string::npos);
  CHECK(notes.find("minference derived from the dense kernels") != std::string::npos);
  CHECK(notes.find("andpro derived from the dense kernels") != std::string::npos);
  CHECK(c.identity().find("quest derived") != std::string::npos);
  // No work, no time.
  CHECK(c.breakdown(decode_batch(0, 0)).decode_attention == 0);
  CHECK(c.breakdown(prompt(1000)).decode_attention == 0);
  CHECK(c.breakdown(decode_batch(4, 8192)).prefill_attention == 0);
  CHECK(c.breakdown(decode_batch(4, 8192)).andpro == 0);
  CHECK(c.breakdown(prompt(4000, 0, false)).andpro == 0);  // scored only when the prompt completes
  CHECK(c.breakdown(prompt(1000)).andpro == 0);            // nothing to evict below budget + window
}

TEST_CASE("derived pricing is monotone in every token count") {
  const CalibratedCostModel c = model(true);
  double prev = 0;
  for (std::int64_t ctx : {1, 100, 2046, 2047, 2048, 2049, 4096, 32768, 131072, 1 << 20}) {
    const double t = c.breakdown(decode_batch(1, ctx)).decode_attention;
    CHECK(t >= prev);
    prev = t;
  }
  prev = 0;
  for (std::int64_t n : {1, 2, 8, 64, 256}) {
    const double t = c.breakdown(decode_batch(n, 16384)).decode_attention;
    CHECK(t >= prev);
    prev = t;
  }
  prev = 0;
  for (std::int64_t n : {1000, 32767, 32768, 32769, 65536, 100000, 300000, 1000000}) {
    const double t = c.breakdown(prompt(n)).prefill_attention;
    CHECK(t >= prev);
    prev = t;
  }
  prev = 0;
  for (std::int64_t ctx : {0, 16384, 30000, 32768, 100000}) {  // a chunk behind a growing cached context
    const double t = c.breakdown(prompt(4096, ctx, false)).prefill_attention;
    CHECK(t >= prev);
    prev = t;
  }
  prev = 0;
  for (std::int64_t n : {2081, 2100, 4096, 32768, 131072}) {
    const double t = c.breakdown(prompt(n)).andpro;
    CHECK(t >= prev);
    prev = t;
  }
  CHECK(prev > 0);
}

TEST_CASE("derived Quest is dense decode below the budget plus metadata, and cheaper than dense at long context") {
  AttentionMethods quest;
  quest.decode = DecodeMethod::kQuest;
  const CalibratedCostModel q = model(true, quest), d = model(true, AttentionMethods{});
  const double short_q = q.breakdown(decode_batch(8, 1000)).decode_attention;
  const double short_d = d.breakdown(decode_batch(8, 1000)).decode_attention;
  // The metadata update is charged on every step: one small launch (the decode fit's floor).
  CHECK(short_q > short_d);
  CHECK(short_q - short_d < d.breakdown(decode_batch(8, 16)).decode_attention);
  CHECK(q.breakdown(decode_batch(1, 131072)).decode_attention < 0.5 * d.breakdown(decode_batch(1, 131072)).decode_attention);
}

TEST_CASE("derived MInference runs dense below min_length and beats dense at long prompts") {
  AttentionMethods minf;
  minf.prefill = PrefillMethod::kMInference;
  const CalibratedCostModel m = model(true, minf), d = model(true, AttentionMethods{});
  CHECK(m.breakdown(prompt(16384)).prefill_attention == doctest::Approx(d.breakdown(prompt(16384)).prefill_attention));
  CHECK(m.breakdown(prompt(262144)).prefill_attention < d.breakdown(prompt(262144)).prefill_attention);
  // Every pattern type of the search space prices.
  for (const char* p : {"vs_30_2048", "vs_3000_200", "bs_100", "ashape_1024_4096"}) {
    minf.minference.patterns = {{p, 1.0}};
    const double t = model(true, minf).breakdown(prompt(131072)).prefill_attention;
    CHECK(t > 0);
    CHECK(t < d.breakdown(prompt(131072)).prefill_attention);
  }
  minf.minference.patterns = {{"vs_1000_6096", 0.5}, {"bs_100", 0.5}};  // a pattern no bench measured: derived too
  CHECK(model(true, minf).breakdown(prompt(131072)).prefill_attention > 0);
}

TEST_CASE("with the families measured the measured path is used, and strict scaling keeps the error") {
  const CalibratedCostModel full = model(false);
  CHECK(notes_of(full).find("derived") == std::string::npos);
  const CalibratedCostModel derived = model(true);
  CHECK(full.breakdown(decode_batch(1, 32768)).decode_attention !=
        derived.breakdown(decode_batch(1, 32768)).decode_attention);
  CalibratedOptions strict;
  strict.allow_scaling = false;
  AttentionMethods quest;
  quest.decode = DecodeMethod::kQuest;
  CHECK_THROWS_WITH_AS(model(true, quest, strict), doctest::Contains("allow_scaling to derive Quest"), InputError);
  AttentionMethods minf;
  minf.prefill = PrefillMethod::kMInference;
  CHECK_THROWS_AS(model(true, minf, strict), InputError);
  AttentionMethods andpro;
  andpro.kv = KvMethod::kAndpro;
  CHECK_THROWS_AS(model(true, andpro, strict), InputError);
}

TEST_CASE("kMinfSparseEfficiency is the H100 profile's measured sparse/dense tile-rate ratio") {
  std::map<std::int64_t, double> dense;
  std::vector<const ProfilePoint*> sparse;
  const ProfileTable t = ProfileTable::load(kH100);
  for (const ProfilePoint& p : t.points()) {
    if (p.kernel == "minf_dense_prefill") dense[p.ctx] = p.median_us;
    if (p.kernel == "minf_attention" && p.params.find("data=structured") != std::string::npos) sparse.push_back(&p);
  }
  std::vector<double> e;
  for (const ProfilePoint* p : sparse) {
    auto it = dense.find(p->ctx);
    if (it == dense.end()) continue;
    const std::size_t at = p->params.find("tiles=") + 6;
    const double tiles = std::stod(p->params.substr(at, p->params.find(';', at) - at));
    const double nb = static_cast<double>(p->ctx) / 64;
    const double causal = nb * (nb + 1) / 2 * static_cast<double>(p->heads);
    e.push_back(it->second * tiles / causal / p->median_us);
  }
  REQUIRE(e.size() == 30);
  std::sort(e.begin(), e.end());
  const double median = (e[14] + e[15]) / 2;
  CHECK(median == doctest::Approx(kMinfSparseEfficiency).epsilon(0.005));
}

TEST_CASE("published sparse speedups: the checks run and print (H100 dense kernels, docs/costmodel.md)") {
  for (bool dense_only : {true, false}) {
    const auto checks = sparse_ratio_checks(h100(dense_only), HardwareSpec{});
    REQUIRE(checks.size() == 5);
    for (const auto& c : checks) {
      CHECK(c.ours > 1);
      CHECK(c.attention >= c.ours);
      // Derived pricing prices any pattern; our bench measured six others than the published run's.
      CHECK(c.like_for_like == (dense_only || c.method.starts_with("quest")));
    }
    const std::string title = dense_only ? "H100 dense-only (derived):\n" : "H100 full profile (measured families):\n";
    MESSAGE(title << format_sparse_ratio_checks(checks));
  }
}

TEST_CASE("H100: derived pricing against the measured families (printed, docs/sparse_kernels.md)") {
  const CalibratedCostModel measured = model(false), derived = model(true);
  std::string table = "| method | batch | measured us | derived us | derived / measured |\n|---|---|---:|---:|---:|\n";
  auto row = [&](const char* method, const std::string& what, const BatchShape& b, double CalibratedCostModel::Breakdown::*part) {
    const double m = measured.breakdown(b).*part, d = derived.breakdown(b).*part;
    table += fmt::format("| {} | {} | {:.0f} | {:.0f} | {:.2f} |\n", method, what, m, d, d / m);
    CHECK(d > 0);
    CHECK(m > 0);
  };
  using B = CalibratedCostModel::Breakdown;
  for (std::int64_t ctx : {8192, 32768, 131072}) row("quest", fmt::format("decode 1 x ctx {}", ctx), decode_batch(1, ctx), &B::decode_attention);
  row("quest", "decode 16 x ctx 32768", decode_batch(16, 32768), &B::decode_attention);
  for (std::int64_t n : {65536, 131072, 262144}) row("minference", fmt::format("prefill {}", n), prompt(n), &B::prefill_attention);
  for (std::int64_t n : {8192, 32768, 131072}) row("andpro", fmt::format("prompt {} completes", n), prompt(n), &B::andpro);
  MESSAGE("Llama-3-8B, all 32 layers, H100 profile (defaults: Quest budget 2048, MInference vs_500_1500, AnDPro "
          "budget 2048 w32):\n"
          << table);
}

TEST_CASE("A100 public profiles (dense kernels only): the published-ratio check (docs/sparse_kernels.md)") {
  HardwareSpec a100;  // configs/hardware/a100-80gb.yaml (only the copy-bandwidth fallback reads it)
  a100.name = "A100-80GB";
  a100.mem_bandwidth_gbps = 2039;
  a100.bf16_tflops = 312;
  a100.tp_allreduce_gbps = 300;
  // The check (the published runs' configurations), then the registry defaults and
  // MInference's per-head fallback ("vertical_and_slash", 1000, 6096) on every head,
  // as sensitivity rows.
  AttentionMethods fallback_pattern;
  fallback_pattern.minference.patterns = {{"vs_1000_6096", 1.0}};
  for (const char* stack : {"vllm-0.14", "vidur-2024"}) {
    const std::string path = fmt::format("{}/costmodel/profiles/a100-80gb/{}/profile.csv", SERVESIM_SOURCE_DIR, stack);
    const auto fits = std::make_shared<KernelFits>(KernelFits::fit(ProfileTable::load(path)));
    const auto checks = sparse_ratio_checks(fits, a100);
    REQUIRE(checks.size() == 5);
    for (const auto& c : checks) CHECK((c.ours > 1 && c.like_for_like));
    CHECK(checks[0].method.find("vs_1000_6096:0.4619") != std::string::npos);  // 473 of 1,024 heads
    auto defaults = sparse_ratio_checks(fits, a100, {}, AttentionMethods{});
    auto like = sparse_ratio_checks(fits, a100, {}, fallback_pattern);
    like.pop_back();  // Quest: the same row
    defaults.pop_back();
    MESSAGE("A100 " << std::string(stack) << " (derived):\n"
                    << format_sparse_ratio_checks(checks) << format_sparse_ratio_checks(defaults)
                    << format_sparse_ratio_checks(like));
    const CalibratedCostModel c(fits, llama8b(), a100, all_sparse(), {});
    CHECK(c.identity().find("minference derived") != std::string::npos);
  }
}
