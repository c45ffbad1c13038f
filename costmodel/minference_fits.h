// MInference's fitting side (method_fits.h; its registry entry is
// minference_method() in minference_pricer.cc): the features its kernels are
// modelled against, its fits and their prediction of a profile row.
//
// Kernels: minf_estimate, minf_index, minf_attention (variant = pattern name,
// param data = structured | ...; param tiles = the visited area), fitted;
// minf_e2e and minf_dense_prefill (the dense baseline, priced by the shared
// fa2 prefill fit) predicted only. Fit forms (per layer and GPU, µs):
//   estimate, index  t0 + per-type terms (vs: a·n·H [+ b·n·H·lines];
//                    bs: a·n·H + b·(n/64)²·H), one fit for all patterns
//   attention        t0 + a·rows·H + c·tiles, one fit for all patterns (one
//                    kernel), area-proportional; tiles per head = a causal band
//                    of fitted width per pattern and data
#pragma once
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "costmodel/feature_fit.h"
#include "costmodel/kernel_features.h"
#include "costmodel/method_fits.h"

namespace servesim {

// ---- MInference (one prompt span n; all heads on one pattern) ----
// Visited 64x64 tiles per head of an n-token prompt whose pattern touches
// `width` tiles per 64-row block: Σ_{rb < n/64} min(rb + 1, width) (continuous
// in n). Every pattern of the search space has a bounded width (sink + window,
// top-k lines, top-k blocks), so area grows linearly once n/64 > width.
inline double minf_band_tiles(double n, double width) {
  const double nb = n / 64.0;
  if (nb <= width) return nb * (nb + 1) / 2;
  return width * (width + 1) / 2 + (nb - width) * width;
}
// Type ("vs", "bs", "ashape") and selected lines of a pattern name of the bench
// (vs_<verticals>_<slashes>, bs_<blocks>, ashape_<sink>_<window>).
struct MinfPatternInfo {
  std::string type;
  double lines = 0;  // vs: verticals + slashes; bs: blocks per row block
};
inline MinfPatternInfo minf_pattern_info(const std::string& name) {
  MinfPatternInfo info;
  info.type = name.substr(0, name.find('_'));
  if (info.type == "ashape") return info;
  std::size_t pos = name.find('_');
  while (pos != std::string::npos) {
    const std::size_t next = name.find('_', pos + 1);
    info.lines += std::atof(name.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1).c_str());
    pos = next;
  }
  return info;
}
// Estimate and index: one fit over all patterns, so that a pattern type with
// few measured lengths shares the launch cost; each type has its own per-token
// terms (vs: the last-64-query logits and line top-k, linear in n; bs: mean
// pooling linear in n plus (n/64)² block logits and their top-k).
inline const std::vector<std::string> kMinfEstimateNames = {"1", "n_heads_vs", "n_heads_bs", "block_pairs_bs"};
inline std::array<double, 4> minf_estimate_features(const HeadShape& h, double n, const MinfPatternInfo& p) {
  const auto hh = static_cast<double>(h.heads);
  const double vs = p.type == "vs" ? 1.0 : 0.0, bs = p.type == "bs" ? 1.0 : 0.0;
  return {1.0, vs * n * hh, bs * n * hh, bs * (n / 64) * (n / 64) * hh};
}
inline const std::vector<std::string> kMinfIndexNames = {"1", "n_heads_vs", "n_heads_lines_vs", "n_heads_bs",
                                                         "block_pairs_bs"};
inline std::array<double, 5> minf_index_features(const HeadShape& h, double n, const MinfPatternInfo& p) {
  const auto hh = static_cast<double>(h.heads);
  const double vs = p.type == "vs" ? 1.0 : 0.0, bs = p.type == "bs" ? 1.0 : 0.0;
  return {1.0, vs * n * hh, vs * n * hh * p.lines / 1000, bs * n * hh, bs * (n / 64) * (n / 64) * hh};
}
inline const std::vector<std::string> kMinfAttentionNames = {"1", "n_heads", "tiles"};
// rows: query rows computed; tiles: 64x64 tiles visited over all heads.
inline std::array<double, 3> minf_attention_features(const HeadShape& h, double rows, double tiles) {
  return {1.0, rows * static_cast<double>(h.heads), tiles};
}

// A MInference pattern: its own area; stage fits shared by every pattern.
struct MinfFits {
  HeadShape shape;
  MinfPatternInfo info;          // type and selected lines (estimate/index features)
  double band_width = 0;         // fitted tiles per row block (minf_band_tiles); 0 = none
  RelativeError area_residuals;  // of the band against the measured tiles
  FeatureFit estimate, index, attention;  // estimate/index empty for static patterns (A-shape)
};

class MinferenceMethodFits final : public MethodFits {
 public:
  std::map<std::string, MinfFits> patterns;  // by "pattern/data" (minf_key)

  std::optional<double> predict(const ProfilePoint& p, const KernelFits& all) const override;
  void summarize(std::vector<FitSummaryRow>& out) const override;
};

// Key of a MInference row: "<pattern>/<data>" (data defaults to structured).
std::string minf_key(const ProfilePoint& p);

// The MInference fits of a profile (empty when it has no minf rows).
const MinferenceMethodFits& minference_fits(const KernelFits& fits);

// The registry entry's fitting part.
MethodFitting minference_fitting();

}  // namespace servesim
