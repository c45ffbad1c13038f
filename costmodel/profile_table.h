// ProfileTable: a kernel profile CSV written by `servesim-kernels bench`
// (schema in docs/kernels.md, "Profile CSV"), read for the calibrated cost
// model. The cost model never links the kernels; this file is its only contact
// with them.
//
// Layout: `# key=value` provenance lines, one header row, one row per measured
// point. Unknown provenance keys and unknown columns are ignored (forward
// compatible); every column the cost model reads must be present. Empty cells
// mean "not applicable" and are stored as -1.
//
// Errors are InputErrors that name the file, the line and the column
// ("p.csv:12: column 'median_us': expected a number > 0, got 'abc'").
// A table is immutable once loaded.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace servesim {

// One measured row. Times are per launch, microseconds; shapes per layer.
struct ProfilePoint {
  std::string kernel;   // decode, prefill, gemm, ceiling, quest_estimate, minf_attention, ...
  std::string variant;  // splitkv, fa2, cublaslt, kvhead, vs_30_2048, w32, ...
  std::int64_t batch = -1, ctx = -1, q_len = -1, prefix = -1;
  std::int64_t heads = -1, kv_heads = -1, head_dim = -1, page_size = -1, budget = -1;
  std::int64_t m = -1, n = -1, k = -1;
  std::string params;   // "key=value;key=value"
  double median_us = 0, p10_us = 0, p90_us = 0;
  double bytes = 0, flops = 0;
  long line = 0;        // line in the file (for messages)
  int source = -1;      // imported rows: N of the `# source.N=` provenance line (measured_import.h)

  // Value of `key` in params, if present: the rest of the first ';'-separated
  // field whose text before its first '=' is `key`.
  std::optional<std::string> param(std::string_view key) const;
  // Numeric value of `key` in params; `def` when absent. Throws InputError
  // (naming file and line) when present but not a number.
  double param_number(std::string_view key, double def, const std::string& file) const;
};

// A row of family decode_ragged: one of a pair (kernel decode, params dist=...), kept for
// the ragged decode factor only: no fit, grid or knob reads it.
inline bool is_ragged_pair_row(const ProfilePoint& p) { return p.kernel == "decode" && p.param("dist").has_value(); }

// A row of family gemm_dense (params dense=1): one GEMM shape at every M between the grid's
// points. It shapes that shape's curve; statistics across shapes (fit-roofline's GEMM rate,
// the GEMM guide selection) read the grid rows only, so one densely measured shape does not
// outweigh the others.
inline bool is_gemm_dense_row(const ProfilePoint& p) {
  return p.kernel == "gemm" && p.param("dense").value_or("0") == "1";
}

class ProfileTable {
 public:
  // Reads `path`. Throws InputError on a missing file, a wrong format or
  // schema_version, a missing column, or a malformed cell.
  static ProfileTable load(const std::string& path);
  // Parses CSV text; `name` stands for the file in messages.
  static ProfileTable parse(const std::string& text, const std::string& name);

  const std::string& file() const { return file_; }
  const std::vector<std::pair<std::string, std::string>>& provenance() const { return provenance_; }
  // Provenance value, or "" when the key is absent.
  std::string provenance_value(const std::string& key) const;
  // True when the provenance says the rows were generated, not measured
  // (`# synthetic=true`, written by `servesim calibrate synth`).
  bool synthetic() const { return provenance_value("synthetic") == "true"; }
  // One line for reports: gpu, commit, date, mode (and SYNTHETIC when so); for a profile
  // merged from several measuring sessions, their count and the latest date and commit.
  std::string provenance_summary() const;

  const std::vector<ProfilePoint>& points() const { return points_; }
  // Rows of one kernel (and variant, when given).
  std::vector<const ProfilePoint*> rows(const std::string& kernel, const std::string& variant = "") const;

 private:
  class Reader;  // profile_table.cc: reads the lines of a text or file
  std::string file_;
  std::vector<std::pair<std::string, std::string>> provenance_;
  std::vector<ProfilePoint> points_;
};

}  // namespace servesim
