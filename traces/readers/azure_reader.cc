// Azure LLM inference traces (AzurePublicDataset; 2023 Splitwise files and the
// 2024 week-long DynamoLLM files): CSV with header
// TIMESTAMP,ContextTokens,GeneratedTokens (any column order). TIMESTAMP is a
// wall-clock "YYYY-MM-DD HH:MM:SS.fffffff" with an optional zone suffix; the
// arrival is that instant in ns since 1970 (the transformation chain rebases
// it to the first row). Both token counts must be >= 1.
#include <vector>

#include "traces/readers/csv_columns.h"
#include "traces/readers/field_limits.h"
#include "traces/readers/field_parse.h"
#include "traces/readers/trace_reader.h"

namespace servesim {
namespace {

class AzureReader final : public TraceReader {
 public:
  AzureReader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt)
      : TraceReader(std::move(lines), "azure", opt) {
    CsvColumns cols;
    if (!cols.parse(read_header())) header_error("unterminated double quote");
    ts_ = cols.find({"TIMESTAMP"});
    ctx_ = cols.find({"ContextTokens"});
    gen_ = cols.find({"GeneratedTokens"});
    if (ts_ < 0 || ctx_ < 0 || gen_ < 0)
      header_error(fmt::format("missing column '{}'; Azure traces need TIMESTAMP, ContextTokens, GeneratedTokens "
                               "(header has: {})",
                               ts_ < 0 ? "TIMESTAMP" : ctx_ < 0 ? "ContextTokens" : "GeneratedTokens", cols.list()));
    cols_ = cols;
    names_.resize(cols.size());
    names_[ts_] = "TIMESTAMP";
    names_[ctx_] = "ContextTokens";
    names_[gen_] = "GeneratedTokens";
  }

 protected:
  bool parse(std::string_view line, TraceRow& row) override {
    split_row(line, f_, cols_, names_);
    if (!parse_datetime_ns(f_[ts_], row.spec.arrival, dates_))
      throw RowError{"TIMESTAMP", "expected a date-time like 2023-11-16 18:17:03.9799600, got " + quote_value(f_[ts_])};
    if (row.spec.arrival < 0 || row.spec.arrival > kMaxTraceTimeNs)
      throw RowError{"TIMESTAMP", fmt::format("expected a date in years {}..{} (UTC), got {}", kMinTraceYear,
                                              kMaxTraceYear, quote_value(f_[ts_]))};
    row.spec.prompt_tokens = positive_field(f_[ctx_], "ContextTokens", kMaxTraceTokens);
    row.spec.output_tokens = positive_field(f_[gen_], "GeneratedTokens", kMaxTraceTokens);
    return true;
  }

 private:
  CsvColumns cols_;
  std::vector<std::string> names_;
  int ts_ = -1, ctx_ = -1, gen_ = -1;
  std::vector<std::string_view> f_;
  DateCache dates_;
};

}  // namespace

std::unique_ptr<TraceReader> make_azure_reader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt) {
  return std::make_unique<AzureReader>(std::move(lines), opt);
}

}  // namespace servesim
