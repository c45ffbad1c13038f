// AnDPro's fits; see andpro_fits.h.
#include "costmodel/andpro_fits.h"

#include <fmt/format.h>

#include "costmodel/attention_method.h"
#include "costmodel/fit_rows.h"
#include "costmodel/kernel_fits.h"

namespace servesim {
namespace {

std::int64_t andpro_window(const std::string& file, const ProfilePoint& p) {
  const double w = p.param_number("window", -1, file);
  if (w < 1) row_error(file, p, "needs 'window=' in params");
  return static_cast<std::int64_t>(w);
}

// Kept tokens per KV head of a row: the ragged compaction's rows (layer_topk,
// worst-case rounding) or the equal split's.
double andpro_kept(const std::string& file, const ProfilePoint& p, bool layer_topk = false) {
  AndproParams a;
  a.layer_topk = layer_topk;
  a.budget = need_column(file, p, p.budget, "budget");
  a.window = andpro_window(file, p);
  a.block = static_cast<std::int64_t>(p.param_number("block", 16, file));
  return static_cast<double>(a.kept_tokens(need_column(file, p, p.ctx, "ctx")));
}

class AndproFitter final : public MethodFitter {
 public:
  void add(const ProfilePoint& p, const std::string& file) override {
    const HeadShape h = row_head_shape(file, p);
    const std::int64_t w = andpro_window(file, p);
    AndproFits& meta = meta_[w];
    meta.shape = h;
    meta.budget = need_column(file, p, p.budget, "budget");
    meta.block = static_cast<std::int64_t>(p.param_number("block", 16, file));
    const auto n = static_cast<double>(need_column(file, p, p.ctx, "ctx"));
    Samples& s = parts_[w][p.kernel];
    if (p.kernel == "andpro_compact") s.add(andpro_compact_features(h, andpro_kept(file, p)), p.median_us);
    else if (p.kernel == "andpro_compact_ragged") s.add(andpro_compact_features(h, andpro_kept(file, p, true)), p.median_us);
    else s.add(andpro_scan_features(h, n, static_cast<double>(w)), p.median_us);
  }

  std::shared_ptr<const MethodFits> finish(const std::string&, std::vector<std::string>& problems) override {
    auto out = std::make_shared<AndproMethodFits>();
    for (auto& [w, parts] : parts_) {
      AndproFits a = meta_[w];
      const std::string what = fmt::format("andpro/w{} ", w);
      a.score = fit_or_note(kAndproScanNames, parts["andpro_score"], what + "score", problems);
      a.select = fit_or_note(kAndproScanNames, parts["andpro_select"], what + "select", problems);
      a.compact = fit_or_note(kAndproCompactNames, parts["andpro_compact"], what + "compact", problems);
      if (parts.contains("andpro_select_layer"))
        a.select_layer = fit_or_note(kAndproScanNames, parts["andpro_select_layer"], what + "select_layer", problems);
      if (parts.contains("andpro_compact_ragged"))
        a.compact_ragged = fit_or_note(kAndproCompactNames, parts["andpro_compact_ragged"], what + "compact_ragged", problems);
      out->windows[w] = std::move(a);
    }
    return out;
  }

 private:
  std::map<std::int64_t, std::map<std::string, Samples>> parts_;  // window → kernel → samples
  std::map<std::int64_t, AndproFits> meta_;
};

}  // namespace

std::optional<double> AndproMethodFits::predict(const ProfilePoint& p, const KernelFits& all) const {
  const std::string& fam = p.kernel;
  const std::string& file = all.file();
  if (fam == "andpro_dense_prefill") return all.predict_prefill(p, "fa2");  // the mma.sync baseline, by fa2's fit
  auto it = windows.find(andpro_window(file, p));
  if (it == windows.end()) return std::nullopt;
  auto have = [](const FeatureFit& fit) { return !fit.empty(); };
  const AndproFits& a = it->second;
  const HeadShape h = row_head_shape(file, p);
  const auto n = static_cast<double>(p.ctx);
  const auto w = static_cast<double>(it->first);
  if (fam == "andpro_score") return have(a.score) ? std::optional(a.score.predict(andpro_scan_features(h, n, w))) : std::nullopt;
  if (fam == "andpro_select") return have(a.select) ? std::optional(a.select.predict(andpro_scan_features(h, n, w))) : std::nullopt;
  if (fam == "andpro_compact") return have(a.compact) ? std::optional(a.compact.predict(andpro_compact_features(h, andpro_kept(file, p)))) : std::nullopt;
  if (fam == "andpro_select_layer") return have(a.select_layer) ? std::optional(a.select_layer.predict(andpro_scan_features(h, n, w))) : std::nullopt;
  if (fam == "andpro_compact_ragged") return have(a.compact_ragged) ? std::optional(a.compact_ragged.predict(andpro_compact_features(h, andpro_kept(file, p, true)))) : std::nullopt;
  if (!have(a.score) || !have(a.select) || !have(a.compact)) return std::nullopt;  // andpro_e2e
  return a.score.predict(andpro_scan_features(h, n, w)) + a.select.predict(andpro_scan_features(h, n, w)) +
         a.compact.predict(andpro_compact_features(h, andpro_kept(file, p)));
}

void AndproMethodFits::summarize(std::vector<FitSummaryRow>& out) const {
  auto add = [&](const std::string& fam, const std::string& key, const FeatureFit& fit) {
    if (!fit.empty()) out.push_back({fam, key, fit.describe(), fit.residuals()});
  };
  for (const auto& [w, a] : windows) {
    const std::string key = fmt::format("w{}", w);
    add("andpro_score", key, a.score);
    add("andpro_select", key, a.select);
    add("andpro_compact", key, a.compact);
    if (!a.select_layer.empty()) add("andpro_select_layer", key, a.select_layer);
    if (!a.compact_ragged.empty()) add("andpro_compact_ragged", key, a.compact_ragged);
  }
}

const AndproMethodFits& andpro_fits(const KernelFits& fits) {
  static const AndproMethodFits none;
  const auto* a = fits.method_fits<AndproMethodFits>("andpro");
  return a ? *a : none;
}

MethodFitting andpro_fitting() {
  MethodFitting m;
  m.fitted = {"andpro_score", "andpro_select", "andpro_compact", "andpro_select_layer", "andpro_compact_ragged"};
  m.composite = {"andpro_e2e", "andpro_dense_prefill"};
  m.make_fitter = [] { return std::make_unique<AndproFitter>(); };
  return m;
}

}  // namespace servesim
