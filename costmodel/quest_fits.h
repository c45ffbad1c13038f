// Quest's fitting side (method_fits.h; its registry entry is quest_method() in
// quest_pricer.cc): the features its kernels are modelled against, its fits
// and their prediction of a profile row.
//
// Kernels: quest_metadata (variant decode_step: the per-step min/max update),
// quest_estimate, quest_topk, quest_decode (per variant kvhead | qhead),
// fitted; quest_e2e (estimate + top-k + decode) and quest_dense_decode (the
// dense baseline, priced by the shared decode fit) predicted only.
// Fit forms (per layer and GPU, µs):
//   metadata  t0 + a·seqs
//   estimate  t0 + bounds bytes / BW
//   top-k     t0 + a·scores + b·selected
//   decode    t0 + a·seqs + selected KV bytes / BW
// One fit per (variant, head shape) and part; a shape with few rows takes the
// form of the variant's best-measured shape (fit_head_shapes); the metadata
// update per head shape, shared by the variants (a shape without metadata rows
// takes the nearest shape's). Variant qhead selects per query head: its top-k
// and decode features count query heads.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/kernel_features.h"
#include "costmodel/method_fits.h"

namespace servesim {

inline constexpr std::int64_t kQuestPageSize = 16;
inline std::int64_t quest_pages(std::int64_t tokens) { return (tokens + kQuestPageSize - 1) / kQuestPageSize; }

// ---- Quest (per KV head selection) ----
struct QuestWork {
  double seqs = 0;
  double pages = 0;           // Σ pages of the contexts
  double selected_pages = 0;  // Σ min(budget pages, pages)
  double budget_pages = 0;    // ceil(budget / 16)
  void add(double ctx_tokens, std::int64_t budget) {
    const auto p = static_cast<double>(quest_pages(static_cast<std::int64_t>(ctx_tokens)));
    budget_pages = static_cast<double>(quest_pages(budget));
    seqs += 1;
    pages += p;
    selected_pages += std::min(p, budget_pages);
  }
};
inline const std::vector<std::string> kQuestMetadataNames = {"1", "seqs"};
inline std::array<double, 2> quest_metadata_features(const HeadShape&, const QuestWork& w) { return {1.0, w.seqs}; }
inline const std::vector<std::string> kQuestEstimateNames = {"1", "bound_bytes"};
inline std::array<double, 2> quest_estimate_features(const HeadShape& h, const QuestWork& w) {
  return {1.0, w.pages * 4.0 * static_cast<double>(h.kv_heads * h.head_dim)};  // min and max vectors, bf16
}
inline const std::vector<std::string> kQuestTopkNames = {"1", "scores", "selected"};
inline std::array<double, 3> quest_topk_features(const HeadShape& h, const QuestWork& w) {
  const auto g = static_cast<double>(h.kv_heads);
  return {1.0, w.pages * g, w.seqs * w.budget_pages * g};
}
inline const std::vector<std::string> kQuestDecodeNames = {"1", "seqs", "selected_kv_bytes"};
inline std::array<double, 3> quest_decode_features(const HeadShape& h, const QuestWork& w) {
  return {1.0, w.seqs, w.selected_pages * kQuestPageSize * h.kv_token_bytes()};
}

struct QuestFits {
  HeadShape shape;  // head shape the rows were measured at
  FeatureFit metadata, estimate, topk, decode;
};

class QuestMethodFits final : public MethodFits {
 public:
  // By variant (kvhead, qhead), then by the head shape the rows were measured at.
  std::map<std::string, std::map<HeadShape, QuestFits>> variants;

  std::optional<double> predict(const ProfilePoint& p, const KernelFits& all) const override;
  void summarize(std::vector<FitSummaryRow>& out) const override;
};

// The Quest fits of a profile (empty when it has no quest rows).
const QuestMethodFits& quest_fits(const KernelFits& fits);

// The registry entry's fitting part.
MethodFitting quest_fitting();

}  // namespace servesim
