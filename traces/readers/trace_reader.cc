// The format-independent half of reading a trace: blank lines, UTF-8 checks,
// bad-row skipping, the timestamp order check, optional sorting, and format
// detection. See trace_reader.h.
#include "traces/readers/trace_reader.h"

#include <algorithm>
#include <cstdio>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.h"
#include "traces/readers/field_parse.h"

namespace servesim {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_jsonl_path(const std::string& path) { return ends_with(path, ".jsonl") || ends_with(path, ".json"); }

bool is_blank(std::string_view s) { return trim_blank(s).empty(); }

// Clears a row for the next parse but keeps its buffers' capacity.
void reset(TraceRow& row) {
  RequestSpec& s = row.spec;
  s.client = 0;
  s.arrival = 0;
  s.prompt_tokens = s.output_tokens = 0;
  s.prefix_blocks.clear();
  s.prefix_block_size = 0;
  s.parents.clear();
  s.think_time = 0;
  s.dependents = 0;
  s.session = 0;
  s.turn = 0;
  s.category = 0;
  row.client.clear();
  row.group.clear();
}

}  // namespace

const std::vector<TraceFormatType>& trace_formats() {
  auto has = [](std::string_view line, std::string_view s) { return line.find(s) != std::string_view::npos; };
  static const std::vector<TraceFormatType> formats = {
      {"azure", [=](std::string_view l, bool json) { return !json && has(l, "ContextTokens") && has(l, "GeneratedTokens"); },
       make_azure_reader, /*wall_clock=*/true, /*native=*/false},
      {"burstgpt", [=](std::string_view l, bool json) { return !json && has(l, "Request tokens") && has(l, "Response tokens"); },
       make_burstgpt_reader, /*wall_clock=*/true, /*native=*/false},
      {"mooncake", [=](std::string_view l, bool json) { return json && (has(l, "\"hash_ids\"") || has(l, "\"input_length\"")); },
       make_mooncake_reader, /*wall_clock=*/false, /*native=*/false},
      {"vtc", [=](std::string_view l, bool json) { return !json && has(l, "req_id") && has(l, "prompt_tokens"); },
       [](std::unique_ptr<LineReader> lines, const TraceReadOptions& opt) {
         return make_native_csv_reader(std::move(lines), opt, "vtc");
       },
       /*wall_clock=*/false, /*native=*/false},
      {"native_csv", [=](std::string_view l, bool json) { return !json && has(l, "prompt_tokens"); },
       [](std::unique_ptr<LineReader> lines, const TraceReadOptions& opt) {
         return make_native_csv_reader(std::move(lines), opt, "native_csv");
       },
       /*wall_clock=*/false, /*native=*/true},
      {"native_jsonl", [=](std::string_view l, bool json) { return json && has(l, "\"prompt_tokens\""); },
       make_native_jsonl_reader, /*wall_clock=*/false, /*native=*/true},
  };
  return formats;
}

