// Wave-quantized roofline guides for GEMM curves and their selection by
// leave-one-out interpolation error; see gemm_guide.h.
#include "costmodel/gemm_guide.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "costmodel/monotone_curve.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr double kBestTile = -1;  // tile_m value: the tile of kTiles with the fewest charged FLOPs
constexpr std::pair<double, double> kTiles[] = {{64, 128}, {128, 128}, {128, 256}, {256, 128}};

double gemm_bytes(double m, double n, double k) { return 2.0 * (m * k + n * k + m * n); }  // bf16 A, B, C

// FLOPs the compute term charges at m: exact, whole tile rows, or whole waves
// of whole tiles (GemmGuide::tile_m/tile_n).
double charged_flops(double m, double n, double k, double tm, double tn, int sms) {
  if (tm == 0) return 2.0 * m * n * k;
  auto waves = [&](double a, double b) {
    return std::ceil(std::ceil(m / a) * std::ceil(n / b) / sms) * sms * 2.0 * a * b * k;
  };
  if (tm == kBestTile) {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [a, b] : kTiles) best = std::min(best, waves(a, b));
    return best;
  }
  if (tn == 0) return 2.0 * std::ceil(m / tm) * tm * n * k;  // whole tile rows, no waves
  return waves(tm, tn);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// t = t0 + bytes/BW over the smallest-M point of every shape (least squares;
// t0 clamped at 0, BW from the median ratio when the line is unusable).
std::pair<double, double> fit_memory_line(const GemmPoints& points) {
  std::vector<double> xs, ys;
  for (const auto& [key, by_m] : points) {
    const auto& [m, t] = *by_m.begin();
    xs.push_back(gemm_bytes(static_cast<double>(m), static_cast<double>(key.first), static_cast<double>(key.second)));
    ys.push_back(t);
  }
  const double n = static_cast<double>(xs.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) sx += xs[i], sy += ys[i], sxx += xs[i] * xs[i], sxy += xs[i] * ys[i];
  const double den = n * sxx - sx * sx;
  double slope = den > 0 ? (n * sxy - sx * sy) / den : 0, t0 = den > 0 ? (sy - slope * sx) / n : 0;
  if (!(slope > 0) || t0 < 0) {
    t0 = 0;
    std::vector<double> r;
    for (std::size_t i = 0; i < xs.size(); ++i) r.push_back(ys[i] / xs[i]);
    slope = median(r);
  }
  return {t0, 1.0 / (slope * 1e3)};  // µs per byte → GB/s
}

}  // namespace

double GemmGuide::operator()(double m) const {
  const double nd = static_cast<double>(n), kd = static_cast<double>(k);
  const double memory = gemm_bytes(m, nd, kd) / (bw_gbps * 1e3);
  const double compute = charged_flops(m, nd, kd, tile_m, tile_n, sms) / (tflops * 1e6);
  return t0_us + std::max(memory, compute);
}

GemmGuide fit_gemm_guide(std::int64_t n, std::int64_t k, double tile_m, double tile_n, double t0_us, double bw_gbps,
                         int sms, double m_top, double t_us) {
  GemmGuide g{n, k, tile_m, tile_n, t0_us, bw_gbps, 0, std::max(sms, 1)};
  const double busy = t_us - t0_us > 0 ? t_us - t0_us : t_us;
  g.tflops = charged_flops(m_top, static_cast<double>(n), static_cast<double>(k), tile_m, tile_n, sms) / (busy * 1e6);
  return g;
}

std::string GemmGuideSelection::describe() const {
  const GemmGuideCandidate& b = best();
  std::string others;
  for (const auto& c : candidates)
    if (&c != &b) others += fmt::format("{}{} {:.1f}%", others.empty() ? "" : ", ", c.name, 100 * c.loo.p90);
  if (b.linear)
    return fmt::format("between measured M: linear (leave-one-out p90 {:.1f}% over {} points; others: {})",
                       100 * b.loo.p90, b.loo.points, others);
  return fmt::format("between measured M: {} guide, t0={:.2f} us, BW={:.0f} GB/s, {} SMs, rate per shape "
                     "(leave-one-out p90 {:.1f}% over {} points; others: {})",
                     b.name, t0_us, bw_gbps, sms, 100 * b.loo.p90, b.loo.points, others);
}

