// Fitting every family of a profile; see kernel_fits.h and kernel_features.h.
#include "costmodel/kernel_fits.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <cmath>
#include <limits>
#include <set>

#include "costmodel/attention_registry.h"
#include "costmodel/fit_rows.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

// Width of the p10..p90 range of a standard normal: 2 × 1.28155.
constexpr double kP10P90Span = 2.5631031;

DecodeWork decode_work(const std::string& file, const ProfilePoint& p) {
  const double b = static_cast<double>(need_column(file, p, p.batch, "batch"));
  const double sum = p.param_number("ctx_sum", b * static_cast<double>(need_column(file, p, p.ctx, "ctx")), file);
  return DecodeWork{b, sum};
}

PrefillWork prefill_work(const std::string& file, const ProfilePoint& p, const HeadShape& h) {
  const double b = static_cast<double>(need_column(file, p, p.batch, "batch"));
  const double q = static_cast<double>(need_column(file, p, p.q_len, "q_len"));
  const double ctx = static_cast<double>(need_column(file, p, p.ctx, "ctx"));
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

// The registered method whose fitted or composite kernels include `kernel`.
const AttentionMethodType* owner_of(std::string_view kernel) {
  for (const AttentionMethodType& t : attention_method_types())
    for (const auto* names : {&t.fitting.fitted, &t.fitting.composite})
      for (std::string_view n : *names)
        if (n == kernel) return &t;
  return nullptr;
}

// family_of's answer as a kind, without building a string: kMethod is a
// registered method's kernel (family_of(p) == p.kernel), kNone is "".
enum class FamilyKind { kNone, kDecode, kPrefill, kAllreduce, kElementwise, kGemm, kMethod };

FamilyKind family_kind(const ProfilePoint& p) {
  const std::string_view k = p.kernel;
  const std::string_view v = p.variant;
  if (k == "decode")  // splitkv (the bench), or an imported stack's kernel
    return is_ragged_pair_row(p) ? FamilyKind::kNone : FamilyKind::kDecode;
  if (k == "allreduce") return v == "vllm_custom_eager" ? FamilyKind::kNone : FamilyKind::kAllreduce;
  if (k == "prefill") return v.starts_with("fa2_m") ? FamilyKind::kNone : FamilyKind::kPrefill;  // fa2_m64/m128: forced-tile diagnostics
  if (k == "elementwise") return FamilyKind::kElementwise;
  if (k == "gemm") return FamilyKind::kGemm;
  return owner_of(k) ? FamilyKind::kMethod : FamilyKind::kNone;
}

}  // namespace

