// NativeWriter: writes requests in the native trace format (CSV or JSONL,
// docs/traces.md), so any workload — generated or transformed — can be saved
// and replayed exactly: `type: trace, format: native` reads back the same
// ids, arrivals (integer ns), lengths, prefix blocks, sessions, parents,
// think times, categories and client names, and the leading
// "# clients: [...]" line restores the client table's order.
//
// Output is buffered and goes through an OutputFile (sim/core/output_file.h):
// every write is checked, rows go to "<path>.tmp", and finish() renames it to
// <path>. A writer destroyed without finish() (an error on the way) leaves no
// file at all, so <path> only ever holds a complete trace.
#pragma once
#include <string>
#include <vector>

#include "sim/core/output_file.h"
#include "sim/core/request_source.h"

namespace servesim {

class NativeWriter {
 public:
  enum class Flavor { kCsv, kJsonl };
  // Flavor by extension: .jsonl/.json -> JSONL, anything else -> CSV.
  static Flavor flavor_for(const std::string& path);

  // Creates "<path>.tmp"; throws InputError if it cannot.
  NativeWriter(std::string path, Flavor flavor);
  NativeWriter(const NativeWriter&) = delete;
  NativeWriter& operator=(const NativeWriter&) = delete;

  // Writes the "# clients:" declaration and the CSV header. Call once,
  // before the first write(), with the client table as it will be when the
  // stream is replayed (every name a request will use).
  void begin(const std::vector<std::string>& client_names);
  // REQUIRES: begin() was called; r.client indexes `names`.
  void write(const RequestSpec& r, const std::vector<std::string>& names);
  // Appends the bytes of the file `rows` (rows staged by another writer).
  void append_file(const std::string& rows);
  // Flushes, closes and renames into place; throws InputError on a write error.
  void finish();

  std::int64_t rows() const { return rows_; }

 private:
  void flush();

  std::string path_;
  Flavor flavor_;
  OutputFile out_;
  std::string buf_;
  std::int64_t rows_ = 0;
};

// Writes every request of `source` to `path` (format by extension) and
// returns the count. Rows are staged in "<path>.rows" and copied after a
// "# clients:" line listing the final client table (sources may register
// names lazily, so the table is only complete at the end of the stream); the
// staged file is removed whether or not the write succeeds, and on an error
// <path> is not created (nor is a previous <path> replaced).
std::int64_t write_native_trace(RequestSource& source, const ClientTable& clients, const std::string& path);

}  // namespace servesim
