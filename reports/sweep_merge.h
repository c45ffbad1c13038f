// Sweep folders (sweep_meta.yaml + points/<id>/, a point complete when its DONE
// exists) and merge_sweeps(), which joins complete runs into one sweep.csv —
// columns, order and the byte identity of merged shards: docs/sweeps.md; what
// it refuses (InputError naming the folders): docs/failure.md, "What merge checks".
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace servesim {

inline constexpr const char* kSweepMetaFile = "sweep_meta.yaml";

struct SweepMeta {
  std::string name;      // the sweep's name
  std::string file;      // the sweep file it was run from (information)
  std::string identity;  // SweepSpec::identity()
  std::string settings;  // hash of the sweep's `set:` block and --set overrides
  std::string shard;     // "K/N", or "all"
  std::vector<std::string> ids;  // every point of the sweep, by index
};

// Atomic (OutputFile). read: nullopt when the folder has none; InputError
// naming the file when it is unreadable.
void write_sweep_meta(const std::string& dir, const SweepMeta& meta);
std::optional<SweepMeta> read_sweep_meta(const std::string& dir);

struct MergeOptions {
  bool allow_missing = false;  // write the complete points even if some are missing
};

struct MergeResult {
  std::size_t points = 0;
  std::vector<std::string> columns;
  std::vector<std::string> missing;  // ids of the sweep's points not found complete
};

// `policy.local.quantum` -> `policy_local_quantum` (dots, dashes, spaces to _).
std::string swept_column(const std::string& key);

MergeResult merge_sweeps(const std::vector<std::string>& sweep_dirs, const std::string& out_csv,
                         const MergeOptions& options = {});

}  // namespace servesim
