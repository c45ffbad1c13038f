// Fitting every family of a profile; see kernel_fits.h and kernel_features.h.
#include "costmodel/kernel_fits.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

// Kept tokens per KV head of a row: the ragged compaction's rows (layer_topk,
// worst-case rounding) or the equal split's.
double andpro_kept(const std::string& file, const ProfilePoint& p, bool layer_topk = false) {
  AndproParams a;
  a.layer_topk = layer_topk;
  a.budget = need(file, p, p.budget, "budget");
  a.window = andpro_window(file, p);
  a.block = static_cast<std::int64_t>(p.param_number("block", 16, file));
  return static_cast<double>(a.kept_tokens(need(file, p, p.ctx, "ctx")));
}

// The heads a Quest variant selects and decodes for: variant qhead selects
// per query head (heads rows), the others per KV head. Its top-k and sparse
// decode features count those rows, so one form holds across head shapes.
HeadShape quest_rows_shape(const std::string& variant, const HeadShape& h) {
  return variant == "qhead" ? HeadShape{h.heads, h.heads, h.head_dim} : h;
}

bool is_quest_part(const std::string& k) {
  return k == "quest_metadata" || k == "quest_estimate" || k == "quest_topk" || k == "quest_decode";
}
bool is_minf_stage(const std::string& k) { return k == "minf_estimate" || k == "minf_index" || k == "minf_attention"; }
bool is_andpro_part(const std::string& k) {
  return k == "andpro_score" || k == "andpro_select" || k == "andpro_compact" || k == "andpro_select_layer" ||
         k == "andpro_compact_ragged";
}

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

// Per head shape, the fastest valid prefill variant (kernel_fits.h, "prefill").
void choose_prefill_variants(const std::map<std::string, std::map<HeadShape, FeatureFit>>& variants,
                             const std::map<HeadShape, std::vector<std::array<double, 4>>>& workloads,
                             std::map<HeadShape, FeatureFit>& chosen, std::map<HeadShape, std::string>& names) {
  std::vector<std::string> order;  // fa2 first: ties keep what the launcher has always run
  if (variants.count("fa2")) order.push_back("fa2");
  for (const auto& [v, fits] : variants)
    if (v != "fa2") order.push_back(v);
  for (const auto& [h, xs] : workloads) {
    double best = std::numeric_limits<double>::infinity();
    for (const std::string& v : order) {
      auto it = variants.at(v).find(h);
      if (it == variants.at(v).end() || it->second.empty() || !(it->second.residuals().median <= 0.5)) continue;
      double score = 0;
      bool ok = true;
      for (const auto& x : xs) {
        const double us = it->second.predict(x);
        if (!(us > 0) || !std::isfinite(us)) {
          ok = false;
          break;
        }
        score += std::log(us);
      }
      score /= static_cast<double>(xs.size());
      if (ok && score < best) {
        best = score;
        chosen[h] = it->second;
        names[h] = v;
      }
    }
  }
}

}  // namespace

std::string minf_key(const ProfilePoint& p) { return p.variant + "/" + p.param("data").value_or("structured"); }

