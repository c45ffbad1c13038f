// Cross-validation experiments; see profile_crossval.h.
#include "costmodel/profile_crossval.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "costmodel/kernel_fits.h"

namespace servesim {
namespace {

struct Pairs {
  std::vector<double> pred, meas;
  void add(double p, double m) { pred.push_back(p), meas.push_back(m); }
};

std::string param_or(const ProfilePoint& p, const char* key) { return p.param(key).value_or(""); }

bool per_op(const ProfilePoint& p) { return (p.kernel == "gemm" || p.kernel == "elementwise") && p.m > 0; }

// The part a per-op row prices: gemm/<layer> or the elementwise variant.
std::string part_of(const ProfilePoint& p) {
  if (p.kernel == "gemm") return p.param("layer") ? "gemm/" + param_or(p, "layer") : std::string("gemm");
  return p.variant;
}

// Times a row counts in one layer's non-attention sum (0: not in the sum).
double layer_weight(const ProfilePoint& p) {
  if (p.kernel == "gemm") return 1;
  if (p.variant == "embedding") return 0;      // once per iteration
  if (p.variant == "residual_add") return 2;   // one before each norm
  return 1;
}

void add_rows(CrossvalResult& out, const std::string& experiment, const std::map<std::string, Pairs>& parts) {
  for (const auto& [part, pairs] : parts) {
    if (pairs.meas.empty()) continue;
    CrossvalRow r{experiment, part, relative_error(pairs.pred, pairs.meas)};
    if (part == "layer_sum") r.target_median = 0.05, r.target_p90 = 0.10;
    out.rows.push_back(r);
  }
}

// Fits the rows `keep` accepts and predicts the rows `held` selects; per part
// (and per-layer sums by model, TP and tokens when `layer_sums`).
void experiment(const ProfileTable& t, const std::string& name, const KernelFits::RowFilter& keep,
                const KernelFits::RowFilter& held, bool layer_sums, CrossvalResult& out) {
  const KernelFits fits = KernelFits::fit(t, keep);
  std::map<std::string, Pairs> parts;
  std::map<std::string, std::pair<double, double>> sums;  // model/tp/m → (pred, meas)
  std::map<std::string, std::set<std::string>> gemms;     // GEMM layers in each sum
  std::size_t missing = 0;
  for (const auto& p : t.points()) {
    if (!held(p)) continue;
    const auto pred = fits.predict(p);
    if (!pred) {
      ++missing;
      continue;
    }
    parts[p.kernel == "decode" || p.kernel == "prefill" || p.kernel == "allreduce" ? p.kernel : part_of(p)].add(
        *pred, p.median_us);
    if (layer_sums && per_op(p) && p.param("model")) {
      const std::string key = fmt::format("{}/{}/{}", param_or(p, "model"), param_or(p, "tp"), p.m);
      auto& s = sums[key];
      if (p.kernel == "gemm") gemms[key].insert(param_or(p, "layer"));
      s.first += layer_weight(p) * *pred;
      s.second += layer_weight(p) * p.median_us;
    }
  }
  for (const auto& [key, s] : sums)
    if (gemms[key].size() == 4) parts["layer_sum"].add(s.first, s.second);  // the layer's four GEMMs
  if (missing) out.notes.push_back(fmt::format("{}: {} held-out rows had no fit to predict them", name, missing));
  add_rows(out, name, parts);
}

}  // namespace

std::string CrossvalRow::target_text() const {
  std::string s = fmt::format("median <= {:.0f}%", 100 * target_median);
  if (target_p90 > 0) s += fmt::format(", p90 <= {:.0f}%", 100 * target_p90);
  return s + (meets_target() ? ": ok" : ": MISSED");
}

CrossvalResult crossval_profile(const ProfileTable& t) {
  CrossvalResult out;
  std::set<std::string> models, tps;
  std::set<HeadShape> shapes;
  bool small_tokens = false, big_tokens = false, allreduce = false;
  for (const auto& p : t.points()) {
    if (per_op(p)) {
      if (auto m = p.param("model")) models.insert(*m);
      if (auto tp = p.param("tp")) tps.insert(*tp);
      small_tokens = small_tokens || p.m <= 1024;
      big_tokens = big_tokens || p.m == 4096;
    }
    if ((p.kernel == "decode" || p.kernel == "prefill") && p.heads > 0) shapes.insert({p.heads, p.kv_heads, p.head_dim});
    allreduce = allreduce || p.kernel == "allreduce";
  }
  auto only_ops = [](const ProfilePoint& p) { return per_op(p); };

  // Leave one model out: every fold's rows pooled, then one error per part.
  if (models.size() >= 2) {
    std::map<std::string, Pairs> pooled;  // every fold's held-out rows pooled, one error per part
    for (const auto& model : models) {
      const KernelFits fits =
          KernelFits::fit(t, [&](const ProfilePoint& p) { return only_ops(p) && param_or(p, "model") != model; });
      std::map<std::string, std::pair<double, double>> sums;
      std::map<std::string, std::set<std::string>> gemms;  // GEMM layers in each sum
      for (const auto& p : t.points()) {
        if (!only_ops(p) || param_or(p, "model") != model) continue;
        const auto pred = fits.predict(p);
        if (!pred) continue;
        pooled[part_of(p)].add(*pred, p.median_us);
        const std::string key = fmt::format("{}/{}", param_or(p, "tp"), p.m);
        if (p.kernel == "gemm") gemms[key].insert(param_or(p, "layer"));
        auto& s = sums[key];
        s.first += layer_weight(p) * *pred;
        s.second += layer_weight(p) * p.median_us;
      }
      for (const auto& [key, s] : sums) {
        if (gemms[key].size() < 4) continue;  // a per-layer sum needs the layer's four GEMMs
        pooled["layer_sum"].add(s.first, s.second);
        pooled["layer_sum/" + model].add(s.first, s.second);
      }
    }
    add_rows(out, "model-out", pooled);
    for (auto& r : out.rows)
      if (r.part.starts_with("layer_sum/")) r.target_median = 0.05, r.target_p90 = 0.10;
  }
  if (tps.count("1") && tps.size() >= 2)
    experiment(
        t, "tp", [&](const ProfilePoint& p) { return only_ops(p) && param_or(p, "tp") == "1"; },
        [&](const ProfilePoint& p) { return only_ops(p) && param_or(p, "tp") != "1" && !param_or(p, "tp").empty(); },
        true, out);
  if (small_tokens && big_tokens)
    experiment(
        t, "tokens", [&](const ProfilePoint& p) { return only_ops(p) && p.m <= 1024; },
        [&](const ProfilePoint& p) { return only_ops(p) && p.m == 4096; }, true, out);
  // GEMM weight shapes of a grid (no model rows): eight folds of shapes, each
  // predicted from the nearest shape of the others (the transport rule).
  std::set<std::pair<std::int64_t, std::int64_t>> grid;
  for (const auto& p : t.points())
    if (p.kernel == "gemm" && !p.param("model")) grid.insert({p.n, p.k});
  if (grid.size() >= 8) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> fold;
    std::size_t i = 0;
    for (const auto& key : grid) fold[key] = i++ % 8;  // sorted by (n, k): neighbours land in different folds
    auto is_grid = [](const ProfilePoint& p) { return p.kernel == "gemm" && !p.param("model"); };
    std::map<std::string, Pairs> pooled;
    for (std::size_t f = 0; f < 8; ++f) {
      const KernelFits fits =
          KernelFits::fit(t, [&](const ProfilePoint& p) { return is_grid(p) && fold.at({p.n, p.k}) != f; });
      for (const auto& p : t.points())
        if (is_grid(p) && fold.at({p.n, p.k}) == f)
          if (const auto pred = fits.predict(p)) pooled["gemm"].add(*pred, p.median_us);
    }
    add_rows(out, "shape-out", pooled);
  }
  if (shapes.size() >= 2) {
    std::map<std::string, Pairs> pooled;
    auto attention = [](const ProfilePoint& p) { return p.kernel == "decode" || p.kernel == "prefill"; };
    for (const auto& h : shapes) {
      auto is_h = [&](const ProfilePoint& p) { return HeadShape{p.heads, p.kv_heads, p.head_dim} == h; };
      const KernelFits fits = KernelFits::fit(t, [&](const ProfilePoint& p) { return attention(p) && !is_h(p); });
      for (const auto& p : t.points())
        if (attention(p) && is_h(p))
          if (const auto pred = fits.predict(p)) pooled[p.kernel].add(*pred, p.median_us);
    }
    add_rows(out, "shape-out", pooled);
  }
  if (allreduce) {
    // Every other message size per GPU count held out, all its rows (every
    // implementation, repeated rows): the cost model prices an all-reduce at the
    // lower envelope of the implementations (kernel_fits.h), so the fit of the
    // other sizes predicts the held-out size's envelope -- the fastest of its
    // measured rows, each implementation's first row as in the fit.
    auto priced = [](const ProfilePoint& p) { return KernelFits::family_of(p) == "allreduce"; };
    std::map<std::string, std::set<double>> sizes;  // gpus → sizes
    for (const auto& p : t.points())
      if (priced(p)) sizes[param_or(p, "gpus")].insert(p.bytes);
    std::set<std::pair<std::string, double>> held;
    for (const auto& [gpus, bytes] : sizes) {
      std::size_t i = 0;
      for (double b : bytes)
        if (i++ % 2 == 1 && i < bytes.size()) held.insert({gpus, b});  // interior sizes only
    }
    auto is_held = [&](const ProfilePoint& p) { return held.count({param_or(p, "gpus"), p.bytes}) > 0; };
    const KernelFits fits = KernelFits::fit(t, [&](const ProfilePoint& p) { return p.kernel == "allreduce" && !is_held(p); });
    struct HeldSize {
      const ProfilePoint* first = nullptr;      // the row whose prediction stands for the size
      std::map<std::string, double> by_variant;  // each implementation's first row, µs
    };
    std::map<std::pair<std::string, double>, HeldSize> measured;  // (gpus, size)
    for (const auto& p : t.points())
      if (priced(p) && is_held(p)) {
        HeldSize& h = measured[{param_or(p, "gpus"), p.bytes}];
        if (!h.first) h.first = &p;
        h.by_variant.emplace(p.variant, p.median_us);
      }
    std::map<std::string, Pairs> pooled;
    for (const auto& [key, h] : measured) {
      double envelope = std::numeric_limits<double>::infinity();
      for (const auto& [variant, us] : h.by_variant) envelope = std::min(envelope, us);
      if (const auto pred = fits.predict(*h.first)) pooled["allreduce/" + key.first + "gpu"].add(*pred, envelope);
    }
    add_rows(out, "size-out", pooled);
  }
  if (out.rows.empty()) out.notes.push_back("the profile has no rows any experiment applies to");
  return out;
}

