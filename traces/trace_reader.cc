// The format-independent half of reading a trace: blank lines, UTF-8 checks,
// bad-row skipping, the timestamp order check, optional sorting, and format
// detection. See trace_reader.h.
#include "traces/trace_reader.h"

#include <algorithm>
#include <cstdio>

#include <yaml-cpp/yaml.h>

#include "sim/error.h"
#include "traces/field_parse.h"

namespace servesim {

std::string format_name(TraceFormat f) {
  switch (f) {
    case TraceFormat::kAuto: return "auto";
    case TraceFormat::kAzure: return "azure";
    case TraceFormat::kBurstGpt: return "burstgpt";
    case TraceFormat::kMooncake: return "mooncake";
    case TraceFormat::kVtc: return "vtc";
    case TraceFormat::kNativeCsv: return "native_csv";
    case TraceFormat::kNativeJsonl: return "native_jsonl";
  }
  return "?";
}

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

TraceFormat parse_format(const std::string& name, const std::string& path) {
  for (TraceFormat f : {TraceFormat::kAuto, TraceFormat::kAzure, TraceFormat::kBurstGpt, TraceFormat::kMooncake,
                        TraceFormat::kVtc, TraceFormat::kNativeCsv, TraceFormat::kNativeJsonl})
    if (name == format_name(f)) return f;
  if (name == "native") return is_jsonl_path(path) ? TraceFormat::kNativeJsonl : TraceFormat::kNativeCsv;
  throw InputError(fmt::format(
      "unknown trace format '{}'; expected one of: auto, azure, burstgpt, mooncake, vtc, native, native_csv, "
      "native_jsonl",
      name));
}

TraceReader::TraceReader(std::unique_ptr<LineReader> lines, TraceFormat format, const TraceReadOptions& opt)
    : lines_(std::move(lines)), format_(format), opt_(opt) {}

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
    std::size_t bad = find_invalid_utf8(line);
    if (bad != std::string_view::npos)
      header_error(fmt::format("invalid UTF-8 byte 0x{:02X} at column {}", static_cast<unsigned char>(line[bad]),
                               bad + 1));
    return line;
  }
  throw InputError(located(lines_->path(), 0, fmt::format("empty file: expected a {} header line", format_name(format_))));
}

void TraceReader::header_error(const std::string& msg) const {
  throw InputError(located(lines_->path(), lines_->line_number(), fmt::format("header: {}", msg)));
}

bool TraceReader::next_unchecked(TraceRow& row) {
  std::string_view line;
  for (;;) {
    if (!lines_->next(line)) return false;
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

TraceFormat detect_format(const std::string& path) {
  LineReader lines(path, 1 << 16);
  std::string_view first;
  while (lines.next(first)) {
    if (first.substr(0, 3) == "\xEF\xBB\xBF") first.remove_prefix(3);
    if (!is_blank(first) && first.front() != '#') break;  // '#' comments: native formats
  }
  auto has = [&](std::string_view s) { return first.find(s) != std::string_view::npos; };
  if (is_jsonl_path(path) || (!first.empty() && first.front() == '{')) {
    if (has("\"hash_ids\"") || has("\"input_length\"")) return TraceFormat::kMooncake;
    if (has("\"prompt_tokens\"")) return TraceFormat::kNativeJsonl;
  } else {
    if (has("ContextTokens") && has("GeneratedTokens")) return TraceFormat::kAzure;
    if (has("Request tokens") && has("Response tokens")) return TraceFormat::kBurstGpt;
    if (has("req_id") && has("prompt_tokens")) return TraceFormat::kVtc;
    if (has("prompt_tokens")) return TraceFormat::kNativeCsv;
  }
  throw InputError(located(path, lines.line_number(),
                           fmt::format("cannot tell the trace format from the first line {}; set `format:` to one of "
                                       "azure, burstgpt, mooncake, vtc, native",
                                       quote_value(first))));
}

std::unique_ptr<TraceReader> open_trace(const std::string& path, const TraceReadOptions& opt) {
  TraceFormat f = opt.format == TraceFormat::kAuto ? detect_format(path) : opt.format;
  auto lines = std::make_unique<LineReader>(path);
  switch (f) {
    case TraceFormat::kAzure: return make_azure_reader(std::move(lines), opt);
    case TraceFormat::kBurstGpt: return make_burstgpt_reader(std::move(lines), opt);
    case TraceFormat::kMooncake: return make_mooncake_reader(std::move(lines), opt);
    case TraceFormat::kVtc:
    case TraceFormat::kNativeCsv: return make_native_csv_reader(std::move(lines), opt, f);
    case TraceFormat::kNativeJsonl: return make_native_jsonl_reader(std::move(lines), opt);
    case TraceFormat::kAuto: break;
  }
  throw InputError(located(path, 0, "unknown trace format"));
}

}  // namespace servesim
