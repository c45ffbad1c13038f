// Published sparse-method speedups against ours; see sparse_ratio_checks.h.
#include "costmodel/sparse_ratio_checks.h"

#include <cmath>

#include <fmt/format.h>

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
};

Ratio ratio(const CalibratedCostModel& dense, const CalibratedCostModel& sparse, const BatchShape& b) {
  const auto d = dense.breakdown(b), s = sparse.breakdown(b);
  const double d_attn = d.prefill_attention + d.decode_attention + d.andpro;
  const double s_attn = s.prefill_attention + s.decode_attention + s.andpro;
  return {d.total() / s.total(), d_attn / s_attn};
}

// The part of AttentionMethods::describe() that names `phase` ("prefill", "decode").
std::string method_of(const AttentionMethods& a, const std::string& phase) {
  const std::string all = a.describe();
  const std::size_t at = all.find(phase + "=") + phase.size() + 1;
  const std::size_t end = all.find(") ", at);
  return all.substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
}

}  // namespace

std::vector<SparseRatioCheck> sparse_ratio_checks(std::shared_ptr<const KernelFits> fits, const HardwareSpec& hw,
                                                  const CalibratedOptions& opt, const AttentionMethods& params) {
  std::vector<SparseRatioCheck> out;
  {
    AttentionMethods minf = params;
    minf.decode = DecodeMethod::kDense;
    minf.kv = KvMethod::kNone;
    minf.prefill = PrefillMethod::kMInference;
    const CalibratedCostModel dense(fits, llama3_8b(), hw, AttentionMethods{}, opt);
    const CalibratedCostModel sparse(fits, llama3_8b(), hw, minf, opt);
    const std::pair<std::int64_t, double> points[] = {{100'000, 1.78}, {300'000, 4.13}, {500'000, 6.89},
                                                      {1'000'000, 9.86}};
    for (const auto& [tokens, published] : points) {
      BatchShape b;
      b.prefills.push_back({tokens, 0, true});
      const Ratio r = ratio(dense, sparse, b);
      out.push_back({method_of(minf, "prefill"), fmt::format("prefill {}K tokens", tokens / 1000), "Llama-3-8B", r.total, r.attention,
                     published, "microsoft/MInference README (A100, vs FlashAttention-2)"});
    }
  }
  {
    AttentionMethods quest = params;
    quest.prefill = PrefillMethod::kDense;
    quest.kv = KvMethod::kNone;
    quest.decode = DecodeMethod::kQuest;
    const CalibratedCostModel dense(fits, llama2_7b(), hw, AttentionMethods{}, opt);
    const CalibratedCostModel sparse(fits, llama2_7b(), hw, quest, opt);
    BatchShape b;
    b.decode_contexts = {32768};
    const Ratio r = ratio(dense, sparse, b);
    out.push_back({method_of(quest, "decode"), "decode ctx 32768 batch 1", "Llama-2-7B",
                   r.total, r.attention, 1.74, "Quest paper Fig. 10 (FP16)"});
  }
  return out;
}

std::string format_sparse_ratio_checks(const std::vector<SparseRatioCheck>& checks) {
  std::string s = "| method | point | model | ours (end to end) | ours (attention only) | published | error |\n"
                  "|---|---|---|---:|---:|---:|---:|\n";
  for (const SparseRatioCheck& c : checks)
    s += fmt::format("| {} | {} | {} | {:.2f}x | {:.2f}x | {:.2f}x | {:+.0f}% |\n", c.method, c.point, c.model, c.ours,
                     c.attention, c.published, 100 * c.error());
  return s;
}

}  // namespace servesim
