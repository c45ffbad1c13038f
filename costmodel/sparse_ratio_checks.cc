// Published sparse-method speedups against ours; see sparse_ratio_checks.h.
#include "costmodel/sparse_ratio_checks.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {
namespace {

// configs/models/llama-3-8b.yaml and llama-2-7b.yaml (ModelSpec's defaults are Llama-3-8B's).
ModelSpec llama3_8b() {
  ModelSpec m;
  m.name = "Llama-3-8B";
  return m;
}

ModelSpec llama2_7b() {
  ModelSpec m;
  m.name = "Llama-2-7B";
  m.kv_heads = 32;
  m.intermediate = 11008;
  m.vocab = 32000;
  return m;
}

struct Ratio {
  double total = 0, attention = 0;
  double dense_us = 0, sparse_us = 0;  // end to end
};

Ratio ratio(const CalibratedCostModel& dense, const CalibratedCostModel& sparse, const BatchShape& b) {
  const auto d = dense.breakdown(b), s = sparse.breakdown(b);
  const double d_attn = d.prefill_attention + d.decode_attention + d.andpro;
  const double s_attn = s.prefill_attention + s.decode_attention + s.andpro;
  return {d.total() / s.total(), d_attn / s_attn, d.total(), s.total()};
}

// The part of AttentionMethods::describe() that names `phase` ("prefill", "decode").
std::string method_of(const AttentionMethods& a, const std::string& phase) {
  const std::string all = a.describe();
  const std::size_t at = all.find(phase + "=") + phase.size() + 1;
  const std::size_t end = all.find(") ", at);
  return all.substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
}

}  // namespace

std::vector<std::pair<std::string, double>> published_minference_patterns() {
  constexpr double kHeads = 32 * 32;  // layers x heads of LLaMA-3-8B
  return {{"vs_1000_6096", 473 / kHeads},
          {"vs_30_800", 278 / kHeads},
          {"vs_100_800", 153 / kHeads},
          {"vs_3500_100", 89 / kHeads},
          {"vs_500_700", 31 / kHeads}};
}

std::vector<SparseRatioCheck> sparse_ratio_checks(std::shared_ptr<const KernelFits> fits, const HardwareSpec& hw,
                                                  const CalibratedOptions& opt,
                                                  const std::optional<AttentionMethods>& params) {
  std::vector<SparseRatioCheck> out;
  AttentionMethods published_config;
  published_config.minference.patterns = published_minference_patterns();
  {
    AttentionMethods minf = params.value_or(published_config);
    minf.decode = DecodeMethod::kDense;
    minf.kv = KvMethod::kNone;
    minf.prefill = PrefillMethod::kMInference;
    const CalibratedCostModel dense(fits, llama3_8b(), hw, AttentionMethods{}, opt);
    bool like_for_like = true;
    std::unique_ptr<CalibratedCostModel> priced;
    try {
      priced = std::make_unique<CalibratedCostModel>(fits, llama3_8b(), hw, minf, opt);
    } catch (const InputError&) {
      if (params) throw;  // a caller's own configuration: its error is the answer
      // Measured minf_attention rows that lack the published patterns: the registry default.
      minf.minference = AttentionMethods{}.minference;
      priced = std::make_unique<CalibratedCostModel>(fits, llama3_8b(), hw, minf, opt);
      like_for_like = false;
    }
    const CalibratedCostModel& sparse = *priced;
    const std::pair<std::int64_t, double> points[] = {{100'000, 1.78}, {300'000, 4.13}, {500'000, 6.89},
                                                      {1'000'000, 9.86}};
    for (const auto& [tokens, published] : points) {
      BatchShape b;
      b.prefills.push_back({tokens, 0, true});
      const Ratio r = ratio(dense, sparse, b);
      out.push_back({method_of(minf, "prefill"), fmt::format("prefill {}K tokens", tokens / 1000), "Llama-3-8B", r.total, r.attention,
                     published, "microsoft/MInference README (A100, vs FlashAttention-2)", like_for_like,
                     r.dense_us, r.sparse_us});
    }
  }
  {
    AttentionMethods quest = params.value_or(published_config);
    quest.prefill = PrefillMethod::kDense;
    quest.kv = KvMethod::kNone;
    quest.decode = DecodeMethod::kQuest;
    const CalibratedCostModel dense(fits, llama2_7b(), hw, AttentionMethods{}, opt);
    const CalibratedCostModel sparse(fits, llama2_7b(), hw, quest, opt);
    BatchShape b;
    b.decode_contexts = {32768};
    const Ratio r = ratio(dense, sparse, b);
    out.push_back({method_of(quest, "decode"), "decode ctx 32768 batch 1", "Llama-2-7B",
                   r.total, r.attention, 1.74, "Quest paper Fig. 10 (FP16)", true, r.dense_us, r.sparse_us});
  }
  return out;
}

std::string format_sparse_ratio_checks(const std::vector<SparseRatioCheck>& checks) {
  std::string s = "| method | point | model | dense / sparse (ours, s) | ours (end to end) | ours (attention only) | "
                  "published | error |\n|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const SparseRatioCheck& c : checks)
    s += fmt::format("| {}{} | {} | {} | {:.4g} / {:.4g} | {:.2f}x | {:.2f}x | {:.2f}x | {:+.0f}% |\n", c.method,
                     c.like_for_like ? "" : " (not the published configuration)", c.point, c.model, c.dense_us / 1e6,
                     c.sparse_us / 1e6, c.ours, c.attention, c.published, 100 * c.error());
  return s;
}

}  // namespace servesim
