// TraceReader: streams the rows of one trace file (in any format of the
// registry, trace_formats()) as TraceRows, one at a time, with no transformation
// applied: arrival is the trace's own clock in ns, ids are the trace's own (or
// the 0-based data-row ordinal when the format has none).
//
// Bad input: every problem is an InputError "file:line: field 'X': what was
// expected, got 'v'". With skip_bad_rows a bad row is skipped and counted
// instead (header problems and unreadable files stay fatal). A file with no
// data row at all (empty, comments only, or a header alone) is an error.
// Timestamps of independent rows must not decrease: that is an error (or a
// skipped row) unless the options ask for an in-memory sort (see open_trace()).
//
// Formats are a registry (trace_formats(): name, detection rule, reader
// factory), documented in docs/traces.md. Adding a format is one reader file,
// its make_<format>_reader() declaration here, one registry entry in
// trace_reader.cc, and its tests (docs/architecture.md, "Add a trace format").
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sim/core/request.h"
#include "traces/readers/burstgpt_options.h"
#include "traces/readers/line_reader.h"

namespace servesim {

class TraceReader;
struct TraceReadOptions;

// One trace format of the registry.
struct TraceFormatType {
  std::string name;  // as written in `format:` and reported by `trace stats`
  // Whether a file is in this format, from its first non-blank, non-comment
  // line (BOM removed); `json` is true for .jsonl/.json paths and lines
  // starting with '{'. Formats are tried in registry order.
  std::function<bool(std::string_view first, bool json)> detect;
  std::function<std::unique_ptr<TraceReader>(std::unique_ptr<LineReader>, const TraceReadOptions&)> make;
  bool wall_clock = false;  // timestamps are dates: time_origin auto rebases to the first row
  bool native = false;      // our own format: a written trace that must replay exactly (dropped rows tracked)
};

// Every format, in detection order.
const std::vector<TraceFormatType>& trace_formats();
// The registry entry of a format name (not "auto"); throws InputError listing the names.
const TraceFormatType& trace_format(const std::string& name);
// The format names a user writes, from the registry: every non-native format, then
// "native" (native_csv or native_jsonl by extension), comma-separated. Help texts and
// messages use this instead of a typed list.
std::string trace_format_choices();

// Parses a `format:` value: "auto", a registered name, or "native" (native_csv
// or native_jsonl by the extension of `path`). Throws InputError listing the
// valid names.
std::string parse_format(const std::string& name, const std::string& path);

struct TraceReadOptions {
  std::string format = "auto";  // "auto" or a registered format name (parse_format())
  bool skip_bad_rows = false;  // skip and count bad rows instead of failing
  bool sort = false;           // load all rows and stable-sort by arrival (not streaming)
  // A format's own options, declared beside its reader; the others ignore them.
  BurstGptOptions burstgpt{};
};

// One parsed row. Strings and vectors are reused between rows (no allocation
// once warm); move spec out to keep it.
struct TraceRow {
  RequestSpec spec;    // client is left 0: client naming happens downstream
  std::string client;  // client name from the trace; empty when it has none
  std::string group;   // format-specific class ("GPT-4/API log" for BurstGPT); may be empty
  long line = 0;       // source line, for messages
};

// Thrown by a format's parse() for a bad row; the base adds file and line.
struct RowError {
  std::string field;
  std::string message;
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;

  // Next data row; false at end of file. Throws InputError on bad input.
  bool next(TraceRow& row);

  const std::string& format() const { return format_; }  // a registered format name
  const std::string& path() const { return lines_->path(); }
  virtual bool has_clients() const { return false; }
  virtual bool has_prefix() const { return false; }
  virtual bool has_groups() const { return false; }
  virtual bool has_ids() const { return false; }

  // Client names a native file declares up front ("# clients: [...]"), in
  // table order; empty for other formats. Complete once a data row was read.
  const std::vector<std::string>& declared_clients() const { return declared_clients_; }

  std::int64_t rows_read() const { return rows_read_; }
  std::int64_t rows_skipped() const { return rows_skipped_; }      // bad rows (skip_bad_rows)
  std::int64_t rows_dropped() const { return rows_dropped_; }      // by rule (BurstGPT failed rows)
  const std::string& first_skip_reason() const { return first_skip_reason_; }

 protected:
  TraceReader(std::unique_ptr<LineReader> lines, std::string format, const TraceReadOptions& opt);

  // Parses one non-blank data line into `row` (spec fields, client, group).
  // Throws RowError for a bad row; returns false to drop the row by rule.
  virtual bool parse(std::string_view line, TraceRow& row) = 0;

  // Reads the header line (first non-blank, non-comment line); throws InputError if none.
  std::string_view read_header();
  // Native formats: lines starting with '#' are comments; "# clients: [..]"
  // (a JSON array of strings) declares the client table. Call before read_header().
  void allow_comments() { comments_ = true; }
  [[noreturn]] void header_error(const std::string& msg) const;

  LineReader& lines() { return *lines_; }
  const TraceReadOptions& options() const { return opt_; }

 private:
  bool next_unchecked(TraceRow& row);
  bool handle_comment(std::string_view line);  // true if `line` was a comment

  bool comments_ = false;
  bool header_read_ = false;
  long header_line_ = 0;
  std::vector<std::string> declared_clients_;

  std::unique_ptr<LineReader> lines_;
  std::string format_;
  TraceReadOptions opt_;
  std::int64_t ordinal_ = 0;  // data rows parsed so far (the id of id-less rows)
  std::int64_t rows_read_ = 0, rows_skipped_ = 0, rows_dropped_ = 0;
  std::string first_skip_reason_;
  bool have_prev_ = false;
  Time prev_arrival_ = 0;
  long prev_line_ = 0;
  // opt.sort: every row, sorted on the first next().
  bool sorted_loaded_ = false;
  std::vector<TraceRow> sorted_;
  std::size_t sorted_pos_ = 0;
};

// Picks the format from the extension and the first line: the first registry
// entry whose detect() accepts it (rules in trace_reader.cc and docs/traces.md).
// Throws InputError when nothing matches.
std::string detect_format(const std::string& path);

// Opens a trace. With opt.sort the whole file is read and stable-sorted by
// arrival on open (memory grows with the file; the default is streaming).
std::unique_ptr<TraceReader> open_trace(const std::string& path, const TraceReadOptions& opt);
// Same, from lines already open (LineReader::from_text() for a trace held in
// memory); opt.format must be a registered name ("auto" is an InputError).
std::unique_ptr<TraceReader> open_trace(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt);

// Per-format constructors (one file each). `opt.format` is ignored.
std::unique_ptr<TraceReader> make_azure_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt);
std::unique_ptr<TraceReader> make_burstgpt_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt);
std::unique_ptr<TraceReader> make_mooncake_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt);
// Native CSV; VTC's CSV is read by the same code (req_id is an alias of id);
// `as` is the format name the reader reports ("native_csv" or "vtc").
std::unique_ptr<TraceReader> make_native_csv_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt,
                                                    const std::string& as);
std::unique_ptr<TraceReader> make_native_jsonl_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt);

}  // namespace servesim
