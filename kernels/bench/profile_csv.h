// The calibration profile: one CSV file written by `servesim-kernels bench` and read by
// the cost model (costmodel/). The schema is documented in docs/kernels.md; changing a
// column is a schema_version bump.
//
// File layout:
//   # key=value            provenance lines first (format, schema_version, gpu, sms, ...)
//   kernel,variant,...     one header row (kProfileColumns)
//   decode,splitkv,...     one row per measured point
// Shape fields that do not apply to a kernel are left empty (stored as -1 here).
// Text fields never contain ',' '"' or newlines (write_row rejects them), so the file
// is plain comma-separated without quoting.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace servesim::kernels {

inline constexpr int kProfileSchemaVersion = 1;

// Column names in file order.
extern const std::vector<std::string> kProfileColumns;

struct ProfileRow {
  std::string kernel;   // family-level kernel name: decode, prefill, gemm, ceiling, quest_estimate, ...
  std::string variant;  // implementation / sub-case: splitkv, causal, cublaslt, copy_memcpy, ...
  int64_t batch = -1;     // sequences in the batch
  int64_t ctx = -1;       // KV tokens per sequence (ragged batches: mean; exact values in params)
  int64_t q_len = -1;     // new query tokens per sequence (prefill chunk; 1 for decode)
  int64_t prefix = -1;    // cached tokens before the chunk (prefill)
  int64_t heads = -1;     // query heads
  int64_t kv_heads = -1;
  int64_t head_dim = -1;
  int64_t page_size = -1;
  int64_t budget = -1;    // sparse token budget (Quest) or kept entries (top-k)
  int64_t m = -1, n = -1, k = -1;  // GEMM: Y[m][n] = X[m][k] * W[n][k]^T
  std::string params;     // other parameters, "key=value;key=value" (no ',' allowed)
  int reps = 0;           // timed samples behind the statistics
  double median_us = 0, p10_us = 0, p90_us = 0, min_us = 0, max_us = 0;
  double bytes = 0;       // DRAM bytes the kernel must move at least (inputs read once + outputs)
  double flops = 0;       // useful floating-point operations (2 per multiply-add)
  // gbps = bytes / median, tflops = flops / median; computed by the writer.
};

using Provenance = std::vector<std::pair<std::string, std::string>>;

class ProfileWriter {
 public:
  // Writes to `out` (not owned; must outlive the writer).
  explicit ProfileWriter(std::ostream& out) : out_(out) {}

  // REQUIRES: called once, before the first row. Keys/values may not contain newlines.
  void write_provenance(const Provenance& provenance);
  // Writes the header before the first row if not written yet. Throws std::invalid_argument
  // on text fields containing ',', '"' or newlines. Flushes, so a crash keeps finished rows.
  void write_row(const ProfileRow& row);
  int rows_written() const { return rows_; }

 private:
  std::ostream& out_;
  bool header_written_ = false;
  int rows_ = 0;
};

// Parsed form of a profile (used by tests and tools; the cost model has its own reader).
struct ParsedProfile {
  Provenance provenance;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // cells as text, aligned with columns
  std::vector<int> row_lines;                  // each row's 1-based line in the text (for errors)
};

// Parses CSV text written by ProfileWriter. Returns false and sets *error
// ("line N: ...") on malformed input.
bool parse_profile(const std::string& text, ParsedProfile* out, std::string* error);

// A whole cell or argument that is a number > 0 (strtod's forms); false otherwise.
bool parse_positive_number(const std::string& text, double* out);

}  // namespace servesim::kernels
