// The native JSONL format (docs/traces.md "Native format"): one object per
// line with the native CSV's fields as keys; prefix_blocks and parents are
// JSON arrays, client is a string. Required: prompt_tokens, output_tokens and
// arrival_ns or arrival_s. Unknown keys are errors (typos must not silently
// drop a field); null means "absent".

#include "traces/readers/csv_columns.h"
#include "traces/readers/field_limits.h"
#include "traces/readers/json_record.h"
#include "traces/readers/native_fields.h"
#include "traces/readers/trace_reader.h"

namespace servesim {
namespace {

class NativeJsonlReader final : public TraceReader {
 public:
  NativeJsonlReader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt)
      : TraceReader(std::move(lines), "native_jsonl", opt) {
    allow_comments();
  }

  // JSONL rows may or may not carry each field; downstream rules ask per row.
  bool has_clients() const override { return saw_client_; }
  bool has_prefix() const override { return true; }
  bool has_ids() const override { return true; }

 protected:
  bool parse(std::string_view line, TraceRow& row) override {
    JsonRecord js(json_, line);
    RequestSpec& s = row.spec;
    bool arrival = false, prompt = false, output = false;
    std::string_view key;
    auto nonneg = [&](std::string_view k, std::int64_t max = INT64_MAX) {
      return check_int_range(js.read_int(), k, 0, max);
    };
    auto seconds = [&](std::string_view k) {
      double v = js.read_number();
      if (v < 0 || v > kMaxTraceTimeS)
        throw RowError{std::string(k), fmt::format("expected seconds in [0, {:.0f}], got {}", kMaxTraceTimeS, v)};
      return seconds_to_time(v);
    };
    while (js.next_key(key)) {
      if (js.read_null()) continue;
      if (key == "id") {
        s.id = static_cast<RequestId>(nonneg(key));
      } else if (key == "client") {
        js.read_string(row.client);
        if (row.client.empty()) throw RowError{"client", "expected a client name, got ''"};
        saw_client_ = true;
      } else if (key == "arrival_ns") {
        s.arrival = nonneg(key, kMaxTraceTimeNs);
        arrival = true;
      } else if (key == "arrival_s") {
        s.arrival = seconds(key);
        arrival = true;
      } else if (key == "prompt_tokens" || key == "output_tokens") {
        std::int64_t v = check_int_range(js.read_int(), key, 1, kMaxTraceTokens);
        (key == "prompt_tokens" ? s.prompt_tokens : s.output_tokens) = v;
        (key == "prompt_tokens" ? prompt : output) = true;
      } else if (key == "prefix_block_size") {
        s.prefix_block_size = static_cast<std::int32_t>(nonneg(key, kMaxTraceBlockSize));
      } else if (key == "prefix_blocks") {
        js.read_int_array(s.prefix_blocks);
      } else if (key == "session") {
        s.session = static_cast<std::uint64_t>(nonneg(key));
      } else if (key == "turn") {
        s.turn = static_cast<std::int32_t>(nonneg(key, kMaxTraceInt32));
      } else if (key == "parents") {
        js.read_int_array(s.parents);
      } else if (key == "dependents") {
        s.dependents = static_cast<std::int32_t>(nonneg(key, kMaxTraceInt32));
      } else if (key == "think_time_ns") {
        s.think_time = nonneg(key, kMaxTraceTimeNs);
      } else if (key == "think_time_s") {
        s.think_time = seconds(key);
      } else if (key == "category") {
        s.category = static_cast<std::int32_t>(check_int_range(js.read_int(), key, -kMaxTraceInt32 - 1, kMaxTraceInt32));
      } else {
        throw RowError{std::string(key), "unknown key; see docs/traces.md for the native format"};
      }
    }
    if (!arrival) throw RowError{"arrival_ns", "missing (give arrival_ns or arrival_s)"};
    if (!prompt) throw RowError{"prompt_tokens", "missing"};
    if (!output) throw RowError{"output_tokens", "missing"};
    checks_.check(row);
    return true;
  }

 private:
  JsonParser json_;
  NativeRowChecks checks_;
  bool saw_client_ = false;
};

}  // namespace

std::unique_ptr<TraceReader> make_native_jsonl_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt) {
  return std::make_unique<NativeJsonlReader>(std::move(lines), opt);
}

}  // namespace servesim
