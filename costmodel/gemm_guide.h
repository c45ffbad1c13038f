// GemmGuide: the shape a GEMM's time-versus-tokens curve takes *between*
// measured token counts.
//
// The bench measures each weight shape (n, k) at a grid of M (tokens;
// gemm_shapes.h). A straight line between two measured M misses what happens
// in between: the knee where the kernel stops being bound by reading the
// weights and starts being bound by compute, and tile steps (M = 129 costs a
// second row of 128-row tiles; a GEMM whose tiles overflow the SMs by one runs
// a whole extra wave). The guide is a roofline whose compute term is charged
// for whole tiles,
//   g(M) = t0 + max(bytes(M) / BW,  charged(M) / rate),  bytes(M) = 2(Mk + nk + Mn),
// where charged(M) is 2Mnk (plain roofline), 2 ceil(M/G) G n k (whole tile rows of G)
// or waves(M) SMs 2 tm tn k with waves(M) = ceil(ceil(M/tm) ceil(n/tn) / SMs),
// and MonotoneCurve interpolates the measured times in the guide's coordinate
// (monotone_curve.h): measured points are reproduced exactly, and between two
// of them the curve rises where the guide rises. t0 and BW are fitted once per
// profile (the smallest-M point of every shape: t = t0 + bytes/BW), the rate
// per shape (its largest measured M), SMs come from the profile's gpu_sms.
//
// Which form shapes the guide, or whether plain linear interpolation (no guide)
// does better, is not assumed: each candidate is scored by leave-one-out
// interpolation over the profile's own interior points and the best p90 is
// used. So a library whose tiles differ from every candidate falls back to the
// best of them by the profile's own evidence.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/feature_fit.h"

namespace servesim {

struct GemmGuide {
  std::int64_t n = 0, k = 0;
  // Compute charged for: tile_m 0 = exactly 2Mnk (plain roofline); tile_n 0 =
  // whole rows of tile_m (M rounded up); both > 0 = whole waves of tm x tn
  // tiles; tile_m -1 = the tile of {64x128, 128x128, 128x256, 256x128} that
  // charges the fewest FLOPs.
  double tile_m = 0, tile_n = 0;
  double t0_us = 0, bw_gbps = 0, tflops = 0;
  int sms = 1;
  // Non-decreasing in m.
  double operator()(double m) const;
};

// A guide for shape (n, k) with the given tile form, t0, BW and SMs, its rate
// set so that the compute term alone (less t0) matches the measured time t_us
// at the largest measured M (m_top).
GemmGuide fit_gemm_guide(std::int64_t n, std::int64_t k, double tile_m, double tile_n, double t0_us, double bw_gbps,
                         int sms, double m_top, double t_us);

// Measured medians (µs) of every weight shape, by (n, k) and then M.
using GemmPoints = std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::int64_t, double>>;

struct GemmGuideCandidate {
  std::string name;        // "linear", "roofline", "waves 128x128", ...
  bool linear = false;     // no guide: straight lines between measured M
  double tile_m = 0, tile_n = 0;
  RelativeError loo;       // leave-one-out interpolation error over interior points
};

struct GemmGuideSelection {
  std::vector<GemmGuideCandidate> candidates;  // in the order tried
  std::size_t chosen = 0;                       // index into candidates
  double t0_us = 0, bw_gbps = 0;               // shared by every shape
  int sms = 1;
  std::map<std::pair<std::int64_t, std::int64_t>, GemmGuide> guides;  // empty when "linear" won
  const GemmGuideCandidate& best() const { return candidates[chosen]; }
  std::string describe() const;  // one line for fit reports
};

// REQUIRES: every shape has >= 1 point, every time > 0, sms >= 0 (0 = unknown:
// wave-quantized candidates are not tried).
GemmGuideSelection select_gemm_guide(const GemmPoints& points, int sms);

}  // namespace servesim
