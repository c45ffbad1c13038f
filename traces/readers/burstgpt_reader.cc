// BurstGPT (HPMLL/BurstGPT) CSV: Timestamp (seconds from the trace start),
// Model, Request tokens, Response tokens, Total tokens, Log Type, and in its
// later release the optional Session ID (also "SessionID") and Elapsed time.
//
// Rules (docs/traces.md): group = "<Model>/<Log Type>" and category = 1 + the
// index of that pair in first-seen order (ranking feature, client rule
// `by: group`). Rows with Response tokens == 0 are failed requests: dropped and
// counted (failed: drop, default), kept with 1 output token so their prefill
// still loads the system (failed: keep), or an error (failed: error). Session
// ID sets session (1-based, first-seen order) and turn (0-based count of the
// session's earlier rows); sessions stay independent requests because the
// trace's own timestamps already include the user's think time. Elapsed time
// is validated but unused: the simulator computes its own latencies.
#include <unordered_map>
#include <vector>

#include "traces/readers/csv_columns.h"
#include "traces/readers/field_limits.h"
#include "traces/readers/field_parse.h"
#include "traces/readers/trace_reader.h"

namespace servesim {
namespace {

class BurstGptReader final : public TraceReader {
 public:
  BurstGptReader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt)
      : TraceReader(std::move(lines), "burstgpt", opt) {
    if (!cols_.parse(read_header())) header_error("unterminated double quote");
    names_.resize(cols_.size());
    auto need = [&](std::string_view name) {
      int i = cols_.find({name});
      if (i < 0)
        header_error(fmt::format("missing column '{}'; BurstGPT traces need Timestamp, Model, Request tokens, "
                                 "Response tokens, Log Type (header has: {})",
                                 name, cols_.list()));
      names_[i] = std::string(name);
      return i;
    };
    ts_ = need("Timestamp");
    model_ = need("Model");
    req_ = need("Request tokens");
    resp_ = need("Response tokens");
    log_ = need("Log Type");
    auto want = [&](std::initializer_list<std::string_view> n) {
      int i = cols_.find(n);
      if (i >= 0) names_[i] = std::string(*n.begin());
      return i;
    };
    total_ = want({"Total tokens"});
    session_ = want({"Session ID", "SessionID", "Session_ID"});
    elapsed_ = want({"Elapsed time", "Elapsed_time", "ElapsedTime"});
  }

  bool has_groups() const override { return true; }

 protected:
  bool parse(std::string_view line, TraceRow& row) override {
    split_row(line, f_, cols_, names_);
    row.spec.arrival = seconds_field(f_[ts_], "Timestamp");
    row.spec.prompt_tokens = positive_field(f_[req_], "Request tokens", kMaxTraceTokens);
    std::int64_t out = nonnegative_field(f_[resp_], "Response tokens", kMaxTraceTokens);
    if (total_ >= 0) nonnegative_field(f_[total_], "Total tokens", 2 * kMaxTraceTokens);
    if (elapsed_ >= 0 && !trim_blank(f_[elapsed_]).empty()) nonnegative_decimal_field(f_[elapsed_], "Elapsed time");
    std::string_view model = trim_blank(f_[model_]), log = trim_blank(f_[log_]);
    if (model.empty()) throw RowError{"Model", "expected a model name, got ''"};
    if (log.empty()) throw RowError{"Log Type", "expected a log type, got ''"};
    if (out == 0) {
      if (options().burstgpt.failed == FailedRows::kError)
        throw RowError{"Response tokens", "0 response tokens (a failed request; set `failed: drop` or `keep`)"};
      if (options().burstgpt.failed == FailedRows::kDrop) return false;
      out = 1;
    }
    row.spec.output_tokens = out;
    row.group.assign(model);
    row.group += '/';
    row.group.append(log);
    row.spec.category = category_of(row.group);
    if (session_ >= 0) {
      std::string_view sid = trim_blank(f_[session_]);
      if (!sid.empty()) {
        key_.assign(sid);
        auto [it, inserted] = sessions_.try_emplace(key_, Session{sessions_.size() + 1, 0});
        row.spec.session = it->second.id;
        row.spec.turn = it->second.turns++;
      }
    }
    return true;
  }

 private:
  struct Session {
    std::uint64_t id;
    std::int32_t turns;
  };

  std::int32_t category_of(const std::string& group) {
    for (std::size_t i = 0; i < groups_.size(); ++i)
      if (groups_[i] == group) return static_cast<std::int32_t>(i + 1);
    groups_.push_back(group);
    return static_cast<std::int32_t>(groups_.size());
  }

  CsvColumns cols_;
  std::vector<std::string> names_;
  int ts_ = -1, model_ = -1, req_ = -1, resp_ = -1, log_ = -1, total_ = -1, session_ = -1, elapsed_ = -1;
  std::vector<std::string_view> f_;
  std::vector<std::string> groups_;
  std::unordered_map<std::string, Session> sessions_;
  std::string key_;
};

}  // namespace

std::unique_ptr<TraceReader> make_burstgpt_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt) {
  return std::make_unique<BurstGptReader>(std::move(lines), opt);
}

}  // namespace servesim
