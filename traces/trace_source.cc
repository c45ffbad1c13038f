// The trace replay chain; see trace_source.h and trace_options.h.
#include "traces/trace_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/core/error.h"
#include "traces/readers/field_limits.h"
#include "traces/seeded_hash.h"

namespace servesim {
namespace {
constexpr std::uint64_t kSaltSample = 0x5A4B1E;
constexpr std::size_t kCommonBlocksRows = 1000;
}  // namespace

TraceSource::TraceSource(const TraceOptions& opt, ClientTable& clients, std::uint64_t seed)
    : opt_(opt),
      seed_(seed),
      clients_(clients),
      reader_(open_trace(opt.path, opt.read)),
      assigner_(opt.clients, opt.path, seed, clients) {
  const TraceFormatType& f = trace_format(reader_->format());
  rebase_ = opt_.time_origin == TraceOptions::Origin::kFirstRow ||
            (opt_.time_origin == TraceOptions::Origin::kAuto &&
             f.wall_clock);
  start_ns_ = seconds_to_time(opt_.start_s);
  has_end_ = std::isfinite(opt_.end_s);
  if (has_end_) end_ns_ = seconds_to_time(opt_.end_s);
  track_dropped_ = f.native;
  if (assigner_.needs_common_blocks()) {
    std::vector<const std::vector<BlockHash>*> blocks;
    TraceRow r;
    while (prefetch_.size() < kCommonBlocksRows && reader_->next(r)) prefetch_.push_back(std::move(r));
    for (const auto& p : prefetch_)
      if (!p.spec.prefix_blocks.empty()) blocks.push_back(&p.spec.prefix_blocks);
    assigner_.set_common_blocks(ClientAssigner::common_leading_blocks(blocks));
  }
  if (opt_.spread.mode != SpreadOptions::Mode::kNone)
    spreader_.emplace(opt_.spread, seed, [this](TraceRow& r) { return pull_rebased(r); });
}

bool TraceSource::pull_rebased(TraceRow& row) {
  if (!prefetch_.empty()) {
    row = std::move(prefetch_.front());
    prefetch_.pop_front();
  } else if (!reader_->next(row)) {
    return false;
  }
  if (rebase_) {
    if (!have_origin_) {
      origin_ = row.spec.arrival;
      have_origin_ = true;
    }
    row.spec.arrival -= origin_;
    if (row.spec.arrival < 0) row.spec.arrival = 0;  // only a dependent row can precede the first
  }
  return true;
}

void TraceSource::report_skips() {
  if (reader_->rows_skipped() > 0)
    std::fprintf(stderr, "servesim: warning: %s: skipped %lld bad rows (skip_bad_rows: true); first: %s\n",
                 opt_.path.c_str(), static_cast<long long>(reader_->rows_skipped()),
                 reader_->first_skip_reason().c_str());
}

bool TraceSource::next(RequestSpec& out) {
  if (finished_) return false;
  for (;;) {
    bool got = spreader_ ? spreader_->next(row_) : pull_rebased(row_);
    if (!got) break;
    RequestSpec& s = row_.spec;
    const bool dependent = !s.parents.empty();
    if (!dependent) {
      ++independent_rows_;
      last_arrival_ = std::max(last_arrival_, s.arrival);
      // Limits cut only before an independent request, so sessions and DAGs stay whole.
      if (opt_.max_requests > 0 && emitted_ >= opt_.max_requests) break;
      if (has_end_ && s.arrival >= end_ns_) break;  // arrivals are sorted: nothing later fits
    }
    // A dependent request follows its parents: kept iff none of them was dropped.
    bool keep = true;
    if (dependent) {
      if (track_dropped_ && !dropped_.empty())
        for (RequestId p : s.parents)
          if (dropped_.count(p)) keep = false;
    } else {
      keep = s.arrival >= start_ns_;
      if (keep && opt_.sample < 1.0) keep = unit_interval(seeded_hash(seed_, kSaltSample, s.id)) < opt_.sample;
    }
    if (!keep) {
      if (track_dropped_) dropped_.insert(s.id);
      continue;
    }
    Time t = s.arrival - start_ns_;
    if (t < 0) t = 0;
    if (opt_.rate_scale != 1.0) {
      const double scaled = std::round(static_cast<double>(t) / opt_.rate_scale);
      if (!(scaled <= static_cast<double>(kMaxTraceTimeNs)))
        throw InputError(located(opt_.path, row_.line,
                                 fmt::format("arrival {} ns divided by rate_scale {} is {:.4g} ns, past the {} ns "
                                             "limit of simulated time (docs/traces.md)",
                                             t, opt_.rate_scale, scaled, kMaxTraceTimeNs)));
      t = static_cast<Time>(scaled);
    }
    s.arrival = t;
    if (!declared_done_) {  // a native file's "# clients:" line fixes the table order
      declared_done_ = true;
      if (opt_.clients.by == ClientRule::By::kAuto || opt_.clients.by == ClientRule::By::kTrace)
        for (const auto& name : reader_->declared_clients()) clients_.intern(name);
    }
    assigner_.assign(row_);
    out = std::move(s);
    row_.spec = RequestSpec();
    ++emitted_;
    return true;
  }
  finished_ = true;
  report_skips();
  // A window past the trace's end (or before its start) ran 0 requests with exit 0.
  if (emitted_ == 0 && independent_rows_ > 0 && opt_.max_requests == 0 && opt_.sample >= 1.0)
    throw InputError(fmt::format(
        "{}: window.start_s {} .. end_s {} selects none of the trace's {} requests (the latest arrives at {:.6g} s{})",
        opt_.path, opt_.start_s, has_end_ ? fmt::format("{}", opt_.end_s) : std::string("(none)"), independent_rows_,
        time_to_seconds(last_arrival_), rebase_ ? ", counted from the first row" : ""));
  return false;
}

std::string TraceSource::describe() const {
  std::string s = fmt::format("trace {} {}: {} requests from {} rows", reader_->format(), opt_.path,
                              emitted_, reader_->rows_read());
  if (reader_->rows_skipped() > 0) s += fmt::format(", {} bad rows skipped", reader_->rows_skipped());
  if (reader_->rows_dropped() > 0) s += fmt::format(", {} failed rows dropped", reader_->rows_dropped());
  if (assigner_.common_blocks() >= 0 && opt_.clients.by == ClientRule::By::kPrefixBlock)
    s += fmt::format(", clients by prefix block {}", assigner_.common_blocks());
  return s;
}

}  // namespace servesim
