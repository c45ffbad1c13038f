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
//
// Every value is YAML and is applied exactly like `--set key=value`.
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

struct SweepPoint {
  std::size_t index = 0;
  std::string id;                    // "p0007-1a2b3c4d": index + hash of the overrides
  std::vector<Override> overrides;   // the swept values of this point (not `set`)
};

struct SweepSpec {
  std::string file;
  std::string name;
  std::string base;                  // scenario path, resolved against the sweep file
  std::vector<Override> fixed;       // `set:` applied to every point
  std::vector<std::string> swept_keys;  // every key that varies, in first-seen order
  std::vector<SweepPoint> points;

  // Overrides for one point as `key=value` strings (fixed first, then the point's).
  std::vector<std::string> assignments(const SweepPoint& p) const;

  // 16 hex digits identifying the sweep: its name, base scenario path and
  // every point's index, id and overrides (not `set:`: changing it re-runs
  // the points of the same sweep). An --out folder holds one sweep.
  std::string identity() const;
};

SweepSpec load_sweep(const std::string& path);

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
