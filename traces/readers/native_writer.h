// NativeWriter: writes requests in the native trace format (CSV or JSONL,
// docs/traces.md), so any workload — generated or transformed — can be saved
// and replayed exactly: `type: trace, format: native` reads back the same
// ids, arrivals (integer ns), lengths, prefix blocks, sessions, parents,
// think times, categories and client names, and the leading
// "# clients: [...]" line restores the client table's order.
//
// Output is buffered; finish() flushes and closes (the destructor does too,
// but cannot report errors).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "sim/core/request_source.h"

namespace servesim {

class NativeWriter {
 public:
  enum class Flavor { kCsv, kJsonl };
  // Flavor by extension: .jsonl/.json -> JSONL, anything else -> CSV.
  static Flavor flavor_for(const std::string& path);

  // Opens `path` for writing; throws InputError if it cannot.
  NativeWriter(std::string path, Flavor flavor);
  ~NativeWriter();
  NativeWriter(const NativeWriter&) = delete;
  NativeWriter& operator=(const NativeWriter&) = delete;

  // Writes the "# clients:" declaration and the CSV header. Call once,
  // before the first write(), with the client table as it will be when the
  // stream is replayed (every name a request will use).
  void begin(const std::vector<std::string>& client_names);
  // REQUIRES: begin() was called; r.client indexes `names`.
  void write(const RequestSpec& r, const std::vector<std::string>& names);
  // Flushes and closes; throws InputError on a write error.
  void finish();

  std::int64_t rows() const { return rows_; }

 private:
  void flush();

  std::string path_;
  Flavor flavor_;
  std::FILE* file_ = nullptr;
  std::string buf_;
  std::int64_t rows_ = 0;
};

// Writes every request of `source` to `path` (format by extension) and
// returns the count. Rows are staged in "<path>.rows.tmp" and copied after a
// "# clients:" line listing the final client table (sources may register
// names lazily, so the table is only complete at the end of the stream).
std::int64_t write_native_trace(RequestSource& source, const ClientTable& clients, const std::string& path);

}  // namespace servesim
