// Joins the per-family profiles of one calibration run into the one profile the cost model
// reads. kernels/scripts/gpu_calibrate.sh runs each kernel family in its own process (a
// sticky CUDA error in one family cannot lose the others), each writing its own CSV; this
// is the step that makes them one file again, and the gate on provenance.
//
// The merge refuses (returns false with a message) when an input does not parse, when the
// inputs disagree on schema_version, columns, gpu_uuid, git_commit or mode, or when the
// commit is not known: a profile must name the exact source that measured it, and the
// device machines copy the tree without .git, so the commit has to be passed in.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace servesim::kernels {

struct ProfileInput {
  std::string name;  // file name, for messages
  std::string text;  // its contents
};

// True when `commit` names a source revision: a 7-40 digit hex SHA, optionally followed
// by "-dirty". Empty, "unknown" and the build-time fallback "... (build)" are not.
bool is_known_commit(const std::string& commit);

// Merges `inputs` (in order) into *merged. Provenance is the first input's, except
// families (the inputs' families joined with ',') and command (the inputs' commands joined
// with " ; "). An input with provenance but no rows (a family that measured nothing)
// contributes its family name only.
//
// sessions = true (`servesim-kernels merge --sessions`): the inputs may come from different
// measuring sessions of one GPU model - other cards (gpu_uuid), commits (git_commit) and
// dates - as when a later session measures a family the first did not have. They must
// still agree on schema_version, mode, gpu, gpu_cc, gpu_sms, nvidia_driver,
// runtime_cuda_version and cublaslt_version (one stack), every commit must be known, and no
// family may come from two inputs. The first input's provenance heads the file; one
// `# session.N=families:..;gpu_uuid:..;git_commit:..;date_utc:..` line per input says
// where each family's rows were measured; an input that is itself such a merge keeps its
// own session lines (renumbered), so a profile can gain a family session by session.
//
// add_variants = true (`merge --sessions --add-variants`, requires sessions): a later input
// may bring a family an earlier input already holds, to add the kernel variants that family
// gained since (e.g. the `ceilings` family's launch rows). Of such an input only the rows
// whose (kernel, variant) pair no earlier input has are kept: a kernel variant is measured
// by one session, never two averaged or mixed. Its session line says so:
// `families:ceilings;added:launch_alone+launch_queued;dropped_rows:5;gpu_uuid:..`. An input
// that adds no new pair is refused.
//
// repeat (`merge [--sessions] --repeat R.csv`): R is a second run, on the same card, of the
// families of one input (the input whose `families` equal R's; none: refused; another
// gpu_uuid: refused). Every row of that input whose point (kernel, variant and every shape
// column up to params) R measured with a median more than kRepeatTolerance away is dropped:
// a measurement that did not repeat is not trusted, and neither run's number is used for
// that point (never two averaged). Rows R did not measure are kept. A median_us cell that is
// not a number > 0, in R or in a row it checks, is refused ("<file>: line N, column
// median_us: ..."). The check is recorded as
// `repeat:<families>;repeat_checked:N;unrepeated_dropped:K` in that input's session line
// (--sessions), else as a `# repeat=<families>;repeat_checked:N;unrepeated_dropped:K` line,
// which a later --sessions merge carries into the input's session line.
inline constexpr double kRepeatTolerance = 0.05;
bool merge_profiles(const std::vector<ProfileInput>& inputs, std::string* merged, std::string* error,
                    bool sessions = false, bool add_variants = false, const ProfileInput* repeat = nullptr);

}  // namespace servesim::kernels
