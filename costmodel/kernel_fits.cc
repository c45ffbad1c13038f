// Fitting every family of a profile; see kernel_fits.h and kernel_features.h.
#include "costmodel/kernel_fits.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "costmodel/attention_method.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

struct Samples {
  std::vector<std::vector<double>> x;
  std::vector<double> t;
  template <std::size_t N>
  void add(const std::array<double, N>& f, double time) {
    x.emplace_back(f.begin(), f.end());
    t.push_back(time);
  }
};

[[noreturn]] void row_error(const std::string& file, const ProfilePoint& p, const std::string& msg) {
  throw InputError(located(file, p.line, fmt::format("{}/{}: {}", p.kernel, p.variant, msg)));
}

HeadShape shape_of(const std::string& file, const ProfilePoint& p) {
  if (p.heads < 1 || p.kv_heads < 1 || p.head_dim < 1) row_error(file, p, "needs heads, kv_heads and head_dim");
  return HeadShape{p.heads, p.kv_heads, p.head_dim};
}

std::int64_t need(const std::string& file, const ProfilePoint& p, std::int64_t v, const char* column) {
  if (v < 1) row_error(file, p, fmt::format("needs column '{}' >= 1", column));
  return v;
}

DecodeWork decode_work(const std::string& file, const ProfilePoint& p) {
  const double b = static_cast<double>(need(file, p, p.batch, "batch"));
  const double sum = p.param_number("ctx_sum", b * static_cast<double>(need(file, p, p.ctx, "ctx")), file);
  return DecodeWork{b, sum};
}

PrefillWork prefill_work(const std::string& file, const ProfilePoint& p, const HeadShape& h) {
  const double b = static_cast<double>(need(file, p, p.batch, "batch"));
  const double q = static_cast<double>(need(file, p, p.q_len, "q_len"));
  const double ctx = static_cast<double>(need(file, p, p.ctx, "ctx"));
  PrefillWork w;
  w.add(q, ctx - q);
  w.rows *= b;
  w.kv_tokens *= b;
  w.visible *= b;
  w.rows = p.param_number("q_sum", w.rows, file);
  w.kv_tokens = p.param_number("ctx_sum", w.kv_tokens, file);
  // The bench's flops column is the exact causal work of ragged batches too.
  if (p.flops > 0) w.visible = p.flops / (4.0 * static_cast<double>(h.head_dim * h.heads));
  return w;
}

QuestWork quest_work(const std::string& file, const ProfilePoint& p) {
  QuestWork w;
  const auto ctx = static_cast<double>(need(file, p, p.ctx, "ctx"));
  for (std::int64_t i = 0; i < need(file, p, p.batch, "batch"); ++i) w.add(ctx, std::max<std::int64_t>(p.budget, 0));
  return w;
}

std::int64_t andpro_window(const std::string& file, const ProfilePoint& p) {
  const double w = p.param_number("window", -1, file);
  if (w < 1) row_error(file, p, "needs 'window=' in params");
  return static_cast<std::int64_t>(w);
}

double andpro_kept(const std::string& file, const ProfilePoint& p) {
  AndproParams a;
  a.budget = need(file, p, p.budget, "budget");
  a.window = andpro_window(file, p);
  a.block = static_cast<std::int64_t>(p.param_number("block", 16, file));
  return static_cast<double>(a.kept_tokens(need(file, p, p.ctx, "ctx")));
}

bool is_quest_part(const std::string& k) {
  return k == "quest_metadata" || k == "quest_estimate" || k == "quest_topk" || k == "quest_decode";
}
bool is_minf_stage(const std::string& k) { return k == "minf_estimate" || k == "minf_index" || k == "minf_attention"; }
bool is_andpro_part(const std::string& k) { return k == "andpro_score" || k == "andpro_select" || k == "andpro_compact"; }

