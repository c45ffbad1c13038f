// Dense decode from the profile's uniform rows; see decode_grid.h.
#include "costmodel/decode_grid.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace servesim {
namespace {

double fit_us(const FeatureFit& fit, const HeadShape& h, double seqs, double kv_len) {
  DecodeWork w;
  w.seqs = seqs;
  w.kv_tokens = seqs * kv_len;
  return fit.predict(decode_features(h, w));
}

// The fit's ratio between two shapes, 1 when the fit cannot say (empty or not positive).
double fit_ratio(const FeatureFit& fit, const HeadShape& h, double to_seqs, double to_kv, double from_seqs,
                 double from_kv) {
  if (fit.empty()) return 1;
  const double to = fit_us(fit, h, to_seqs, to_kv), from = fit_us(fit, h, from_seqs, from_kv);
  return to > 0 && from > 0 && std::isfinite(to / from) ? to / from : 1;
}

// For p inside [pos.front(), pos.back()] (pos ascending, at least two): the interval
// i with pos[i] <= p < pos[i + 1] (the last one at pos.back()) and p's weight on its
// upper end, linear in pos (the callers' positions are logarithms).
struct Interval {
  std::size_t i;
  double w;
};
// The same, with the interval searched among `values` (ascending, pos[j] = log(values[j]))
// for v (p = log v), so the search need not wait for the logarithm. It is the interval
// interval() finds: where the two could differ, p equals a neighbour's position and the
// weight is exactly 0 or 1 either way, the same price.
// Interval i of `pos` and p's weight on its upper end.
Interval at_interval(const std::vector<double>& pos, std::size_t i, double p) {
  return {i, (p - pos[i]) / (pos[i + 1] - pos[i])};
}
Interval interval_of(const std::vector<double>& values, double v, const std::vector<double>& pos, double p) {
  const auto it = std::upper_bound(values.begin(), values.end(), v);
  return at_interval(pos, std::min<std::size_t>(static_cast<std::size_t>(it - values.begin()), values.size() - 1) - 1, p);
}
// interval_of() trying `*hint` first (null: no hint). The hint h is taken when
// values[h] <= v < values[h + 1], which makes upper_bound's answer h + 1, so the
// same interval; else the search runs and leaves its answer in *hint.
Interval interval_of(const std::vector<double>& values, double v, const std::vector<double>& pos, double p,
                     std::uint16_t* hint) {
  if (!hint) return interval_of(values, v, pos, p);
  const std::size_t h = *hint;
  if (h + 1 < values.size() && values[h] <= v && v < values[h + 1]) return at_interval(pos, h, p);
  const Interval r = interval_of(values, v, pos, p);
  *hint = static_cast<std::uint16_t>(std::min<std::size_t>(r.i, 0xFFFF));
  return r;
}
Interval interval(const std::vector<double>& pos, double p) { return interval_of(pos, p, pos, p); }

}  // namespace

BatchSpans::BatchSpans(const std::vector<double>& log_batches, const std::vector<double>& batches) {
  first_ = std::floor(batches.front()) + 1;
  const double last = std::ceil(batches.back()) - 1;
  // Tables of whole sizes up to 65,536 (a batch is at most a worker's running set).
  for (double s = first_; s <= std::min(last, 65536.0); s += 1) {
    const auto [i, w] = interval(log_batches, std::log(s));
    whole_.push_back({i, w});
  }
}

BatchSpans::Span BatchSpans::computed(const std::vector<double>& log_batches, double seqs) {
  const auto [i, w] = interval(log_batches, std::log(seqs));
  return {i, w};
}

std::optional<DecodeGrid> DecodeGrid::build(const std::map<std::pair<double, double>, double>& points) {
  DecodeGrid g;
  for (const auto& [key, us] : points) {
    const auto [batch, kv] = key;
    if (!(batch >= 1) || !(kv >= 1) || !(us > 0)) continue;
    if (g.batches_.empty() || g.batches_.back() != batch) {
      g.batches_.push_back(batch);
      g.log_batches_.push_back(std::log(batch));
      g.rows_.emplace_back();
    }
    Row& r = g.rows_.back();
    r.kv.push_back(kv);
    r.log_kv.push_back(std::log(kv));
    r.us.push_back(r.us.empty() ? us : std::max(us, r.us.back()));  // non-decreasing in KV length
  }
  if (g.batches_.size() < 2 || g.points() < 4) return std::nullopt;
  g.spans_ = BatchSpans(g.log_batches_, g.batches_);
  return g;
}

std::size_t DecodeGrid::points() const {
  std::size_t n = 0;
  for (const Row& r : rows_) n += r.kv.size();
  return n;
}

