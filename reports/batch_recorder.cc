// The batch record writer; see batch_recorder.h and docs/reports.md.
#include "reports/batch_recorder.h"

#include "sim/core/error.h"

namespace servesim {
namespace {
constexpr std::size_t kFlushBytes = 64 * 1024;
}

BatchRecorder::BatchRecorder(BatchRecordOptions options, std::vector<BatchRecordWorker> workers)
    : opt_(std::move(options)), workers_(std::move(workers)), file_(opt_.path) {
  if (opt_.every < 1)
    throw InputError(fmt::format("--record-every: must be >= 1 (got {})", opt_.every));
  auto out = std::back_inserter(buf_);
  fmt::format_to(out, "# servesim batch record v1\n");
  fmt::format_to(out, "# model={} tp={} record_every={}\n", opt_.model, opt_.tp, opt_.every);
  for (std::size_t w = 0; w < workers_.size(); ++w)
    fmt::format_to(out, "# worker={} hardware={} cost_model={} attention={}\n", w, workers_[w].hardware,
                   workers_[w].cost_identity, workers_[w].attention_detail);
  fmt::format_to(out, "iteration,worker,start_ns,predicted_ns,attention,prefill_tokens,decode_tokens,prefills,decodes");
  for (const std::string& p : opt_.parts) fmt::format_to(out, ",{}_us", p);
  fmt::format_to(out, "\n");
}

void BatchRecorder::on_iteration(WorkerId w, Time start, Time duration, const BatchShape& b) {
  const std::int64_t index = seen_++;
  if (index % opt_.every != 0) return;
  const BatchRecordWorker& wk = workers_.at(w);
  auto out = std::back_inserter(buf_);
  fmt::format_to(out, "{},{},{},{},{},{},{},", index, w, start, duration, wk.attention, b.prefill_tokens(),
                 b.decode_tokens());
  for (std::size_t i = 0; i < b.prefills.size(); ++i)
    fmt::format_to(out, "{}{}:{}:{}", i ? ";" : "", b.prefills[i].new_tokens, b.prefills[i].context,
                   b.prefills[i].completes ? 1 : 0);
  buf_.push_back(',');
  for (std::size_t i = 0; i < b.decode_contexts.size(); ++i) fmt::format_to(out, "{}{}", i ? ";" : "", b.decode_contexts[i]);
  const std::vector<double> parts = wk.parts(b);
  SIM_CHECK(parts.size() == opt_.parts.size(), "{} part times for {} part columns", parts.size(), opt_.parts.size());
  for (double p : parts) fmt::format_to(out, ",{:.4f}", p);
  buf_.push_back('\n');
  ++written_;
  if (buf_.size() >= kFlushBytes) flush();
}

void BatchRecorder::flush() {
  file_.write(std::string_view(buf_.data(), buf_.size()));
  buf_.clear();
}

void BatchRecorder::close() {
  flush();
  file_.commit();
}

}  // namespace servesim