// Fits `s` (a reduced form when it has fewer rows than coefficients; see
// feature_fit.h); notes a family with rows but nothing usable.
FeatureFit fit_or_note(const std::vector<std::string>& names, const Samples& s, const std::string& what,
                       std::vector<std::string>& problems) {
  if (s.t.empty()) return {};
  FeatureFit f = FeatureFit::fit(names, s.x, s.t);
  if (f.residuals().median > 0.5) problems.push_back(fmt::format("{}: fits badly (median error {:.0f}%)", what,
                                                                 100 * f.residuals().median));
  return f;
}

// One fit per head shape; a shape with few rows (fewer than twice the
// coefficients) takes the form of the best-measured shape, scaled by one
// fitted factor: same kernel, same physics, another amount of work per byte.
void fit_head_shapes(const std::vector<std::string>& names, const std::map<HeadShape, Samples>& samples,
                     const char* family, std::map<HeadShape, FeatureFit>& out, std::vector<std::string>& problems) {
  auto few = [&](const Samples& s) { return s.t.size() < 2 * names.size(); };
  const HeadShape* ref = nullptr;
  for (const auto& [h, s] : samples)
    if (!few(s) && (!ref || s.t.size() > samples.at(*ref).t.size())) ref = &h;
  for (const auto& [h, s] : samples)
    if (!few(s) || !ref) out[h] = fit_or_note(names, s, fmt::format("{} {}", family, h.label()), problems);
  if (ref)
    for (const auto& [h, s] : samples)
      if (few(s)) out[h] = FeatureFit::fit_scaled(out.at(*ref), ref->label(), s.x, s.t);
}

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

}  // namespace

std::string minf_key(const ProfilePoint& p) { return p.variant + "/" + p.param("data").value_or("structured"); }

std::string KernelFits::family_of(const ProfilePoint& p) {
  const std::string& k = p.kernel;
  if (k == "decode") return p.variant == "splitkv" ? "decode" : "";
  if (k == "prefill") return p.variant == "fa2" ? "prefill" : "";  // fa2_m64/m128: forced-tile diagnostics
  if (k == "gemm" || is_quest_part(k) || k == "quest_e2e" || k == "quest_dense_decode" || is_minf_stage(k) ||
      k == "minf_e2e" || k == "minf_dense_prefill" || is_andpro_part(k) || k == "andpro_e2e" ||
      k == "andpro_dense_prefill")
    return k;
  return "";
}