std::string KernelFits::family_of(const ProfilePoint& p) {
  const std::string& k = p.kernel;
  if (k == "decode") return "decode";  // splitkv (the bench), or an imported stack's kernel
  if (k == "allreduce") return p.variant == "vllm_custom_eager" ? "" : "allreduce";
  if (k == "prefill") return p.variant.starts_with("fa2_m") ? "" : "prefill";  // fa2_m64/m128: forced-tile diagnostics
  if (k == "elementwise") return k;
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
  std::map<HeadShape, Samples> dec;
  std::map<std::string, std::map<HeadShape, Samples>> pre;  // variant → shape → samples
  std::map<HeadShape, std::vector<std::array<double, 4>>> pre_work;  // every variant's workloads, per shape
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::int64_t, double>> gemm;
  std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::string>> gemm_labels;
  std::map<std::string, std::map<HeadShape, std::map<std::string, Samples>>> quest;  // variant → shape → part
  std::map<HeadShape, Samples> quest_meta;
  std::map<std::string, HeadShape> minf_shape;
  Samples minf_est, minf_idx, minf_att;
  std::map<std::string, std::map<std::int64_t, double>> minf_area;  // key → n → tiles per head
  std::map<std::int64_t, std::map<std::string, Samples>> andpro;    // window → part → samples
  std::map<std::int64_t, AndproFits> andpro_meta;
  std::map<std::string, std::map<double, double>> elementwise;  // variant → bytes → µs
  std::map<std::int64_t, std::map<std::string, std::map<double, double>>> allreduce;  // gpus → variant → bytes → µs

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
      const auto x = prefill_features(h, prefill_work(file, p, h));
      pre[p.variant][h].add(x, t);
      pre_work[h].push_back(x);
    } else if (fam == "allreduce") {
      const double gpus = p.param_number("gpus", -1, file);
      if (gpus < 2) row_error(file, p, "needs 'gpus=' >= 2 in params");
      if (!(p.bytes > 0)) row_error(file, p, "needs bytes > 0 (the message size)");
      allreduce[static_cast<std::int64_t>(gpus)][p.variant].emplace(p.bytes, t);
    } else if (fam == "elementwise") {
      if (!(p.bytes > 0)) row_error(file, p, "needs bytes > 0");
      elementwise[p.variant].emplace(p.bytes, t);  // equal bytes: first row wins
    } else if (fam == "gemm") {
      const auto key = std::make_pair(need(file, p, p.n, "n"), need(file, p, p.k, "k"));
      gemm[key].emplace(need(file, p, p.m, "m"), t);  // a shape listed under two labels: first row wins
      gemm_labels[key].insert(fmt::format("{}/{}/tp{}", p.param("model").value_or("?"), p.param("layer").value_or("?"),
                                          p.param("tp").value_or("?")));
    } else if (fam == "quest_metadata") {
      const HeadShape h = shape_of(file, p);
      quest_meta[h].add(quest_metadata_features(h, quest_work(file, p)), t);
    } else if (is_quest_part(fam)) {
      const HeadShape h = shape_of(file, p);
      const QuestWork w = quest_work(file, p);
      Samples& s = quest[p.variant][h][fam];
      if (fam == "quest_estimate") s.add(quest_estimate_features(h, w), t);
      if (fam == "quest_topk") s.add(quest_topk_features(quest_rows_shape(p.variant, h), w), t);
      if (fam == "quest_decode") s.add(quest_decode_features(quest_rows_shape(p.variant, h), w), t);
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
      else if (fam == "andpro_compact_ragged") andpro[w][fam].add(andpro_compact_features(h, andpro_kept(file, p, true)), t);
      else andpro[w][fam].add(andpro_scan_features(h, n, static_cast<double>(w)), t);
    }
  }

  fit_head_shapes(kDecodeFeatureNames, dec, "decode", f.decode_, f.problems_);
  for (const auto& [variant, shapes] : pre)
    fit_head_shapes(kPrefillFeatureNames, shapes, variant == "fa2" ? "prefill" : ("prefill/" + variant).c_str(),
                    f.prefill_variants_[variant], f.problems_);
  choose_prefill_variants(f.prefill_variants_, pre_work, f.prefill_, f.prefill_variant_);
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
  // Quest: one fit per (variant, head shape) and part, as for the dense kernels
  // (a shape with few rows takes the form of the variant's best-measured
  // shape); the metadata update per head shape (a shape without its own
  // metadata rows takes the nearest shape's).
  std::map<HeadShape, FeatureFit> meta;
  fit_head_shapes(kQuestMetadataNames, quest_meta, "quest metadata", meta, f.problems_);
  for (auto& [variant, shapes] : quest) {
    const std::pair<const char*, const std::vector<std::string>*> parts[3] = {
        {"quest_estimate", &kQuestEstimateNames}, {"quest_topk", &kQuestTopkNames}, {"quest_decode", &kQuestDecodeNames}};
    std::map<HeadShape, FeatureFit> fitted[3];
    for (int i = 0; i < 3; ++i) {
      std::map<HeadShape, Samples> by_shape;
      for (auto& [h, part_samples] : shapes)
        if (auto it = part_samples.find(parts[i].first); it != part_samples.end()) by_shape[h] = it->second;
      fit_head_shapes(*parts[i].second, by_shape, fmt::format("quest/{} {}", variant, parts[i].first + 6).c_str(),
                      fitted[i], f.problems_);
    }
    for (const auto& [h, part_samples] : shapes) {
      QuestFits q;
      q.shape = h;
      if (const auto* m = nearest_head_shape(meta, h)) q.metadata = m->second;
      FeatureFit* slots[3] = {&q.estimate, &q.topk, &q.decode};
      for (int i = 0; i < 3; ++i)
        if (auto it = fitted[i].find(h); it != fitted[i].end()) *slots[i] = it->second;
      f.quest_[variant][h] = std::move(q);
    }
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
  for (const auto& [variant, points] : elementwise) {
    std::vector<double> xs, ys;
    for (const auto& [bytes, us] : points) xs.push_back(bytes), ys.push_back(us);
    f.elementwise_[variant] = MonotoneCurve(std::move(xs), std::move(ys));
  }
  // All-reduce: per GPU count, the lower envelope of the implementations at the
  // union of their measured sizes, each used only inside its own measured range.
  std::set<std::string> ar_variants;
  for (const auto& [gpus, variants] : allreduce) {
    std::map<std::string, MonotoneCurve> curves;
    std::set<double> sizes;
    for (const auto& [v, pts] : variants) {
      std::vector<double> xs, ys;
      for (const auto& [b, us] : pts) xs.push_back(b), ys.push_back(us), sizes.insert(b);
      curves.emplace(v, MonotoneCurve(std::move(xs), std::move(ys)));
      ar_variants.insert(v);
    }
    std::vector<double> xs, ys;
    for (double b : sizes) {
      double best = std::numeric_limits<double>::infinity();
      for (const auto& [v, c] : curves)
        if (b >= c.min_x() && b <= c.max_x()) best = std::min(best, c(b));
      xs.push_back(b);
      ys.push_back(best);
    }
    f.allreduce_[gpus] = MonotoneCurve(std::move(xs), std::move(ys));
  }
  for (const auto& v : ar_variants) f.allreduce_source_ += (f.allreduce_source_.empty() ? "" : "+") + v;
  for (auto& [w, parts] : andpro) {
    AndproFits a = andpro_meta[w];
    const std::string what = fmt::format("andpro/w{} ", w);
    a.score = fit_or_note(kAndproScanNames, parts["andpro_score"], what + "score", f.problems_);
    a.select = fit_or_note(kAndproScanNames, parts["andpro_select"], what + "select", f.problems_);
    a.compact = fit_or_note(kAndproCompactNames, parts["andpro_compact"], what + "compact", f.problems_);
    // layer_topk rows are optional (profiles measured before issue 20 lack them).
    if (parts.contains("andpro_select_layer"))
      a.select_layer = fit_or_note(kAndproScanNames, parts["andpro_select_layer"], what + "select_layer", f.problems_);
    if (parts.contains("andpro_compact_ragged"))
      a.compact_ragged = fit_or_note(kAndproCompactNames, parts["andpro_compact_ragged"], what + "compact_ragged", f.problems_);
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

GemmPrice KernelFits::gemm_price(std::int64_t n, std::int64_t k) const {
  if (auto it = gemm_.find({n, k}); it != gemm_.end()) return GemmPrice{&it->second.curve, false, {}, {}, {n, k}};
  const GemmCurve* best = nullptr;
  std::pair<std::int64_t, std::int64_t> from;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& [key, curve] : gemm_) {
    const double dn = std::log(static_cast<double>(key.first) / static_cast<double>(n));
    const double dk = std::log(static_cast<double>(key.second) / static_cast<double>(k));
    if (const double dist = dn * dn + dk * dk; dist < best_d) best_d = dist, best = &curve, from = key;
  }
  GemmPrice g{&best->curve, true, gemm_guide_of(from), {}, from};
  g.to = g.from;
  g.to.n = n;
  g.to.k = k;
  return g;
}

std::optional<double> KernelFits::predict(const ProfilePoint& p) const {
  const std::string fam = family_of(p);
  const std::string& file = file_;
  auto have = [](const FeatureFit& fit) { return !fit.empty(); };
  // Dense attention at a head shape that was not measured: the nearest measured
  // shape's fit at the row's own bytes and FLOPs (the cost model's rule).
  auto same_dim = [](const auto* kv, const HeadShape& h) { return kv && kv->first.head_dim == h.head_dim ? kv : nullptr; };
  if (fam == "decode" || fam == "quest_dense_decode") {
    const HeadShape h = shape_of(file, p);
    const auto* it = same_dim(nearest_head_shape(decode_, h), h);
    if (!it) return std::nullopt;
    return it->second.predict(decode_features(h, decode_work(file, p)));
  }
  if (fam == "prefill" || fam == "minf_dense_prefill" || fam == "andpro_dense_prefill") {
    // A prefill row by its own variant's fit; the sparse families' dense
    // baselines (the mma.sync kernel) by fa2's.
    auto v = prefill_variants_.find(fam == "prefill" ? p.variant : std::string("fa2"));
    if (v == prefill_variants_.end()) return std::nullopt;
    const HeadShape h = shape_of(file, p);
    const auto* it = same_dim(nearest_head_shape(v->second, h), h);
    if (!it) return std::nullopt;
    return it->second.predict(prefill_features(h, prefill_work(file, p, h)));
  }
  if (fam == "elementwise") {
    auto it = elementwise_.find(p.variant);
    if (it == elementwise_.end()) return std::nullopt;
    return it->second(p.bytes);
  }
  if (fam == "gemm") {
    if (gemm_.empty()) return std::nullopt;
    return gemm_price(p.n, p.k)(static_cast<double>(p.m));  // an unmeasured shape: transported
  }
  if (fam == "allreduce") {
    auto it = allreduce_.find(static_cast<std::int64_t>(p.param_number("gpus", -1, file)));
    if (it == allreduce_.end()) return std::nullopt;
    return it->second(p.bytes);
  }
  if (fam == "quest_metadata") {
    const HeadShape h = shape_of(file, p);
    for (const auto& [variant, shapes] : quest_)  // the metadata fit is shared by the variants
      if (auto it = shapes.find(h); it != shapes.end() && have(it->second.metadata))
        return it->second.metadata.predict(quest_metadata_features(h, quest_work(file, p)));
    return std::nullopt;
  }
  if (fam.starts_with("quest_")) {
    const HeadShape h = shape_of(file, p);
    auto v = quest_.find(p.variant);
    if (v == quest_.end()) return std::nullopt;
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
    if (fam == "andpro_select_layer") return have(a.select_layer) ? std::optional(a.select_layer.predict(andpro_scan_features(h, n, w))) : std::nullopt;
    if (fam == "andpro_compact_ragged") return have(a.compact_ragged) ? std::optional(a.compact_ragged.predict(andpro_compact_features(h, andpro_kept(file, p, true)))) : std::nullopt;
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
  for (const auto& [h, fit] : prefill_) add("prefill", fmt::format("{} ({})", h.label(), prefill_variant_.at(h)), fit);
  for (const auto& [v, shapes] : prefill_variants_)
    for (const auto& [h, fit] : shapes)
      if (prefill_variant_.count(h) && prefill_variant_.at(h) != v) add("prefill/" + v, h.label() + " (not used)", fit);
  for (const auto& [key, g] : gemm_) {
    out.push_back({"gemm", fmt::format("n={} k={} ({})", key.first, key.second, g.labels),
                   fmt::format("monotone over M={}..{}; {}", g.curve.min_x(), g.curve.max_x(),
                               g.curve.guided() ? gemm_guide_.best().name + " guide between points" : "linear between points"),
                   g.residuals});
  }
  std::set<HeadShape> meta_listed;
  for (const auto& [v, shapes] : quest_)
    for (const auto& [h, q] : shapes)
      if (meta_listed.insert(h).second) add("quest_metadata", h.label() + " (all variants)", q.metadata);
  for (const auto& [v, shapes] : quest_)
    for (const auto& [h, q] : shapes) {
      const std::string key = v + " " + h.label();
      add("quest_estimate", key, q.estimate);
      add("quest_topk", key, q.topk);
      add("quest_decode", key, q.decode);
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
    if (!a.select_layer.empty()) add("andpro_select_layer", key, a.select_layer);
    if (!a.compact_ragged.empty()) add("andpro_compact_ragged", key, a.compact_ragged);
  }
  return out;
}

}  // namespace servesim
