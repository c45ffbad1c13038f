// TraceSource: the RequestSource that replays a trace file through the
// transformation chain of TraceOptions (order and rules in trace_options.h).
// It streams: memory holds one spread bucket, the first 1000 rows while
// `clients.common_blocks: auto` is being resolved, and — for native traces
// with dependencies — the ids of dropped rows, so that a request whose parent
// was dropped by the window or the sample is dropped too (never left waiting
// for a parent that will not come).
//
// Request ids are the trace's (native, VTC) or the data-row ordinal, so they
// are unique but not dense after sampling. When the stream ends with bad rows
// skipped (skip_bad_rows), a one-line warning with the count and the first
// reason goes to stderr; describe() states the counts too.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "sim/core/request_source.h"
#include "traces/client_assigner.h"
#include "traces/timestamp_spreader.h"
#include "traces/trace_options.h"
#include "traces/readers/trace_reader.h"

namespace servesim {

class TraceSource final : public RequestSource {
 public:
  // Opens the file (format detection, header checks: may throw InputError).
  TraceSource(const TraceOptions& opt, ClientTable& clients, std::uint64_t seed);

  bool next(RequestSpec& out) override;
  std::string describe() const override;

  const TraceReader& reader() const { return *reader_; }
  std::int64_t emitted() const { return emitted_; }

 private:
  bool pull_rebased(TraceRow& row);  // reader (+ prefetch) with time_origin applied
  void report_skips();

  TraceOptions opt_;
  std::uint64_t seed_;
  ClientTable& clients_;
  std::unique_ptr<TraceReader> reader_;
  ClientAssigner assigner_;
  std::optional<TimestampSpreader> spreader_;
  std::deque<TraceRow> prefetch_;
  bool rebase_ = false;
  bool have_origin_ = false;
  Time origin_ = 0;
  Time start_ns_ = 0;
  bool has_end_ = false;
  Time end_ns_ = 0;
  bool track_dropped_ = false;
  std::unordered_set<RequestId> dropped_;
  std::int64_t emitted_ = 0;
  bool finished_ = false;
  std::int64_t independent_rows_ = 0;  // rows read that start a request (not a dependent one)
  Time last_arrival_ = 0;              // the latest such row's arrival (rebased), for the empty-window error
  bool declared_done_ = false;
  TraceRow row_;
};

}  // namespace servesim