KernelFits KernelFits::fit(const ProfileTable& table, const RowFilter& use) {
  KernelFits f;
  const std::string& file = table.file();
  f.file_ = file;
  f.provenance_ = table.provenance_summary();
  f.synthetic_ = table.synthetic();
  std::map<HeadShape, Samples> dec, pre;
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::int64_t, double>> gemm;
  std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::string>> gemm_labels;
  std::map<std::string, std::map<std::string, Samples>> quest;      // variant → part → samples
  Samples quest_meta;
  std::map<std::string, HeadShape> quest_shape, minf_shape;
  Samples minf_est, minf_idx, minf_att;
  std::map<std::string, std::map<std::int64_t, double>> minf_area;  // key → n → tiles per head
  std::map<std::int64_t, std::map<std::string, Samples>> andpro;    // window → part → samples
  std::map<std::int64_t, AndproFits> andpro_meta;

  for (const ProfilePoint& p : table.points()) {
    if (p.kernel == "ceiling" && p.variant.starts_with("copy") && p.bytes > 0)
      f.copy_gbps_ = std::max(f.copy_gbps_, p.bytes / (p.median_us * 1e3));
    const std::string fam = family_of(p);
    if (fam.empty() || (use && !use(p))) continue;
    const double t = p.median_us;
    if (fam == "decode") {
      const HeadShape h = shape_of(file, p);
      dec[h].add(decode_features(h, decode_work(file, p)), t);
    } else if (fam == "prefill") {
      const HeadShape h = shape_of(file, p);
      pre[h].add(prefill_features(h, prefill_work(file, p, h)), t);
    } else if (fam == "gemm") {
      const auto key = std::make_pair(need(file, p, p.n, "n"), need(file, p, p.k, "k"));
      gemm[key].emplace(need(file, p, p.m, "m"), t);  // a shape listed under two labels: first row wins
      gemm_labels[key].insert(fmt::format("{}/{}/tp{}", p.param("model").value_or("?"), p.param("layer").value_or("?"),
                                          p.param("tp").value_or("?")));
    } else if (fam == "quest_metadata") {
      quest_meta.add(quest_metadata_features(shape_of(file, p), quest_work(file, p)), t);
    } else if (is_quest_part(fam)) {
      const HeadShape h = shape_of(file, p);
      quest_shape[p.variant] = h;
      const QuestWork w = quest_work(file, p);
      Samples& s = quest[p.variant][fam];
      if (fam == "quest_estimate") s.add(quest_estimate_features(h, w), t);
      if (fam == "quest_topk") s.add(quest_topk_features(h, w), t);
      if (fam == "quest_decode") s.add(quest_decode_features(h, w), t);
    } else if (is_minf_stage(fam)) {
      const HeadShape h = shape_of(file, p);
      const std::string key = minf_key(p);
      minf_shape[key] = h;
      const auto n = static_cast<double>(need(file, p, p.ctx, "ctx"));
      const double tiles = p.param_number("tiles", -1, file);
      if (tiles < 0) row_error(file, p, "needs 'tiles=' in params (the visited area)");
      minf_area[key][p.ctx] = tiles / static_cast<double>(h.heads);
      const MinfPatternInfo info = minf_pattern_info(p.variant);
      if (fam == "minf_attention") minf_att.add(minf_attention_features(h, n, tiles), t);
      if (fam == "minf_estimate") minf_est.add(minf_estimate_features(h, n, info), t);
      if (fam == "minf_index") minf_idx.add(minf_index_features(h, n, info), t);
    } else if (is_andpro_part(fam)) {
      const HeadShape h = shape_of(file, p);
      const std::int64_t w = andpro_window(file, p);
      andpro_meta[w].shape = h;
      andpro_meta[w].budget = need(file, p, p.budget, "budget");
      andpro_meta[w].block = static_cast<std::int64_t>(p.param_number("block", 16, file));
      const auto n = static_cast<double>(need(file, p, p.ctx, "ctx"));
      if (fam == "andpro_compact") andpro[w][fam].add(andpro_compact_features(h, andpro_kept(file, p)), t);
      else andpro[w][fam].add(andpro_scan_features(h, n, static_cast<double>(w)), t);
    }
  }

  fit_head_shapes(kDecodeFeatureNames, dec, "decode", f.decode_, f.problems_);
  fit_head_shapes(kPrefillFeatureNames, pre, "prefill", f.prefill_, f.problems_);
  if (!gemm.empty()) {
    const std::string sms_text = table.provenance_value("gpu_sms");
    int sms = 0;
    try {
      sms = sms_text.empty() ? 0 : std::stoi(sms_text);
    } catch (const std::exception&) {
    }
    if (sms < 1) {
      sms = 0;
      f.problems_.push_back(fmt::format("{}: no usable '# gpu_sms=<SM count>' provenance line (found '{}'); GEMM "
                                        "curves are not tried with wave-quantized guides", file, sms_text));
    }
    f.gemm_guide_ = select_gemm_guide(gemm, sms);
  }
  for (const auto& [key, points] : gemm) {
    std::vector<double> xs, ys;
    for (const auto& [m, t] : points) {
      xs.push_back(static_cast<double>(m));
      ys.push_back(t);
    }
    std::string labels;
    for (const auto& l : gemm_labels[key]) labels += (labels.empty() ? "" : " ") + l;
    MonotoneCurve::Guide guide;
    if (auto g = f.gemm_guide_.guides.find(key); g != f.gemm_guide_.guides.end()) guide = g->second;
    MonotoneCurve curve(xs, ys, guide);
    f.gemm_[key] = GemmCurve{curve, labels, relative_error(curve.ys(), ys)};
  }
  const FeatureFit meta = fit_or_note(kQuestMetadataNames, quest_meta, "quest metadata", f.problems_);
  for (auto& [variant, parts] : quest) {
    QuestFits q;
    q.shape = quest_shape[variant];
    const std::string w = "quest/" + variant + " ";
    q.metadata = meta;
    q.estimate = fit_or_note(kQuestEstimateNames, parts["quest_estimate"], w + "estimate", f.problems_);
    q.topk = fit_or_note(kQuestTopkNames, parts["quest_topk"], w + "topk", f.problems_);
    q.decode = fit_or_note(kQuestDecodeNames, parts["quest_decode"], w + "decode", f.problems_);
    f.quest_[variant] = std::move(q);
  }
  const FeatureFit est = fit_or_note(kMinfEstimateNames, minf_est, "minference estimate", f.problems_);
  const FeatureFit idx = fit_or_note(kMinfIndexNames, minf_idx, "minference index", f.problems_);
  const FeatureFit att = fit_or_note(kMinfAttentionNames, minf_att, "minference attention", f.problems_);
  for (const auto& [key, tiles] : minf_area) {
    MinfFits m;
    m.shape = minf_shape[key];
    m.info = minf_pattern_info(key.substr(0, key.find('/')));
    fit_band(tiles, m);
    if (m.info.type != "ashape") {  // a static pattern has nothing to estimate
      m.estimate = est;
      m.index = idx;
    }
    m.attention = att;
    f.minf_[key] = std::move(m);
  }
  for (auto& [w, parts] : andpro) {
    AndproFits a = andpro_meta[w];
    const std::string what = fmt::format("andpro/w{} ", w);
    a.score = fit_or_note(kAndproScanNames, parts["andpro_score"], what + "score", f.problems_);
    a.select = fit_or_note(kAndproScanNames, parts["andpro_select"], what + "select", f.problems_);
    a.compact = fit_or_note(kAndproCompactNames, parts["andpro_compact"], what + "compact", f.problems_);
    f.andpro_[w] = std::move(a);
  }
  return f;
}

