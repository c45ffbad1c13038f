// run_sweep: runs the points of a SweepSpec on `jobs` threads, each point an
// independent `servesim run` of the base scenario with the point's overrides,
// into <out>/points/<id>/. Results do not depend on `jobs` (points share no
// state; every point is seeded by its own config). Points whose DONE marker
// exists are skipped (resume). Then merges the sweep's points into
// <out>/sweep.csv.
#pragma once
#include <string>
#include <vector>

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
  std::vector<std::string> failures;   // "<id>: message"
  std::size_t merged = 0;
};

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& options);

}  // namespace servesim
