// The native CSV format (docs/traces.md "Native format") and the VTC-style CSV
// (req_id,client,arrival_s,prompt_tokens,output_tokens), which is a subset of
// it with req_id as the id column. Columns are found by name, in any order:
//   required: prompt_tokens, output_tokens, and arrival_ns or arrival_s
//   optional: id (alias req_id), client, prefix_block_size, prefix_blocks
//             (space-separated ids), session, turn, parents (space-separated
//             request ids), dependents (how many later rows list this one in
//             parents), think_time_ns or think_time_s, category
// A row with parents must name earlier rows that count it in their
// `dependents` (ParentTracker); prefix_blocks needs prefix_block_size and may
// not cover more than the prompt.
#include <vector>

#include "traces/readers/csv_columns.h"
#include "traces/readers/field_limits.h"
#include "traces/readers/field_parse.h"
#include "traces/readers/native_fields.h"
#include "traces/readers/trace_reader.h"

namespace servesim {
namespace {

class NativeCsvReader final : public TraceReader {
 public:
  NativeCsvReader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt, const std::string& as)
      : TraceReader(std::move(lines), as, opt) {
    allow_comments();
    if (!cols_.parse(read_header())) header_error("unterminated double quote");
    names_.resize(cols_.size());
    auto col = [&](std::initializer_list<std::string_view> n) {
      int i = cols_.find(n);
      if (i >= 0) names_[i] = std::string(*n.begin());
      return i;
    };
    id_ = col({"id", "req_id"});
    client_ = col({"client"});
    arrival_ns_ = col({"arrival_ns"});
    arrival_s_ = col({"arrival_s"});
    prompt_ = col({"prompt_tokens"});
    output_ = col({"output_tokens"});
    block_size_ = col({"prefix_block_size"});
    blocks_ = col({"prefix_blocks"});
    session_ = col({"session"});
    turn_ = col({"turn"});
    parents_ = col({"parents"});
    think_ns_ = col({"think_time_ns"});
    think_s_ = col({"think_time_s"});
    category_ = col({"category"});
    dependents_ = col({"dependents"});
    const char* what = prompt_ < 0 ? "prompt_tokens" : output_ < 0 ? "output_tokens" : nullptr;
    if (!what && arrival_ns_ < 0 && arrival_s_ < 0) what = "arrival_ns' or 'arrival_s";
    if (what)
      header_error(fmt::format("missing column '{}' (header has: {}); see docs/traces.md for the native format", what,
                               cols_.list()));
    if (blocks_ >= 0 && block_size_ < 0) header_error("column 'prefix_blocks' needs a 'prefix_block_size' column");
    if (parents_ >= 0 && dependents_ < 0)
      header_error("column 'parents' needs a 'dependents' column (how many later rows name each row as a parent)");
  }

  bool has_clients() const override { return client_ >= 0; }
  bool has_prefix() const override { return blocks_ >= 0; }
  bool has_ids() const override { return id_ >= 0; }

 protected:
  bool parse(std::string_view line, TraceRow& row) override {
    split_row(line, f_, cols_, names_);
    RequestSpec& s = row.spec;
    if (id_ >= 0) s.id = static_cast<RequestId>(nonnegative_field(f_[id_], names_[id_]));
    if (client_ >= 0) {
      std::string_view c = trim_blank(f_[client_]);
      if (c.empty()) throw RowError{"client", "expected a client name, got ''"};
      row.client.assign(c);
      for (std::size_t q = row.client.find("\"\""); q != std::string::npos; q = row.client.find("\"\"", q + 1))
        row.client.erase(q, 1);  // "" inside a quoted field is one quote
    }
    s.arrival = arrival_ns_ >= 0 ? nonnegative_field(f_[arrival_ns_], "arrival_ns", kMaxTraceTimeNs)
                                 : seconds_field(f_[arrival_s_], "arrival_s");
    s.prompt_tokens = positive_field(f_[prompt_], "prompt_tokens", kMaxTraceTokens);
    s.output_tokens = positive_field(f_[output_], "output_tokens", kMaxTraceTokens);
    if (blocks_ >= 0 && !parse_id_list(f_[blocks_], s.prefix_blocks))
      throw RowError{"prefix_blocks", "expected space-separated non-negative integers, got " + quote_value(f_[blocks_])};
    if (block_size_ >= 0 && !trim_blank(f_[block_size_]).empty())
      s.prefix_block_size = static_cast<std::int32_t>(
          nonnegative_field(f_[block_size_], "prefix_block_size", kMaxTraceBlockSize));
    if (session_ >= 0) s.session = static_cast<std::uint64_t>(nonnegative_field(f_[session_], "session"));
    if (turn_ >= 0) s.turn = static_cast<std::int32_t>(nonnegative_field(f_[turn_], "turn", kMaxTraceInt32));
    if (parents_ >= 0 && !parse_id_list(f_[parents_], s.parents))
      throw RowError{"parents", "expected space-separated request ids, got " + quote_value(f_[parents_])};
    if (think_ns_ >= 0) s.think_time = nonnegative_field(f_[think_ns_], "think_time_ns", kMaxTraceTimeNs);
    else if (think_s_ >= 0) s.think_time = seconds_field(f_[think_s_], "think_time_s");
    if (dependents_ >= 0) s.dependents = static_cast<std::int32_t>(
        nonnegative_field(f_[dependents_], "dependents", kMaxTraceInt32));
    if (category_ >= 0) s.category = static_cast<std::int32_t>(
        integer_field(f_[category_], "category", -kMaxTraceInt32 - 1, kMaxTraceInt32));
    checks_.check(row);
    return true;
  }

 private:
  CsvColumns cols_;
  std::vector<std::string> names_;
  int id_, client_, arrival_ns_, arrival_s_, prompt_, output_, block_size_, blocks_, session_, turn_, parents_,
      think_ns_, think_s_, category_, dependents_;
  std::vector<std::string_view> f_;
  NativeRowChecks checks_;
};

}  // namespace

std::unique_ptr<TraceReader> make_native_csv_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt,
                                                    const std::string& as) {
  return std::make_unique<NativeCsvReader>(std::move(lines), opt, as);
}

}  // namespace servesim