GemmGuideSelection select_gemm_guide(const GemmPoints& points, int sms) {
  SIM_CHECK(sms >= 0, "select_gemm_guide: sms {} < 0", sms);
  GemmGuideSelection sel;
  sel.sms = sms;
  if (points.empty()) {
    sel.candidates.push_back({"linear", true, 0, 0, {}});
    return sel;
  }
  std::tie(sel.t0_us, sel.bw_gbps) = fit_memory_line(points);

  std::vector<GemmGuideCandidate>& cands = sel.candidates;
  cands = {{"linear", true, 0, 0, {}}, {"roofline", false, 0, 0, {}}};
  for (double g : {64.0, 128.0, 256.0}) cands.push_back({fmt::format("rows of {:g}", g), false, g, 0, {}});
  if (sms > 0) {  // wave quantization needs the SM count
    for (const auto& [tm, tn] : kTiles) cands.push_back({fmt::format("waves {:g}x{:g}", tm, tn), false, tm, tn, {}});
    cands.push_back({"waves best tile", false, kBestTile, 0, {}});
  }

  auto guides_for = [&](const GemmGuideCandidate& c) {
    std::map<std::pair<std::int64_t, std::int64_t>, GemmGuide> out;
    if (c.linear) return out;
    for (const auto& [key, by_m] : points) {
      const auto& [m, t] = *by_m.rbegin();  // the rate at the largest measured M
      out.emplace(key, fit_gemm_guide(key.first, key.second, c.tile_m, c.tile_n, sel.t0_us, sel.bw_gbps, sms,
                                      static_cast<double>(m), t));
    }
    return out;
  };

  // Per shape with at least 3 points: its points and what leaving each held-out point
  // out does to the fit (the guide does not enter it), once for every candidate.
  // At most kMaxHeldOut interior points per shape, evenly spaced: every LOO refit is
  // O(points), so a densely measured shape (imported tables: ~130 M values) costs
  // O(points) refits instead of O(points²) work; sparser shapes hold out every point.
  constexpr std::size_t kMaxHeldOut = 64;
  struct Shape {
    std::pair<std::int64_t, std::int64_t> key;
    std::vector<double> xs, ys;
    std::size_t step;
    std::vector<std::pair<double, double>> neighbours;
  };
  std::vector<Shape> shapes;
  std::vector<double> measured;  // the held-out points' times, in the order of the predictions
  for (const auto& [key, by_m] : points) {
    if (by_m.size() < 3) continue;
    Shape& sh = shapes.emplace_back();
    sh.key = key;
    for (const auto& [m, t] : by_m) sh.xs.push_back(static_cast<double>(m)), sh.ys.push_back(t);
    sh.step = (sh.xs.size() - 2 + kMaxHeldOut - 1) / kMaxHeldOut;
    sh.neighbours = monotone_loo_neighbours(sh.ys, sh.step);
    for (std::size_t i = 1; i + 1 < sh.xs.size(); i += sh.step) measured.push_back(sh.ys[i]);
  }
  for (auto& c : cands) {
    const auto guides = guides_for(c);
    std::vector<double> predicted, gx;
    for (const Shape& sh : shapes) {
      gx.clear();
      if (!c.linear) {
        const GemmGuide& g = guides.at(sh.key);
        for (double x : sh.xs) gx.push_back(g(x));
      }
      const std::vector<double> loo = monotone_loo_predictions(sh.xs, sh.neighbours, gx, sh.step);
      predicted.insert(predicted.end(), loo.begin(), loo.end());
    }
    c.loo = relative_error(predicted, measured);
  }
  for (std::size_t i = 1; i < cands.size(); ++i)
    if (cands[i].loo.p90 < cands[sel.chosen].loo.p90) sel.chosen = i;
  sel.guides = guides_for(sel.best());
  return sel;
}

}  // namespace servesim
