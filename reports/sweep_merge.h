// Sweep folders and their merge into sweep.csv.
//
// A sweep folder holds points/<id>/ — one run folder per point, plus
// point.yaml (index, id, overrides) and an empty DONE file written last, so a
// point is complete exactly when DONE exists (resume skips those).
// merge_sweeps() reads every complete point of the given folders (shards of
// one sweep, or several sweeps) and writes one sweep.csv: `point`, the swept
// keys (union, first-seen order), then the summary columns (union).
#pragma once
#include <string>
#include <vector>

namespace servesim {

struct MergeResult {
  std::size_t points = 0;
  std::vector<std::string> columns;
};

MergeResult merge_sweeps(const std::vector<std::string>& sweep_dirs, const std::string& out_csv);

}  // namespace servesim
