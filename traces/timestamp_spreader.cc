// Spreading of quantized timestamps; see timestamp_spreader.h for the rule.
#include "traces/timestamp_spreader.h"

#include <algorithm>
#include <vector>

#include "traces/seeded_hash.h"

namespace servesim {
namespace {
constexpr std::uint64_t kSaltSpread = 0x5B4EAD;
}

TimestampSpreader::TimestampSpreader(const SpreadOptions& opt, std::uint64_t seed, Upstream upstream)
    : opt_(opt), seed_(seed), upstream_(std::move(upstream)) {}

void TimestampSpreader::fill_bucket() {
  if (!have_lookahead_) {
    if (done_ || !upstream_(lookahead_)) {
      done_ = true;
      return;
    }
  }
  const Time t = lookahead_.spec.arrival;
  bucket_.push_back(std::move(lookahead_));
  have_lookahead_ = false;
  while (!done_) {
    if (!upstream_(lookahead_)) {
      done_ = true;
      break;
    }
    if (lookahead_.spec.arrival != t) {
      have_lookahead_ = true;
      break;
    }
    bucket_.push_back(std::move(lookahead_));
  }
  const std::size_t n = bucket_.size();
  if (n == 1) return;
  Time w = seconds_to_time(opt_.bucket_s);
  if (have_lookahead_ && lookahead_.spec.arrival > t) w = std::min(w, lookahead_.spec.arrival - t);
  if (opt_.mode == SpreadOptions::Mode::kEven) {
    for (std::size_t k = 0; k < n; ++k)
      bucket_[k].spec.arrival = t + static_cast<Time>(static_cast<long double>(w) * k / n);
  } else {
    std::vector<Time> offs(n);
    for (std::size_t k = 0; k < n; ++k)
      offs[k] = static_cast<Time>(unit_interval(seeded_hash(seed_, kSaltSpread ^ static_cast<std::uint64_t>(t), k)) *
                                  static_cast<double>(w));
    std::sort(offs.begin(), offs.end());
    for (std::size_t k = 0; k < n; ++k) bucket_[k].spec.arrival = t + std::min(offs[k], w - 1);
  }
}

bool TimestampSpreader::next(TraceRow& out) {
  if (opt_.mode == SpreadOptions::Mode::kNone) return upstream_(out);
  if (bucket_.empty()) fill_bucket();
  if (bucket_.empty()) return false;
  out = std::move(bucket_.front());
  bucket_.pop_front();
  return true;
}

}  // namespace servesim
