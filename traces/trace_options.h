// TraceOptions: the settings of a `workload: {type: trace}` section — which
// file, how to read it, and the transformation chain applied to its rows.
// Every field has a default; resolved() states all of them, so
// config.resolved.yaml says exactly how a trace was replayed.
//
// The chain runs in this fixed order (docs/traces.md "Transformations"):
//   read -> rebase time (time_origin) -> spread quantized timestamps ->
//   time window -> sample -> rate scale -> max_requests -> client assignment
// so e.g. `window` is in the trace's own (rebased, spread) seconds and
// `max_requests` counts requests that survived sampling. Requests with
// parents (native traces of sessions/DAGs) are never windowed or sampled on
// their own: they are kept iff their parents were, so a workflow is whole.
// Think times are not rate-scaled.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.h"
#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "traces/readers/trace_reader.h"

namespace servesim {

// Spreading of requests that share one timestamp (Mooncake's 3 s buckets).
// Requests with the same timestamp T form a bucket of n rows; its width is
// w = min(bucket_s, T_next - T) (bucket_s for the last bucket). `even` puts
// row k (file order) at T + floor(k*w/n); `uniform` draws n seeded uniform
// offsets in [0, w), sorts them and assigns them in file order. Arrival order
// and the bucket's start are preserved; a bucket of one row is unchanged.
struct SpreadOptions {
  enum class Mode { kNone, kEven, kUniform };
  Mode mode = Mode::kNone;
  double bucket_s = 3.0;  // cost: none; only the width cap above
};

// How requests get a client (docs/traces.md "Client assignment").
struct ClientRule {
  enum class By { kAuto, kTrace, kSingle, kPrefixBlock, kGroup, kRandom };
  By by = By::kAuto;
  std::string name = "default";  // single (and auto without trace clients)
  int count = 8;                 // prefix_block buckets (0 = one client per block id); random clients
  int common_blocks = -1;        // prefix_block: leading blocks shared by all (-1 = auto: from the first 1000 rows)
  std::vector<double> weights;   // random: relative shares (default equal, or Zipf)
  double zipf = 0;               // random: weights i^-zipf when > 0 and no weights given
};

struct TraceOptions {
  std::string path;               // relative to the current directory
  TraceReadOptions read;          // format, skip_bad_rows, sort, failed
  enum class Origin { kAuto, kFirstRow, kZero };
  Origin time_origin = Origin::kAuto;  // auto: first_row for azure/burstgpt, zero otherwise
  double start_s = 0;                  // window start (trace seconds after rebasing/spreading)
  double end_s = std::numeric_limits<double>::infinity();  // window end (exclusive)
  double sample = 1.0;                 // fraction of independent rows kept (seeded, per row id)
  double rate_scale = 1.0;             // > 1 replays faster: arrival' = (t - start_s) / rate_scale
  std::int64_t max_requests = 0;       // 0 = no limit; stops before the first independent
                                       // request past the limit (dependents stay with parents)
  SpreadOptions spread;
  ClientRule clients;
};

// Every key of `type: trace` but `type`, in the order config.resolved.yaml
// states them: path, format, skip_bad_rows, sort, failed, time_origin, window
// {start_s, end_s}, spread {mode, bucket_s}, sample, rate_scale, max_requests,
// clients {by, name, count, common_blocks, weights, zipf}. Hand-read rows:
// format (checked and converted by parse_format()), window.end_s (a number, or
// null / absent: no end) and clients.common_blocks (`auto` or a number).
const OptionTable<TraceOptions>& trace_options();
const OptionTable<TraceOptions>& trace_window_options();   // window: {start_s, end_s}
const OptionTable<SpreadOptions>& spread_options();        // spread: {mode, bucket_s}
const OptionTable<ClientRule>& client_rule_options();      // clients: {by, name, ...}
// skip_bad_rows, sort, failed: how a trace is read (also the empirical workload's).
const OptionTable<TraceReadOptions>& trace_read_options();

// `format:` of S (a struct with `path` and `read`): "auto", a registered name,
// or "native" (native_csv or native_jsonl by the extension of `path`, which
// the table reads first), checked and converted by parse_format().
template <class S>
OptionCustom<S> trace_format_column() {
  return custom<S>(
      [](YamlMap& m, const char* key, S& s) {
        const std::string name = m.get<std::string>(key, s.read.format);
        try {
          s.read.format = parse_format(name, s.path);
        } catch (const InputError& e) {
          m.fail(key, e.what());
        }
      },
      [](const S& s) { return YAML::Node(s.read.format); });
}

// Reads the keys of a `type: trace` workload map (`type` already read) and
// calls m.finish(). Throws InputError naming the key.
TraceOptions parse_trace_options(YamlMap& m);

// Every setting, defaults filled in, in the same layout parse accepts.
YAML::Node trace_options_yaml(const TraceOptions& o);

}  // namespace servesim
