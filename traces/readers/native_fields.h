// The native trace format's field list and the row checks shared by its CSV
// and JSONL readers and its writer (traces/native_writer.h). The format itself is
// specified in docs/traces.md.
#pragma once
#include <map>
#include <unordered_map>

#include "traces/readers/trace_reader.h"

namespace servesim {

// Column order the writer uses (the readers accept any order).
inline constexpr const char* kNativeColumns[] = {
    "id",     "client", "arrival_ns", "prompt_tokens", "output_tokens", "prefix_block_size", "prefix_blocks",
    "session", "turn",  "parents",    "dependents", "think_time_ns", "category"};

// Cross-field checks of one row (prefix blocks vs prompt); throws RowError.
void check_native_row(const TraceRow& row);

// Checks the dependency links of a native file as rows stream by: each parent
// must be an earlier row that declared `dependents` > 0, and no parent may be
// named by more rows than it declared. Memory: the parents whose dependents
// have not all appeared yet (in-flight sessions/workflows), not every id.
class ParentTracker {
 public:
  void check(const TraceRow& row);  // throws RowError

 private:
  std::unordered_map<RequestId, std::int32_t> open_;  // parent id -> dependents still to come
};

// Rejects a request id that an earlier row of the same file already used,
// naming both lines. Memory: one entry per run of consecutive ids (a written
// native trace, ids 0..N-1 on consecutive lines, is one entry), at worst one
// per row. check() does not record; add() records a row that was accepted.
class IdTracker {
 public:
  void check(const TraceRow& row) const;  // throws RowError{"id", ...}
  void add(const TraceRow& row);

 private:
  struct Run {
    RequestId hi;          // ids lo..hi (the map key is lo)
    long first_line, last_line;
    bool lines_step = true;  // the run's rows sit on consecutive lines
  };
  std::map<RequestId, Run> runs_;
};

// Every check of a parsed native row, as both native readers run them: the
// cross-field checks, a repeated id, the dependency links; then records the id.
class NativeRowChecks {
 public:
  void check(const TraceRow& row) {  // throws RowError
    check_native_row(row);
    ids_.check(row);
    parents_.check(row);
    ids_.add(row);
  }

 private:
  ParentTracker parents_;
  IdTracker ids_;
};

}  // namespace servesim