GemmGuide KernelFits::gemm_guide_of(std::pair<std::int64_t, std::int64_t> key) const {
  if (auto it = gemm_guide_.guides.find(key); it != gemm_guide_.guides.end()) return it->second;
  const MonotoneCurve& c = gemm_.at(key).curve;
  return fit_gemm_guide(key.first, key.second, 0, 0, gemm_guide_.t0_us, gemm_guide_.bw_gbps, gemm_guide_.sms,
                        c.xs().back(), c.ys().back());
}

std::optional<double> KernelFits::predict(const ProfilePoint& p) const {
  const std::string fam = family_of(p);
  const std::string& file = file_;
  auto have = [](const FeatureFit& fit) { return !fit.empty(); };
  if (fam == "decode" || fam == "quest_dense_decode") {
    auto it = decode_.find(shape_of(file, p));
    if (it == decode_.end()) return std::nullopt;
    return it->second.predict(decode_features(it->first, decode_work(file, p)));
  }
  if (fam == "prefill" || fam == "minf_dense_prefill" || fam == "andpro_dense_prefill") {
    auto it = prefill_.find(shape_of(file, p));
    if (it == prefill_.end()) return std::nullopt;
    return it->second.predict(prefill_features(it->first, prefill_work(file, p, it->first)));
  }
  if (fam == "gemm") {
    auto it = gemm_.find({p.n, p.k});
    if (it == gemm_.end()) return std::nullopt;
    return it->second.curve(static_cast<double>(p.m));
  }
  if (fam == "quest_metadata") {
    if (quest_.empty() || !have(quest_.begin()->second.metadata)) return std::nullopt;
    return quest_.begin()->second.metadata.predict(quest_metadata_features(shape_of(file, p), quest_work(file, p)));
  }
  if (fam.starts_with("quest_")) {
    auto it = quest_.find(p.variant);
    if (it == quest_.end()) return std::nullopt;
    const QuestFits& q = it->second;
    const HeadShape h = shape_of(file, p);
    const QuestWork w = quest_work(file, p);
    if (fam == "quest_estimate") return have(q.estimate) ? std::optional(q.estimate.predict(quest_estimate_features(h, w))) : std::nullopt;
    if (fam == "quest_topk") return have(q.topk) ? std::optional(q.topk.predict(quest_topk_features(h, w))) : std::nullopt;
    if (fam == "quest_decode") return have(q.decode) ? std::optional(q.decode.predict(quest_decode_features(h, w))) : std::nullopt;
    if (!have(q.estimate) || !have(q.topk) || !have(q.decode)) return std::nullopt;  // quest_e2e
    return q.estimate.predict(quest_estimate_features(h, w)) + q.topk.predict(quest_topk_features(h, w)) +
           q.decode.predict(quest_decode_features(h, w));
  }
  if (fam.starts_with("minf_")) {
    auto it = minf_.find(minf_key(p));
    if (it == minf_.end()) return std::nullopt;
    const MinfFits& m = it->second;
    const HeadShape h = shape_of(file, p);
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
  if (fam.starts_with("andpro_")) {
    auto it = andpro_.find(andpro_window(file, p));
    if (it == andpro_.end()) return std::nullopt;
    const AndproFits& a = it->second;
    const HeadShape h = shape_of(file, p);
    const auto n = static_cast<double>(p.ctx);
    const auto w = static_cast<double>(it->first);
    if (fam == "andpro_score") return have(a.score) ? std::optional(a.score.predict(andpro_scan_features(h, n, w))) : std::nullopt;
    if (fam == "andpro_select") return have(a.select) ? std::optional(a.select.predict(andpro_scan_features(h, n, w))) : std::nullopt;
    if (fam == "andpro_compact") return have(a.compact) ? std::optional(a.compact.predict(andpro_compact_features(h, andpro_kept(file, p)))) : std::nullopt;
    if (!have(a.score) || !have(a.select) || !have(a.compact)) return std::nullopt;  // andpro_e2e
    return a.score.predict(andpro_scan_features(h, n, w)) + a.select.predict(andpro_scan_features(h, n, w)) +
           a.compact.predict(andpro_compact_features(h, andpro_kept(file, p)));
  }
  return std::nullopt;
}

std::vector<FitSummaryRow> KernelFits::summary() const {
  std::vector<FitSummaryRow> out;
  auto add = [&](const std::string& fam, const std::string& key, const FeatureFit& fit) {
    if (!fit.empty()) out.push_back({fam, key, fit.describe(), fit.residuals()});
  };
  for (const auto& [h, fit] : decode_) add("decode", h.label(), fit);
  for (const auto& [h, fit] : prefill_) add("prefill", h.label(), fit);
  for (const auto& [key, g] : gemm_) {
    out.push_back({"gemm", fmt::format("n={} k={} ({})", key.first, key.second, g.labels),
                   fmt::format("monotone over M={}..{}; {}", g.curve.min_x(), g.curve.max_x(),
                               g.curve.guided() ? gemm_guide_.best().name + " guide between points" : "linear between points"),
                   g.residuals});
  }
  if (!quest_.empty()) add("quest_metadata", "all variants", quest_.begin()->second.metadata);
  for (const auto& [v, q] : quest_) {
    add("quest_estimate", v, q.estimate);
    add("quest_topk", v, q.topk);
    add("quest_decode", v, q.decode);
  }
  for (const auto& [k, m] : minf_)
    if (m.band_width > 0)
      out.push_back({"minf_area", k, fmt::format("band width {:.2f} tiles per row block", m.band_width),
                     m.area_residuals});
  for (const auto& [k, m] : minf_)
    if (!m.estimate.empty()) {
      add("minf_estimate", "all patterns", m.estimate);
      add("minf_index", "all patterns", m.index);
      break;
    }
  if (!minf_.empty()) add("minf_attention", "all patterns", minf_.begin()->second.attention);
  for (const auto& [w, a] : andpro_) {
    const std::string key = fmt::format("w{}", w);
    add("andpro_score", key, a.score);
    add("andpro_select", key, a.select);
    add("andpro_compact", key, a.compact);
  }
  return out;
}

}  // namespace servesim
