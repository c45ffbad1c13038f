// TimestampSpreader: spreads requests that share one quantized timestamp
// across the bucket that timestamp stands for, instead of replaying them as
// one synthetic burst (Mooncake's timestamps are multiples of ~3 s with ~10
// requests each). The rule (SpreadOptions in trace_options.h, stated in the
// resolved config): a bucket is a run of consecutive rows with the same
// timestamp T; its width is w = min(bucket_s, T_next - T), with T_next the
// next row's timestamp (bucket_s for the last bucket); `even` places row k of
// n at T + floor(k*w/n), `uniform` at the k-th smallest of n seeded uniform
// offsets in [0, w). So arrivals never decrease, stay inside [T, T_next), and
// a row alone at its timestamp keeps it. Memory: one bucket plus one row.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>

#include "traces/trace_options.h"

namespace servesim {

class TimestampSpreader {
 public:
  using Upstream = std::function<bool(TraceRow&)>;  // false at end of stream
  TimestampSpreader(const SpreadOptions& opt, std::uint64_t seed, Upstream upstream);

  // Next row with its spread arrival; false at end of stream.
  bool next(TraceRow& out);

 private:
  void fill_bucket();

  SpreadOptions opt_;
  std::uint64_t seed_;
  Upstream upstream_;
  std::deque<TraceRow> bucket_;
  TraceRow lookahead_;
  bool have_lookahead_ = false;
  bool done_ = false;
};

}  // namespace servesim
