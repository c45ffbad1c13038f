// SweepSpec: a base scenario plus a grid of overrides, expanded into an
// ordered list of points. Expansion is deterministic (the order of keys in the
// file), so a point's index and id are stable and `--shard I/N` splits a sweep
// reproducibly across a cluster's job array.
//
//   name: qu_sweep
//   base: ../scenarios/multi_tenant_prefix.yaml   # relative to this file
//   set: {workload.requests: 3000}                # applied to every point
//   grid:                                         # cartesian product, first key outermost
//     policy.local.quantum: [16, 256, 4096]
//     seed: [1, 2]
//   zip:                                          # lists of equal length, advanced together
//     policy.local: [vtc, lpm]                    #   (one more dimension of the product)
//     report.w_out: [2, 2]
//   points:                                       # explicit extra points, after the product
//     - {policy.local: vtc}
//   repeat: 5                                     # runs per point, each with its own seed
//
// Every value is YAML and is applied exactly like `--set key=value`.
//
// Repetitions (`repeat: R` or `servesim sweep --repeat R`, 1 <= R <= 1000):
// each point becomes R units of work (runs), run r of point i has index
// i*R + r and id "<point id>-r<rrr>" (R = 1: the point's id, unchanged), and
// runs with repetition_seed(base seed, r), where the base seed is the seed
// the point's configuration resolves to. Shards split runs, not points.
//
// The number of points is counted before the grid is expanded; above
// kMaxSweepPoints load_sweep() fails at once (no allocation per point).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace servesim {

using Override = std::pair<std::string, std::string>;  // dotted key, YAML text of the value

// Most points one sweep file may expand to (grid x zip + points). Split a
// bigger study into several sweep files (docs/sweeps.md).
inline constexpr std::size_t kMaxSweepPoints = 100000;

// Most repetitions per point.
inline constexpr std::size_t kMaxRepeat = 1000;

// One run of a sweep (a point, or one repetition of a point).
struct SweepPoint {
  std::size_t index = 0;             // run index: point index * repeat + repetition
  std::string id;                    // "p0007-1a2b3c4d" (+ "-r002" when repeat > 1): its folder
  std::string point;                 // "p0007-1a2b3c4d": index + hash of the overrides (shared by repetitions)
  std::size_t repetition = 0;        // 0 .. repeat-1
  std::vector<Override> overrides;   // the swept values of this point (not `set`)
};

// The seed of repetition r of a point whose configuration resolves to
// `base`: `base` itself for r = 0 (so repeat 1 reproduces an unrepeated
// sweep), else the top 31 bits of the first number of the splitmix64 stream
// Rng::stream(base, r) — deterministic, and distinct streams for distinct
// (base, r).
std::uint64_t repetition_seed(std::uint64_t base, std::size_t r);

struct SweepSpec {
  std::string file;
  std::string name;
  std::string base;                  // scenario path, resolved against the sweep file
  std::vector<Override> fixed;       // `set:` applied to every point
  std::vector<std::string> swept_keys;  // every key that varies, in first-seen order
  std::size_t repeat = 1;            // runs per point
  std::vector<SweepPoint> points;    // every run, by index (repetitions of a point adjacent)

  // Overrides for one point as `key=value` strings (fixed first, then the point's).
  std::vector<std::string> assignments(const SweepPoint& p) const;

  // 16 hex digits identifying the sweep: its name, base scenario path and
  // every point's index, id and overrides (not `set:`: changing it re-runs
  // the points of the same sweep). An --out folder holds one sweep.
  std::string identity() const;
};

// `repeat` (0 = the file's `repeat:`, default 1) overrides the file's key.
SweepSpec load_sweep(const std::string& path, std::size_t repeat = 0);

// `servesim run SCENARIO --repeat R`: a sweep of one point (no overrides)
// repeated R times, named `name`; `file` and `base` are the scenario.
SweepSpec repeat_sweep(const std::string& scenario, const std::string& name, std::size_t repeat);

// `--shard K/N`: the K-th of N shards, 1 <= K <= N (decimal digits only).
struct Shard {
  std::size_t k = 1, n = 1;
  bool contains(std::size_t index) const { return index % n == k - 1; }
};
// Throws InputError naming `text` on bad syntax or range.
Shard parse_shard(const std::string& text);

// "K/N" → the points with index % N == K-1; empty → all points.
std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, const std::string& shard);

// 64-bit FNV-1a as 16 hex digits (sweep and point identities).
std::string hash_hex(const std::string& text);

}  // namespace servesim
