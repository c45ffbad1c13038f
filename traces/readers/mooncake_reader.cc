// Mooncake (kvcache-ai/Mooncake FAST'25 traces) JSONL: one object per line
// with timestamp (ms from the trace start), input_length, output_length and
// hash_ids (prefix block ids of 512 tokens; the last block may be partial).
// Checks len(hash_ids) == ceil(input_length / 512), the invariant of every
// published file, so a truncated or mangled list is caught. Other keys are
// ignored (later Mooncake traces add some). Block ids map onto RequestSpec
// prefix_blocks unchanged, with prefix_block_size 512.
#include "traces/readers/csv_columns.h"
#include "traces/readers/field_limits.h"
#include "traces/readers/json_record.h"
#include "traces/readers/trace_reader.h"

namespace servesim {
namespace {

constexpr std::int32_t kMooncakeBlock = 512;

class MooncakeReader final : public TraceReader {
 public:
  MooncakeReader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt)
      : TraceReader(std::move(lines), "mooncake", opt) {}

  bool has_prefix() const override { return true; }

 protected:
  bool parse(std::string_view line, TraceRow& row) override {
    JsonRecord js(json_, line);
    bool ts = false, in = false, out = false, ids = false;
    std::string_view key;
    while (js.next_key(key)) {
      if (key == "timestamp") {
        std::int64_t ms = check_int_range(js.read_int(), "timestamp", 0, kMaxTraceTimeNs / kNsPerMs);
        row.spec.arrival = ms * kNsPerMs;
        ts = true;
      } else if (key == "input_length") {
        row.spec.prompt_tokens = check_int_range(js.read_int(), "input_length", 1, kMaxTraceTokens);
        in = true;
      } else if (key == "output_length") {
        row.spec.output_tokens = check_int_range(js.read_int(), "output_length", 1, kMaxTraceTokens);
        out = true;
      } else if (key == "hash_ids") {
        js.read_int_array(row.spec.prefix_blocks);
        ids = true;
      } else {
        js.skip_value();
      }
    }
    if (!ts) throw RowError{"timestamp", "missing"};
    if (!in) throw RowError{"input_length", "missing"};
    if (!out) throw RowError{"output_length", "missing"};
    if (!ids) throw RowError{"hash_ids", "missing"};
    const std::int64_t want = (row.spec.prompt_tokens + kMooncakeBlock - 1) / kMooncakeBlock;
    if (static_cast<std::int64_t>(row.spec.prefix_blocks.size()) != want)
      throw RowError{"hash_ids", fmt::format("expected ceil(input_length/512) = {} block ids, got {}", want,
                                             row.spec.prefix_blocks.size())};
    row.spec.prefix_block_size = kMooncakeBlock;
    return true;
  }

 private:
  JsonParser json_;
};

}  // namespace

std::unique_ptr<TraceReader> make_mooncake_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt) {
  return std::make_unique<MooncakeReader>(std::move(lines), opt);
}

}  // namespace servesim