std::string DecodeGrid::describe() const {
  std::size_t lo = rows_.front().kv.size(), hi = lo;
  double kv_lo = rows_.front().kv.front(), kv_hi = kv_lo;
  for (const Row& r : rows_) {
    lo = std::min(lo, r.kv.size());
    hi = std::max(hi, r.kv.size());
    kv_lo = std::min(kv_lo, r.kv.front());
    kv_hi = std::max(kv_hi, r.kv.back());
  }
  return fmt::format("{} batches x {}-{} KV lengths, batch {}-{}, KV {}-{}", batches_.size(), lo, hi, batches_.front(),
                     batches_.back(), kv_lo, kv_hi);
}

double DecodeGrid::at_batch(std::size_t i, double kv, double log_kv, const FeatureFit& fit, const HeadShape& h,
                            std::uint16_t* hint) const {
  const Row& r = rows_[i];
  const double b = batches_[i];
  if (kv <= r.kv.front()) return r.us.front() * fit_ratio(fit, h, b, kv, b, r.kv.front());
  if (kv >= r.kv.back()) return r.us.back() * fit_ratio(fit, h, b, kv, b, r.kv.back());
  const auto [j, w] = interval_of(r.kv, kv, r.log_kv, log_kv, hint);
  return r.us[j] * (1 - w) + r.us[j + 1] * w;
}

double DecodeGrid::us(double seqs, double kv_tokens, const FeatureFit& fit, const HeadShape& h) const {
  const double kv = kv_tokens / seqs;  // the mean KV length
  return us_at(seqs, kv, std::log(kv), fit, h, nullptr);
}

double DecodeGrid::us_at(double seqs, double kv, double log_kv, const FeatureFit& fit, const HeadShape& h,
                         std::uint16_t* hints) const {
  std::uint16_t* lower = hints;
  std::uint16_t* upper = hints ? hints + 1 : nullptr;
  if (seqs <= batches_.front())
    return at_batch(0, kv, log_kv, fit, h, lower) * fit_ratio(fit, h, seqs, kv, batches_.front(), kv);
  const std::size_t last = batches_.size() - 1;
  if (seqs >= batches_[last])
    return at_batch(last, kv, log_kv, fit, h, lower) * fit_ratio(fit, h, seqs, kv, batches_[last], kv);
  const auto [i, w] = spans_.at(log_batches_, seqs);
  if (w == 0) return at_batch(i, kv, log_kv, fit, h, lower);  // a measured batch size: one row
  return at_batch(i, kv, log_kv, fit, h, lower) * (1 - w) + at_batch(i + 1, kv, log_kv, fit, h, upper) * w;
}

std::optional<RaggedDecode> RaggedDecode::build(std::vector<Pair> pairs) {
  std::sort(pairs.begin(), pairs.end(),
            [](const Pair& a, const Pair& b) { return a.batch != b.batch ? a.batch < b.batch : a.spread < b.spread; });
  RaggedDecode r;
  for (const Pair& p : pairs) {
    if (!(p.batch >= 1) || !(p.spread > 1) || !(p.ratio > 0) || !std::isfinite(p.ratio)) continue;
    if (r.batches_.empty() || r.batches_.back() != p.batch) {
      r.batches_.push_back(p.batch);
      r.log_batches_.push_back(std::log(p.batch));
      r.rows_.emplace_back();
    }
    r.rows_.back().spread.push_back(p.spread);
    r.rows_.back().log_spread.push_back(std::log(p.spread));
    r.rows_.back().ratio.push_back(p.ratio);
    ++r.pairs_;
  }
  if (r.pairs_ == 0) return std::nullopt;
  if (r.batches_.size() >= 2) r.spans_ = BatchSpans(r.log_batches_, r.batches_);
  return r;
}

double RaggedDecode::at_batch(std::size_t i, double spread, double ls, std::uint16_t* hint) const {
  const Row& r = rows_[i];
  if (ls <= r.log_spread.front()) return 1 + (r.ratio.front() - 1) * ls / r.log_spread.front();  // from 1 at spread 1
  if (ls >= r.log_spread.back()) return r.ratio.back();
  const auto [j, w] = interval_of(r.spread, spread, r.log_spread, ls, hint);
  return r.ratio[j] * (1 - w) + r.ratio[j + 1] * w;
}

double RaggedDecode::factor(double seqs, double spread) const {
  if (!(spread > 1)) return 1;
  return factor_at(seqs, spread, std::log(spread), nullptr);
}

double RaggedDecode::factor_at(double seqs, double spread, double ls, std::uint16_t* hints) const {
  std::uint16_t* lower = hints;
  std::uint16_t* upper = hints ? hints + 1 : nullptr;
  if (seqs <= batches_.front()) return at_batch(0, spread, ls, lower);
  const std::size_t last = batches_.size() - 1;
  if (seqs >= batches_[last]) return at_batch(last, spread, ls, lower);
  const auto [i, w] = spans_.at(log_batches_, seqs);
  return at_batch(i, spread, ls, lower) * (1 - w) + at_batch(i + 1, spread, ls, upper) * w;
}

}  // namespace servesim