std::string KernelFits::family_of(const ProfilePoint& p) {
  switch (family_kind(p)) {
    case FamilyKind::kDecode: return "decode";
    case FamilyKind::kPrefill: return "prefill";
    case FamilyKind::kAllreduce: return "allreduce";
    case FamilyKind::kElementwise: return "elementwise";
    case FamilyKind::kGemm: return "gemm";
    case FamilyKind::kMethod: return p.kernel;
    case FamilyKind::kNone: break;
  }
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
  // The distinct params of each weight shape's rows (its labels are made from them at the end).
  std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::string_view>> gemm_params;
  // M of the gemm_dense rows of each shape (kernels/gemm/gemm_family.cu): kept out of the guide
  // selection, so every shape's guide is chosen from the grid alone.
  std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::int64_t>> gemm_dense_m;
  // p10 and p90 of every GEMM point: a shape with gemm_dense rows keeps a drop between two
  // neighbouring M whose ranges do not overlap (monotone_curve.h, measured dips).
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::int64_t, std::pair<double, double>>> gemm_spread;
  std::map<std::string, std::map<double, double>> elementwise;  // variant → bytes → µs
  std::map<std::int64_t, std::map<std::string, std::map<double, double>>> allreduce;  // gpus → variant → bytes → µs
  // Every registered method's fitter, and the fitter of each of their fitted kernels.
  std::vector<std::pair<std::string_view, std::unique_ptr<MethodFitter>>> fitters;
  std::map<std::string, MethodFitter*, std::less<>> fitter_of;
  for (const AttentionMethodType& t : attention_method_types())
    if (t.fitting.make_fitter) {
      fitters.emplace_back(t.name, t.fitting.make_fitter());
      for (std::string_view k : t.fitting.fitted) fitter_of.emplace(std::string(k), fitters.back().second.get());
    }

  std::vector<double> spreads;  // ln(p90/p10) / kP10P90Span per row that has both
  // Each elementwise variant's map, found by a short linear search: profiles
  // interleave the variants row by row, and a few string compares cost less than a
  // lookup in the map by name.
  std::vector<std::pair<const std::string*, std::map<double, double>*>> elementwise_of;
  auto elementwise_points = [&](const std::string& variant) {
    for (const auto& [name, points] : elementwise_of)
      if (*name == variant) return points;
    auto it = elementwise.try_emplace(variant).first;
    return elementwise_of.emplace_back(&it->first, &it->second).second;
  };
  std::map<HeadShape, std::map<std::pair<double, double>, double>> uniform_decode;  // (batch, KV) -> us
  struct RaggedPairRows {
    double first = 0, second = 0, spread = 0;  // ragged us, uniform us, longest / mean
  };
  std::map<HeadShape, std::map<std::pair<std::string, double>, RaggedPairRows>> ragged_pairs;  // (dist, batch)
  std::map<std::string, const ProfilePoint*, std::less<>> launch_rows;              // the ceilings' launch_* rows
  for (const ProfilePoint& p : table.points()) {
    if (std::string_view(p.kernel) == "ceiling" && p.variant.starts_with("copy") && p.bytes > 0)
      f.copy_gbps_ = std::max(f.copy_gbps_, p.bytes / (p.median_us * 1e3));
    if (std::string_view(p.kernel) == "ceiling" && p.variant.starts_with("launch_")) launch_rows.try_emplace(p.variant, &p);
    if (std::string_view(p.kernel) == "decode")
      if (const auto dist = p.param("dist")) {  // is_ragged_pair_row: for the ragged factor only
        if (!use || use(p)) {
          const HeadShape h = row_head_shape(file, p);
          const DecodeWork w = decode_work(file, p);
          const bool uniform = dist->ends_with("-uniform");
          auto& pair = ragged_pairs[h][{uniform ? dist->substr(0, dist->size() - 8) : *dist, w.seqs}];
          if (uniform) {
            pair.second = p.median_us;
          } else {
            pair.first = p.median_us;
            pair.spread = p.param_number("ctx_max", -1, file) * w.seqs / w.kv_tokens;
          }
        }
        continue;
      }
    const FamilyKind fam = family_kind(p);
    if (fam == FamilyKind::kNone || (use && !use(p))) continue;
    if (p.p10_us > 0 && p.p90_us >= p.p10_us) spreads.push_back(std::log(p.p90_us / p.p10_us) / kP10P90Span);
    const double t = p.median_us;
    if (fam == FamilyKind::kDecode) {
      const HeadShape h = row_head_shape(file, p);
      const DecodeWork w = decode_work(file, p);
      dec[h].add(decode_features(h, w), t);
      if (p.param("ragged") == "0")  // every sequence at one KV length: a grid point (first row wins)
        uniform_decode[h].try_emplace({w.seqs, w.kv_tokens / w.seqs}, t);
    } else if (fam == FamilyKind::kPrefill) {
      const HeadShape h = row_head_shape(file, p);
      const auto x = prefill_features(h, prefill_work(file, p, h));
      pre[p.variant][h].add(x, t);
      pre_work[h].push_back(x);
    } else if (fam == FamilyKind::kAllreduce) {
      const double gpus = p.param_number("gpus", -1, file);
      if (gpus < 2) row_error(file, p, "needs 'gpus=' >= 2 in params");
      if (!(p.bytes > 0)) row_error(file, p, "needs bytes > 0 (the message size)");
      allreduce[static_cast<std::int64_t>(gpus)][p.variant].emplace(p.bytes, t);
    } else if (fam == FamilyKind::kElementwise) {
      if (!(p.bytes > 0)) row_error(file, p, "needs bytes > 0");
      elementwise_points(p.variant)->try_emplace(p.bytes, t);  // equal bytes: first row wins
    } else if (fam == FamilyKind::kGemm) {
      const auto key = std::make_pair(need_column(file, p, p.n, "n"), need_column(file, p, p.k, "k"));
      const std::int64_t m = need_column(file, p, p.m, "m");
      if (gemm[key].try_emplace(m, t).second)  // a shape listed under two labels: first row wins
        gemm_spread[key][m] = {p.p10_us > 0 ? p.p10_us : t, p.p90_us > 0 ? p.p90_us : t};
      gemm_params[key].insert(p.params);
      if (is_gemm_dense_row(p)) gemm_dense_m[key].insert(m);
    } else if (auto it = fitter_of.find(p.kernel); it != fitter_of.end()) {  // a method's kernel: its family is its name
      it->second->add(p, file);
    }
  }

  fit_head_shapes(kDecodeFeatureNames, dec, "decode", f.decode_, f.problems_);
  for (const auto& [h, points] : uniform_decode)
    if (auto g = DecodeGrid::build(points)) f.decode_grids_.emplace(h, std::move(*g));
  for (const auto& [h, pairs] : ragged_pairs) {
    std::vector<RaggedDecode::Pair> ps;
    for (const auto& [key, rows] : pairs)
      if (rows.first > 0 && rows.second > 0) ps.push_back({key.second, rows.spread, rows.first / rows.second});
    if (auto r = RaggedDecode::build(std::move(ps))) f.ragged_decode_.emplace(h, std::move(*r));
  }
  if (launch_rows.count("launch_alone") && launch_rows.count("launch_queued") && launch_rows.count("launch_queued_spin")) {
    const ProfilePoint& alone = *launch_rows.at("launch_alone");
    const ProfilePoint& queued = *launch_rows.at("launch_queued");
    const double launches = queued.param_number("launches", -1, file);
    if (!(launches >= 1)) row_error(file, queued, "needs 'launches=' >= 1 in params");
    const double excess = alone.median_us - (queued.median_us - launch_rows.at("launch_queued_spin")->median_us) / launches;
    if (excess > 0 && excess < alone.median_us)
      f.launch_excess_us_ = excess;
    else
      f.problems_.push_back(fmt::format("{}: the launch ceiling rows give no launch excess in (0, launch_alone) "
                                        "({:.3f} us); isolated rows are not corrected", file, excess));
  }
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
    if (gemm_dense_m.empty()) {  // the grid is every GEMM point: no copy
      f.gemm_guide_ = select_gemm_guide(gemm, sms);
    } else {
      GemmPoints grid = gemm;
      for (const auto& [key, ms] : gemm_dense_m)
        for (std::int64_t m : ms) grid[key].erase(m);
      f.gemm_guide_ = select_gemm_guide(grid, sms);
    }
  }
  for (const auto& [key, points] : gemm) {
    std::vector<double> xs, ys;
    for (const auto& [m, t] : points) {
      xs.push_back(static_cast<double>(m));
      ys.push_back(t);
    }
    std::string labels;
    std::set<std::string> shape_labels;
    for (std::string_view params : gemm_params[key]) {
      ProfilePoint row;  // the label: the params' model, layer and TP
      row.params = params;
      shape_labels.insert(fmt::format("{}/{}/tp{}", row.param("model").value_or("?"), row.param("layer").value_or("?"),
                                      row.param("tp").value_or("?")));
    }
    for (const auto& l : shape_labels) labels += (labels.empty() ? "" : " ") + l;
    MonotoneCurve::Guide guide;
    if (auto g = f.gemm_guide_.guides.find(key); g != f.gemm_guide_.guides.end()) guide = g->second;
    std::vector<bool> dips;
    if (gemm_dense_m.count(key)) {
      const auto& spread = gemm_spread.at(key);
      for (auto it = points.begin(); it != points.end(); ++it) {
        const auto next = std::next(it);
        dips.push_back(next != points.end() && spread.at(it->first).first > spread.at(next->first).second);
      }
    }
    MonotoneCurve curve(xs, ys, guide, std::move(dips));
    f.gemm_[key] = GemmCurve{curve, labels, relative_error(curve.ys(), ys)};
  }
  for (auto& [name, fitter] : fitters) f.methods_.emplace_back(std::string(name), fitter->finish(file, f.problems_));
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
  f.spread_rows_ = spreads.size();
  if (!spreads.empty()) {
    const auto mid = spreads.begin() + static_cast<std::ptrdiff_t>(spreads.size() / 2);
    std::nth_element(spreads.begin(), mid, spreads.end());
    f.spread_sigma_ = *mid;  // the upper median for an even count: deterministic, no averaging
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
  // Dense attention at a head shape that was not measured: the nearest measured
  // shape's fit (same head_dim) at the row's own bytes and FLOPs (the cost model's rule).
  if (fam == "decode") return predict_decode(p);
  if (fam == "prefill") return predict_prefill(p, p.variant);
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
  if (const AttentionMethodType* t = owner_of(fam))
    if (const MethodFits* m = method(t->name)) return m->predict(p, *this);
  return std::nullopt;
}

