// Quest's fits; see quest_fits.h.
#include "costmodel/quest_fits.h"

#include <set>

#include <fmt/format.h>

#include "costmodel/fit_rows.h"
#include "costmodel/kernel_fits.h"

namespace servesim {
namespace {

QuestWork quest_work(const std::string& file, const ProfilePoint& p) {
  QuestWork w;
  const auto ctx = static_cast<double>(need_column(file, p, p.ctx, "ctx"));
  for (std::int64_t i = 0; i < need_column(file, p, p.batch, "batch"); ++i)
    w.add(ctx, std::max<std::int64_t>(p.budget, 0));
  return w;
}

// The heads a variant selects and decodes for: qhead per query head (heads
// rows), the others per KV head.
HeadShape quest_rows_shape(const std::string& variant, const HeadShape& h) {
  return variant == "qhead" ? HeadShape{h.heads, h.heads, h.head_dim} : h;
}

class QuestFitter final : public MethodFitter {
 public:
  void add(const ProfilePoint& p, const std::string& file) override {
    const HeadShape h = row_head_shape(file, p);
    const QuestWork w = quest_work(file, p);
    if (p.kernel == "quest_metadata") {
      meta_[h].add(quest_metadata_features(h, w), p.median_us);
      return;
    }
    Samples& s = parts_[p.variant][h][p.kernel];
    if (p.kernel == "quest_estimate") s.add(quest_estimate_features(h, w), p.median_us);
    if (p.kernel == "quest_topk") s.add(quest_topk_features(quest_rows_shape(p.variant, h), w), p.median_us);
    if (p.kernel == "quest_decode") s.add(quest_decode_features(quest_rows_shape(p.variant, h), w), p.median_us);
  }

  std::shared_ptr<const MethodFits> finish(const std::string&, std::vector<std::string>& problems) override {
    auto out = std::make_shared<QuestMethodFits>();
    std::map<HeadShape, FeatureFit> meta;
    fit_head_shapes(kQuestMetadataNames, meta_, "quest metadata", meta, problems);
    for (auto& [variant, shapes] : parts_) {
      const std::pair<const char*, const std::vector<std::string>*> parts[3] = {
          {"quest_estimate", &kQuestEstimateNames}, {"quest_topk", &kQuestTopkNames}, {"quest_decode", &kQuestDecodeNames}};
      std::map<HeadShape, FeatureFit> fitted[3];
      for (int i = 0; i < 3; ++i) {
        std::map<HeadShape, Samples> by_shape;
        for (auto& [h, part_samples] : shapes)
          if (auto it = part_samples.find(parts[i].first); it != part_samples.end()) by_shape[h] = it->second;
        fit_head_shapes(*parts[i].second, by_shape, fmt::format("quest/{} {}", variant, parts[i].first + 6).c_str(),
                        fitted[i], problems);
      }
      for (const auto& [h, part_samples] : shapes) {
        QuestFits q;
        q.shape = h;
        if (const auto* m = nearest_head_shape(meta, h)) q.metadata = m->second;
        FeatureFit* slots[3] = {&q.estimate, &q.topk, &q.decode};
        for (int i = 0; i < 3; ++i)
          if (auto it = fitted[i].find(h); it != fitted[i].end()) *slots[i] = it->second;
        out->variants[variant][h] = std::move(q);
      }
    }
    return out;
  }

 private:
  std::map<HeadShape, Samples> meta_;
  std::map<std::string, std::map<HeadShape, std::map<std::string, Samples>>> parts_;  // variant → shape → part
};

}  // namespace

std::optional<double> QuestMethodFits::predict(const ProfilePoint& p, const KernelFits& all) const {
  const std::string& fam = p.kernel;
  const std::string& file = all.file();
  if (fam == "quest_dense_decode") return all.predict_decode(p);
  auto have = [](const FeatureFit& fit) { return !fit.empty(); };
  const HeadShape h = row_head_shape(file, p);
  if (fam == "quest_metadata") {
    for (const auto& [variant, shapes] : variants)  // the metadata fit is shared by the variants
      if (auto it = shapes.find(h); it != shapes.end() && have(it->second.metadata))
        return it->second.metadata.predict(quest_metadata_features(h, quest_work(file, p)));
    return std::nullopt;
  }
  auto v = variants.find(p.variant);
  if (v == variants.end()) return std::nullopt;
  auto it = v->second.find(h);
  if (it == v->second.end()) return std::nullopt;
  const QuestFits& q = it->second;
  const QuestWork w = quest_work(file, p);
  const HeadShape r = quest_rows_shape(p.variant, h);
  if (fam == "quest_estimate") return have(q.estimate) ? std::optional(q.estimate.predict(quest_estimate_features(h, w))) : std::nullopt;
  if (fam == "quest_topk") return have(q.topk) ? std::optional(q.topk.predict(quest_topk_features(r, w))) : std::nullopt;
  if (fam == "quest_decode") return have(q.decode) ? std::optional(q.decode.predict(quest_decode_features(r, w))) : std::nullopt;
  if (!have(q.estimate) || !have(q.topk) || !have(q.decode)) return std::nullopt;  // quest_e2e
  return q.estimate.predict(quest_estimate_features(h, w)) + q.topk.predict(quest_topk_features(r, w)) +
         q.decode.predict(quest_decode_features(r, w));
}

void QuestMethodFits::summarize(std::vector<FitSummaryRow>& out) const {
  auto add = [&](const std::string& fam, const std::string& key, const FeatureFit& fit) {
    if (!fit.empty()) out.push_back({fam, key, fit.describe(), fit.residuals()});
  };
  std::set<HeadShape> meta_listed;
  for (const auto& [v, shapes] : variants)
    for (const auto& [h, q] : shapes)
      if (meta_listed.insert(h).second) add("quest_metadata", h.label() + " (all variants)", q.metadata);
  for (const auto& [v, shapes] : variants)
    for (const auto& [h, q] : shapes) {
      const std::string key = v + " " + h.label();
      add("quest_estimate", key, q.estimate);
      add("quest_topk", key, q.topk);
      add("quest_decode", key, q.decode);
    }
}

const QuestMethodFits& quest_fits(const KernelFits& fits) {
  static const QuestMethodFits none;
  const auto* q = fits.method_fits<QuestMethodFits>("quest");
  return q ? *q : none;
}

MethodFitting quest_fitting() {
  MethodFitting m;
  m.fitted = {"quest_metadata", "quest_estimate", "quest_topk", "quest_decode"};
  m.composite = {"quest_e2e", "quest_dense_decode"};
  m.make_fitter = [] { return std::make_unique<QuestFitter>(); };
  return m;
}

}  // namespace servesim
