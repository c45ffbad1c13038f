// run_sweep: runs the points of a SweepSpec on `jobs` threads, each point an
// independent `servesim run` of the base scenario with the point's overrides,
// into <out>/points/<id>/. Results do not depend on `jobs` (points share no
// state; every point is seeded by its own config). Then merges the sweep's
// points into <out>/sweep.csv (written only when complete).
//
// The folder: locked for the whole sweep (a second process into it fails at
// once); sweep_meta.yaml names the sweep it holds, and a folder holding
// another sweep or another shard is refused (InputError naming it). Resume: a
// point is skipped exactly when its DONE marker exists and its point.yaml
// records the same config_key — the hash of its fully resolved configuration
// (base scenario, `set:`, --set and the point's values, defaults filled in)
// and of the size and mtime of every file that configuration names (the
// trace, profiles). Any other point is re-run from scratch.
#pragma once
#include <string>
#include <vector>

#include "configs/scenario_config.h"
#include "configs/sweep_spec.h"

namespace servesim {

struct SweepOptions {
  std::string out_dir;                 // default runs/sweeps/<name>
  int jobs = 1;
  std::string shard;                   // "I/N" or empty
  std::vector<std::string> extra_sets; // --set applied to every point (after the sweep's own)
  bool progress = true;                // one line per finished point on stderr
};

struct SweepOutcome {
  std::string out_dir;
  std::size_t selected = 0, skipped = 0, ran = 0;
  std::vector<std::string> failures;   // "<id>: message", sorted
  std::size_t merged = 0;
  std::vector<std::string> keys;       // config_key of each selected point, in order
};

// A point's config_key (see above): 16 hex digits.
std::string point_config_key(const ScenarioConfig& config);

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& options);

}  // namespace servesim