std::optional<double> KernelFits::predict_decode(const ProfilePoint& p) const {
  const HeadShape h = row_head_shape(file_, p);
  const auto* it = nearest_head_shape(decode_, h);
  if (!it || it->first.head_dim != h.head_dim) return std::nullopt;
  return it->second.predict(decode_features(h, decode_work(file_, p)));
}

std::optional<double> KernelFits::predict_prefill(const ProfilePoint& p, const std::string& variant) const {
  auto v = prefill_variants_.find(variant);
  if (v == prefill_variants_.end()) return std::nullopt;
  const HeadShape h = row_head_shape(file_, p);
  const auto* it = nearest_head_shape(v->second, h);
  if (!it || it->first.head_dim != h.head_dim) return std::nullopt;
  return it->second.predict(prefill_features(h, prefill_work(file_, p, h)));
}

std::shared_ptr<const KernelFits> load_kernel_fits(const std::string& path) {
  struct Entry {
    std::uintmax_t size = 0;
    std::filesystem::file_time_type mtime;
    std::shared_ptr<const KernelFits> fits;
  };
  static std::mutex mu;
  static std::map<std::string, Entry> cache;
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  const auto mtime = ec ? std::filesystem::file_time_type{} : std::filesystem::last_write_time(path, ec);
  if (!ec) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(path); it != cache.end() && it->second.size == size && it->second.mtime == mtime)
      return it->second.fits;
  }
  auto fits = std::make_shared<const KernelFits>(KernelFits::fit(ProfileTable::load(path)));
  if (!ec) {
    std::lock_guard<std::mutex> lock(mu);
    cache[path] = Entry{size, mtime, fits};
  }
  return fits;
}

const MethodFits* KernelFits::method(std::string_view name) const {
  for (const auto& [n, m] : methods_)
    if (n == name) return m.get();
  return nullptr;
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
                   fmt::format("{} over M={}..{} ({} points); {}",
                               g.curve.kept_dips() ? fmt::format("monotone except {} measured dips", g.curve.kept_dips())
                                                   : std::string("monotone"),
                               g.curve.min_x(), g.curve.max_x(), g.curve.xs().size(),
                               g.curve.guided() ? gemm_guide_.best().name + " guide between points" : "linear between points"),
                   g.residuals});
  }
  for (const auto& [name, m] : methods_)
    if (m) m->summarize(out);
  return out;
}

}  // namespace servesim
