// Sweep folders and their merge into sweep.csv.
//
// A sweep folder holds sweep_meta.yaml (which sweep, which shard, every point
// id: SweepMeta) and points/<id>/ — one run folder per point, plus point.yaml
// (index, id, overrides, config_key) written before the run; the run writes
// its DONE marker last, so a point is complete exactly when DONE exists.
//
// merge_sweeps() reads every complete run of the given folders and writes
// one sweep.csv, one row per run (a point, or one repetition of a point):
// `point` (the point's id, shared by its repetitions), `repetition` (0-based),
// `seed` (the seed the run used), `run` (its folder under points/; the point's
// id when the sweep has no repetitions), then the swept values (union), then
// the summary columns (union); rows in run order, columns in first-seen order
// over the rows in run order, so merging the shards of a sweep gives the same
// bytes as the unsharded sweep. Swept keys are written in snake_case
// (swept_column(): `policy.local.quantum` -> `policy_local_quantum`), and a
// map value is expanded into one column per entry (`policy.local: {name:
// dlpm, quantum: 512}` -> `policy_local` = dlpm, `policy_local_quantum` =
// 512), never written as YAML text. A summary column of the same name as a
// swept column is not repeated: the swept value is kept (e.g. `policy_local`
// and `seed`). Resume and merge read point.yaml, never these columns. It refuses (InputError naming the folders): folders of
// different sweeps or run with different settings, a whole-sweep folder
// beside others, shards of different N, the same shard twice, a point that
// is not part of its folder's shard, and — unless allow_missing — any point
// of the sweep not found complete (naming them and the missing shards).
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
