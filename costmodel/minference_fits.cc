// MInference's fits; see minference_fits.h.
#include "costmodel/minference_fits.h"

#include <fmt/format.h>

#include "costmodel/fit_rows.h"
#include "costmodel/kernel_fits.h"

namespace servesim {
namespace {

// Width of the causal band that best matches the measured tiles per head (relative
// least squares; a scan over log-spaced widths, then golden-section refinement).
void fit_band(const std::map<std::int64_t, double>& tiles, MinfFits& m) {
  std::vector<double> ns, ys;
  for (const auto& [n, t] : tiles)
    if (t > 0) {
      ns.push_back(static_cast<double>(n));
      ys.push_back(t);
    }
  if (ns.empty()) return;
  auto err = [&](double logw) {
    double e = 0;
    for (std::size_t i = 0; i < ns.size(); ++i) {
      const double r = minf_band_tiles(ns[i], std::exp(logw)) / ys[i] - 1;
      e += r * r;
    }
    return e;
  };
  const double hi = std::log(ns.back() / 64.0 + 1);
  double best = 0, best_e = err(0);
  for (int i = 1; i <= 400; ++i) {
    const double x = hi * i / 400.0;
    if (const double e = err(x); e < best_e) best = x, best_e = e;
  }
  double a = std::max(0.0, best - hi / 400), b = std::min(hi, best + hi / 400);
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 60; ++it) {
    const double c = b - g * (b - a), d = a + g * (b - a);
    if (err(c) < err(d)) b = d;
    else a = c;
  }
  m.band_width = std::exp((a + b) / 2);
  std::vector<double> pred;
  for (double n : ns) pred.push_back(minf_band_tiles(n, m.band_width));
  m.area_residuals = relative_error(pred, ys);
}

class MinferenceFitter final : public MethodFitter {
 public:
  void add(const ProfilePoint& p, const std::string& file) override {
    const HeadShape h = row_head_shape(file, p);
    const std::string key = minf_key(p);
    shape_[key] = h;
    const auto n = static_cast<double>(need_column(file, p, p.ctx, "ctx"));
    const double tiles = p.param_number("tiles", -1, file);
    if (tiles < 0) row_error(file, p, "needs 'tiles=' in params (the visited area)");
    area_[key][p.ctx] = tiles / static_cast<double>(h.heads);
    const MinfPatternInfo info = minf_pattern_info(p.variant);
    if (p.kernel == "minf_attention") att_.add(minf_attention_features(h, n, tiles), p.median_us);
    if (p.kernel == "minf_estimate") est_.add(minf_estimate_features(h, n, info), p.median_us);
    if (p.kernel == "minf_index") idx_.add(minf_index_features(h, n, info), p.median_us);
  }

  std::shared_ptr<const MethodFits> finish(const std::string&, std::vector<std::string>& problems) override {
    auto out = std::make_shared<MinferenceMethodFits>();
    const FeatureFit est = fit_or_note(kMinfEstimateNames, est_, "minference estimate", problems);
    const FeatureFit idx = fit_or_note(kMinfIndexNames, idx_, "minference index", problems);
    const FeatureFit att = fit_or_note(kMinfAttentionNames, att_, "minference attention", problems);
    for (const auto& [key, tiles] : area_) {
      MinfFits m;
      m.shape = shape_[key];
      m.info = minf_pattern_info(key.substr(0, key.find('/')));
      fit_band(tiles, m);
      if (m.info.type != "ashape") {  // a static pattern has nothing to estimate
        m.estimate = est;
        m.index = idx;
      }
      m.attention = att;
      out->patterns[key] = std::move(m);
    }
    return out;
  }

 private:
  std::map<std::string, HeadShape> shape_;
  Samples est_, idx_, att_;
  std::map<std::string, std::map<std::int64_t, double>> area_;  // key → n → tiles per head
};

}  // namespace

std::string minf_key(const ProfilePoint& p) { return p.variant + "/" + p.param("data").value_or("structured"); }

std::optional<double> MinferenceMethodFits::predict(const ProfilePoint& p, const KernelFits& all) const {
  const std::string& fam = p.kernel;
  if (fam == "minf_dense_prefill") return all.predict_prefill(p, "fa2");  // the mma.sync baseline, by fa2's fit
  auto it = patterns.find(minf_key(p));
  if (it == patterns.end()) return std::nullopt;
  auto have = [](const FeatureFit& fit) { return !fit.empty(); };
  const MinfFits& m = it->second;
  const HeadShape h = row_head_shape(all.file(), p);
  const auto n = static_cast<double>(p.ctx);
  if (fam == "minf_estimate") return have(m.estimate) ? std::optional(m.estimate.predict(minf_estimate_features(h, n, m.info))) : std::nullopt;
  if (fam == "minf_index") return have(m.index) ? std::optional(m.index.predict(minf_index_features(h, n, m.info))) : std::nullopt;
  if (!have(m.attention) || m.band_width <= 0) return std::nullopt;
  // The simulator's path: the visited area comes from the band fit, not the row.
  const double tiles = minf_band_tiles(n, m.band_width) * static_cast<double>(h.heads);
  double t = m.attention.predict(minf_attention_features(h, n, tiles));
  if (fam == "minf_attention") return t;
  if (have(m.estimate) != have(m.index)) return std::nullopt;  // minf_e2e
  if (have(m.estimate)) t += m.estimate.predict(minf_estimate_features(h, n, m.info)) + m.index.predict(minf_index_features(h, n, m.info));
  return t;
}

void MinferenceMethodFits::summarize(std::vector<FitSummaryRow>& out) const {
  auto add = [&](const std::string& fam, const std::string& key, const FeatureFit& fit) {
    if (!fit.empty()) out.push_back({fam, key, fit.describe(), fit.residuals()});
  };
  for (const auto& [k, m] : patterns)
    if (m.band_width > 0)
      out.push_back({"minf_area", k, fmt::format("band width {:.2f} tiles per row block", m.band_width),
                     m.area_residuals});
  for (const auto& [k, m] : patterns)
    if (!m.estimate.empty()) {
      add("minf_estimate", "all patterns", m.estimate);
      add("minf_index", "all patterns", m.index);
      break;
    }
  if (!patterns.empty()) add("minf_attention", "all patterns", patterns.begin()->second.attention);
}

const MinferenceMethodFits& minference_fits(const KernelFits& fits) {
  static const MinferenceMethodFits none;
  const auto* m = fits.method_fits<MinferenceMethodFits>("minference");
  return m ? *m : none;
}

MethodFitting minference_fitting() {
  MethodFitting m;
  m.fitted = {"minf_estimate", "minf_index", "minf_attention"};
  m.composite = {"minf_e2e", "minf_dense_prefill"};
  m.make_fitter = [] { return std::make_unique<MinferenceFitter>(); };
  return m;
}

}  // namespace servesim