namespace {

std::string format_names() {
  std::string out;
  for (const TraceFormatType& f : trace_formats()) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

}  // namespace

std::string trace_format_choices() {
  std::string out;
  for (const TraceFormatType& f : trace_formats())
    if (!f.native) out += f.name + ", ";
  return out + "native";
}

const TraceFormatType& trace_format(const std::string& name) {
  for (const TraceFormatType& f : trace_formats())
    if (f.name == name) return f;
  throw InputError(fmt::format("unknown trace format '{}'; expected one of: {}", name, format_names()));
}

std::string parse_format(const std::string& name, const std::string& path) {
  if (name == "auto") return name;
  if (name == "native") return is_jsonl_path(path) ? "native_jsonl" : "native_csv";
  for (const TraceFormatType& f : trace_formats())
    if (f.name == name) return name;
  throw InputError(
      fmt::format("unknown trace format '{}'; expected one of: auto, native, {}", name, format_names()));
}

TraceReader::TraceReader(std::unique_ptr<LineReader> lines, std::string format, const TraceReadOptions& opt)
    : lines_(std::move(lines)), format_(std::move(format)), opt_(opt) {}

bool TraceReader::handle_comment(std::string_view line) {
  if (!comments_ || line.empty() || line.front() != '#') return false;
  std::string_view body = trim_blank(line.substr(1));
  constexpr std::string_view kClients = "clients:";
  if (body.substr(0, kClients.size()) == kClients) {
    std::string_view list = body.substr(kClients.size());
    try {
      YAML::Node n = YAML::Load(std::string(list));
      if (!n.IsSequence()) throw YAML::Exception(YAML::Mark::null_mark(), "not a list");
      declared_clients_.clear();
      for (const auto& e : n) declared_clients_.push_back(e.as<std::string>());
    } catch (const YAML::Exception&) {
      throw InputError(located(lines_->path(), lines_->line_number(),
                               "'# clients:' must be followed by a JSON list of names, got " + quote_value(list)));
    }
  }
  return true;
}

std::string_view TraceReader::read_header() {
  std::string_view line;
  while (lines_->next(line)) {
    if (lines_->line_number() == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
    if (is_blank(line) || handle_comment(line)) continue;
    header_read_ = true;
    header_line_ = lines_->line_number();
    std::size_t bad = find_invalid_utf8(line);
    if (bad != std::string_view::npos)
      header_error(fmt::format("invalid UTF-8 byte 0x{:02X} at column {}", static_cast<unsigned char>(line[bad]),
                               bad + 1));
    return line;
  }
  throw InputError(located(lines_->path(), 0, fmt::format("empty file: expected a {} header line", format_)));
}

void TraceReader::header_error(const std::string& msg) const {
  throw InputError(located(lines_->path(), lines_->line_number(), fmt::format("header: {}", msg)));
}

bool TraceReader::next_unchecked(TraceRow& row) {
  std::string_view line;
  for (;;) {
    if (!lines_->next(line)) {
      // Header formats fail in read_header() on an empty file; a headerless
      // (JSONL) file with no data line at all is just as empty.
      if (!header_read_ && ordinal_ == 0 && rows_skipped_ == 0)
        throw InputError(located(lines_->path(), 0, fmt::format("empty file: no {} rows (one JSON object per line)",
                                                                format_)));
      // A header with no data line under it is just as empty.
      if (header_read_ && ordinal_ == 0 && rows_skipped_ == 0)
        throw InputError(located(lines_->path(), header_line_,
                                 fmt::format("header: no {} data rows after the header line", format_)));
      return false;
    }
    if (is_blank(line) || handle_comment(line)) continue;
    const long ln = lines_->line_number();
    std::string problem;
    std::size_t bad = find_invalid_utf8(line);
    bool keep = false;
    if (bad != std::string_view::npos) {
      problem = fmt::format("invalid UTF-8 byte 0x{:02X} at column {}", static_cast<unsigned char>(line[bad]), bad + 1);
    } else {
      try {
        reset(row);
        row.line = ln;
        row.spec.id = static_cast<RequestId>(ordinal_);
        keep = parse(line, row);
      } catch (const RowError& e) {
        problem = fmt::format("field '{}': {}", e.field, e.message);
        if (!lines_->last_line_terminated()) problem += " (the file's last line has no newline: truncated?)";
      }
    }
    if (problem.empty()) {
      ++ordinal_;
      if (!keep) {
        ++rows_dropped_;
        continue;
      }
      ++rows_read_;
      return true;
    }
    std::string msg = located(lines_->path(), ln, problem);
    if (!opt_.skip_bad_rows) throw InputError(msg);
    if (rows_skipped_++ == 0) first_skip_reason_ = msg;
  }
}

bool TraceReader::next(TraceRow& row) {
  if (opt_.sort) {
    if (!sorted_loaded_) {
      sorted_loaded_ = true;
      TraceRow r;
      while (next_unchecked(r)) sorted_.push_back(r);
      std::stable_sort(sorted_.begin(), sorted_.end(),
                       [](const TraceRow& a, const TraceRow& b) { return a.spec.arrival < b.spec.arrival; });
    }
    if (sorted_pos_ == sorted_.size()) return false;
    row = std::move(sorted_[sorted_pos_++]);
    return true;
  }
  for (;;) {
    if (!next_unchecked(row)) return false;
    if (!row.spec.parents.empty()) return true;  // a dependent row's arrival is ignored
    if (have_prev_ && row.spec.arrival < prev_arrival_) {
      std::string msg = located(
          lines_->path(), row.line,
          fmt::format("arrival time decreases ({} ns < {} ns on line {}); sort the file or set `sort: true` "
                      "(which reads the whole trace into memory)",
                      row.spec.arrival, prev_arrival_, prev_line_));
      if (!opt_.skip_bad_rows) throw InputError(msg);
      --rows_read_;
      if (rows_skipped_++ == 0) first_skip_reason_ = msg;
      continue;
    }
    have_prev_ = true;
    prev_arrival_ = row.spec.arrival;
    prev_line_ = row.line;
    return true;
  }
}

std::string detect_format(const std::string& path) {
  LineReader lines(path, 1 << 16);
  std::string_view first;
  bool data = false;
  while (lines.next(first)) {
    if (first.substr(0, 3) == "\xEF\xBB\xBF") first.remove_prefix(3);
    if (!is_blank(first) && first.front() != '#') {  // '#' comments: native formats
      data = true;
      break;
    }
  }
  // Nothing but blank lines and comments: as empty as an empty file (what the readers
  // say when the format is given), not a first line to guess a format from.
  if (!data)
    throw InputError(
        located(path, 0, "empty file: no data line (only blank lines or '#' comments), so no trace to read"));
  const bool json = is_jsonl_path(path) || (!first.empty() && first.front() == '{');
  for (const TraceFormatType& f : trace_formats())
    if (f.detect(first, json)) return f.name;
  throw InputError(located(path, lines.line_number(),
                           fmt::format("cannot tell the trace format from the first line {}; set `format:` to one of "
                                       "{}",
                                       quote_value(first), trace_format_choices())));
}

std::unique_ptr<TraceReader> open_trace(const std::string& path, const TraceReadOptions& opt) {
  const TraceFormatType& f = trace_format(opt.format == "auto" ? detect_format(path) : opt.format);
  return f.make(std::make_unique<LineReader>(path), opt);
}

std::unique_ptr<TraceReader> open_trace(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt) {
  return trace_format(opt.format).make(std::move(lines), opt);
}

}  // namespace servesim