std::vector<StackDisagreement> stack_disagreement(const ProfileTable& a, const ProfileTable& b) {
  auto key = [](const ProfilePoint& p) -> std::string {
    if (p.kernel == "gemm") return fmt::format("gemm {}x{}x{}", p.m, p.n, p.k);
    if (p.kernel == "decode") return fmt::format("decode b{} ctx{} {}/{}/{}", p.batch, p.ctx, p.heads, p.kv_heads, p.head_dim);
    if (p.kernel == "prefill")
      return fmt::format("prefill b{} q{} ctx{} {}/{}/{}", p.batch, p.q_len, p.ctx, p.heads, p.kv_heads, p.head_dim);
    if (p.kernel == "allreduce") return fmt::format("allreduce {} gpus {} B", param_or(p, "gpus"), p.bytes);
    return "";
  };
  std::map<std::string, const ProfilePoint*> first;  // a's first row per key (repeated runs: the first)
  // A stack's own rows only: a borrowed row is the other stack's measurement.
  auto own = [](const ProfilePoint& p) { return KernelFits::family_of(p) == p.kernel && !p.param("borrowed"); };
  for (const auto& p : a.points())
    if (const std::string k = key(p); !k.empty() && own(p)) first.emplace(k, &p);
  std::map<std::string, std::vector<double>> ratios;
  std::map<std::string, std::pair<double, std::string>> example;
  std::set<std::string> seen;
  for (const auto& p : b.points()) {
    const std::string k = key(p);
    if (k.empty() || !own(p) || !seen.insert(k).second) continue;
    auto it = first.find(k);
    if (it == first.end()) continue;
    const double r = p.median_us / it->second->median_us;
    ratios[p.kernel].push_back(r);
    const double size = p.kernel == "gemm" ? static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) : 0;
    auto& ex = example[p.kernel];
    if (ex.second.empty() || size > ex.first)
      ex = {size, fmt::format("{}: {:.4g} us vs {:.4g} us (x{:.3f})", k, it->second->median_us, p.median_us, r)};
  }
  std::vector<StackDisagreement> out;
  for (auto& entry : ratios) {
    std::vector<double>& v = entry.second;  // a plain reference: lambdas cannot capture structured bindings in clang
    std::sort(v.begin(), v.end());
    auto q = [&v](double f) { return v[static_cast<std::size_t>(f * static_cast<double>(v.size() - 1) + 0.5)]; };
    out.push_back({entry.first, v.size(), q(0.1), q(0.5), q(0.9), example[entry.first].second});
  }
  return out;
}

std::string crossval_csv(const CrossvalResult& r) {
  std::string s = "experiment,part,points,median_rel_err,p90_rel_err,max_rel_err,target_median,target_p90,meets\n";
  for (const auto& e : r.rows)
    s += fmt::format("{},{},{},{:.5f},{:.5f},{:.5f},{},{},{}\n", e.experiment, e.part, e.error.points, e.error.median,
                     e.error.p90, e.error.max, e.target_median, e.target_p90, e.meets_target() ? 1 : 0);
  return s;
}

}  // namespace servesim
