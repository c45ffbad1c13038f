// Parsing and stating trace replay settings; see trace_options.h.
#include "traces/trace_options.h"

#include <cmath>
#include <limits>
#include <string>

#include "sim/core/error.h"
#include "traces/readers/field_limits.h"

namespace servesim {
namespace {

const OptionTable<BurstGptOptions>& burstgpt_options() {
  static const OptionTable<BurstGptOptions> t = {
      {"failed", one_of(&BurstGptOptions::failed, "failed-row rule", {"drop", "keep", "error"}), OptionRange::kAny,
       "BurstGPT rows with zero response tokens: dropped, kept with 1 output token, or an error"},
  };
  return t;
}

void check_window(YamlMap& w, TraceOptions& o) {
  if (std::isfinite(o.end_s) && !(o.end_s > o.start_s)) w.fail("end_s", fmt::format("must be > start_s ({})", o.start_s));
}

void check_client_rule(YamlMap& c, ClientRule& r) {
  if (r.name.empty()) c.fail("name", "must not be empty");
  if (r.by == ClientRule::By::kRandom && r.count == 0) c.fail("count", "must be >= 1 for by: random");
  for (double x : r.weights)
    if (!(x >= 0)) c.fail("weights", "weights must be >= 0");
  if (!r.weights.empty()) {
    double sum = 0;
    for (double x : r.weights) sum += x;
    if (!(sum > 0)) c.fail("weights", "at least one weight must be > 0");
    r.count = static_cast<int>(r.weights.size());
  }
}

}  // namespace

const OptionTable<TraceReadOptions>& trace_read_options() {
  static const OptionTable<TraceReadOptions> t = concat<TraceReadOptions>({
      {{"skip_bad_rows", &TraceReadOptions::skip_bad_rows, OptionRange::kAny, "skip and count bad rows instead of failing"},
       {"sort", &TraceReadOptions::sort, OptionRange::kAny, "load all rows and stable-sort them by arrival"}},
      lift(&TraceReadOptions::burstgpt, burstgpt_options()),
  });
  return t;
}

const OptionTable<TraceOptions>& trace_window_options() {
  static const OptionTable<TraceOptions> t = {
      {"start_s", &TraceOptions::start_s, OptionRange::kNonNegative, "window start, trace seconds", kMaxTraceTimeS},
      // A number, or null / absent: no end (written as null); hand-read.
      {"end_s",
       custom<TraceOptions>(
           [](YamlMap& w, const char* key, TraceOptions& o) {
             if (w.null_value(key)) {
               o.end_s = std::numeric_limits<double>::infinity();  // null: no end (as config.resolved.yaml writes it)
             } else if (auto end = w.optional<double>(key)) {  // absent: keeps the default, no end
               o.end_s = *end;
               if (!(o.end_s <= kMaxTraceTimeS))
                 w.fail(key, fmt::format("must be at most {:.0f} s (or null: no end), got {}", kMaxTraceTimeS, o.end_s));
             }
           },
           [](const TraceOptions& o) {
             return std::isfinite(o.end_s) ? YAML::Node(o.end_s) : YAML::Node(YAML::NodeType::Null);  // null: no end
           }),
       OptionRange::kAny, "window end (exclusive), trace seconds; null: no end"},
  };
  return t;
}

const OptionTable<SpreadOptions>& spread_options() {
  static const OptionTable<SpreadOptions> t = {
      {"mode", one_of(&SpreadOptions::mode, "spread mode", {"none", "even", "uniform"}), OptionRange::kAny,
       "how requests sharing one timestamp are spread"},
      {"bucket_s", &SpreadOptions::bucket_s, OptionRange::kPositive, "the widest a bucket is spread over, s",
       kMaxSpreadBucketS},
  };
  return t;
}

const OptionTable<ClientRule>& client_rule_options() {
  using R = OptionRange;
  static const OptionTable<ClientRule> t = {
      {"by", one_of(&ClientRule::by, "client rule", {"auto", "trace", "single", "prefix_block", "group", "random"}),
       R::kAny, "how requests get a client"},
      {"name", &ClientRule::name, R::kAny, "the client of single (and auto without trace clients)"},
      {"count", &ClientRule::count, R::kNonNegative, "prefix_block buckets (0: one per block id); random clients", 100000},
      // `auto` (-1: from the first 1,000 rows) or a number >= 0; hand-read.
      {"common_blocks",
       custom<ClientRule>(
           [](YamlMap& c, const char* key, ClientRule& r) {
             const std::string common = c.get<std::string>(key, r.common_blocks < 0 ? "auto" : std::to_string(r.common_blocks));
             if (common == "auto") {
               r.common_blocks = -1;
             } else {
               r.common_blocks = c.get<int>(key, 0);
               if (r.common_blocks < 0) c.fail(key, "must be 'auto' or >= 0");
             }
           },
           [](const ClientRule& r) { return r.common_blocks < 0 ? YAML::Node("auto") : YAML::Node(r.common_blocks); }),
       R::kAny, "prefix_block: leading blocks every request shares (auto: from the first 1,000 rows)"},
      {"weights", list_of(&ClientRule::weights), R::kAny, "random: relative shares (empty: equal, or Zipf)"},
      {"zipf", &ClientRule::zipf, R::kNonNegative, "random: shares i^-zipf when > 0 and no weights"},
  };
  return t;
}

const OptionTable<TraceOptions>& trace_options() {
  // path: required (checked before the table reads); format: converted by parse_format().
  using R = OptionRange;
  static const OptionTable<TraceOptions> t = concat<TraceOptions>({
      {{"path", &TraceOptions::path, R::kAny, "the trace file (required), relative to the current directory"},
       {"format", trace_format_column<TraceOptions>(), R::kAny, "auto, a format name or native"}},
      lift(&TraceOptions::read, trace_read_options()),
      {{"time_origin", one_of(&TraceOptions::time_origin, "time origin", {"auto", "first_row", "zero"}), R::kAny,
        "auto: first_row for formats with date timestamps, zero otherwise"},
       {"window", nested_same(&trace_window_options, &check_window), R::kAny, "trace seconds, end exclusive"},
       {"spread", nested(&TraceOptions::spread, &spread_options), R::kAny, "spreading of quantized timestamps"},
       {"sample", &TraceOptions::sample, R::kFraction, "fraction of requests kept (seeded)"},
       {"rate_scale", &TraceOptions::rate_scale, R::kPositive, "2 = replay twice as fast", kMaxRateScale, kMinRateScale},
       {"max_requests", &TraceOptions::max_requests, R::kNonNegative, "0 = all"},
       {"clients", nested(&TraceOptions::clients, &client_rule_options, &check_client_rule), R::kAny,
        "client assignment"}},
  });
  return t;
}

TraceOptions parse_trace_options(YamlMap& m) {
  TraceOptions o;
  if (!m.has("path")) m.require<std::string>("path");  // "missing required key 'path'"
  read_options(m, trace_options(), o);
  if (o.path.empty()) m.fail("path", "must not be empty");
  m.finish();
  return o;
}

YAML::Node trace_options_yaml(const TraceOptions& o) {
  YAML::Node n;
  n["type"] = "trace";
  write_options(n, trace_options(), o);
  return n;
}

}  // namespace servesim
