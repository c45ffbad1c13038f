// WorkEstimator: turns token counts into seconds with a worker's cost model,
// for global policies that weigh work (least_load, Preble E2's L/M/P terms).
// It asks CostModel::iteration_time for small synthetic batches, so it prices
// work exactly as the engine will (same backend, same calibration), and
// remembers recent answers (see prefill_s, decode_token_s, decode_step_s).
//
// OutputLengthEstimate: the mean output length of the requests that finished
// so far (what a real router can know), with a prior until the first finish.
// Non-oracle policies use it instead of RequestSpec::output_tokens.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "costmodel/cost_model.h"

namespace servesim {

class WorkEstimator {
 public:
  // Seconds to compute `tokens` prompt tokens after `context` cached ones, as one
  // iteration (a chunked prefill costs a little more per-iteration overhead).
  // Memoized in a small direct-mapped table keyed by (model, tokens, context):
  // Preble prices every worker for every request it explores, mostly with the
  // same few shapes (workers share model instances; most hold nothing of the
  // prompt). Exact, since CostModel::iteration_time is a pure function of the
  // batch (cost_model.h; the stateful wrappers, ExplainingCostModel and
  // MeasuredCostModel, only ever price the engine's iterations, never a
  // policy's estimates: run_builder.cc gives policies the plain model).
  double prefill_s(const CostModel& m, std::int64_t tokens, std::int64_t context) {
    if (tokens <= 0) return 0;
    Memo& e = slot(prefill_memo_, m, tokens, context);
    if (e.holds(m, tokens, context)) return e.s;
    shape_.clear();
    shape_.prefills.push_back(PrefillChunk{tokens, context, true});
    e = Memo{&m, tokens, context, time_to_seconds(m.iteration_time(shape_))};
    return e.s;
  }
  // Seconds per generated token when `batch` requests with mean context `ctx`
  // decode together. Memoized per (model, batch, ctx rounded to 256 tokens),
  // since a batch of B requests costs O(B) to price.
  double decode_token_s(const CostModel& m, std::int64_t batch, std::int64_t ctx) {
    batch = std::max<std::int64_t>(1, batch);
    return decode_step_s(m, batch, ctx) / static_cast<double>(batch);
  }
  // Seconds of one decode step of that batch: the time between two tokens of
  // each of its requests (TPOT), what Preble's router measures per GPU.
  // Memoized as decode_token_s is, in a direct-mapped table as prefill_s is (a
  // tree of every shape seen cost a chain of cold nodes per routed request).
  double decode_step_s(const CostModel& m, std::int64_t batch, std::int64_t ctx) {
    batch = std::max<std::int64_t>(1, batch);
    const std::int64_t bucket = (std::max<std::int64_t>(0, ctx) + 128) / 256;
    Memo& e = slot(decode_memo_, m, batch, bucket);
    if (e.holds(m, batch, bucket)) return e.s;
    shape_.clear();
    shape_.decode_contexts.assign(static_cast<std::size_t>(batch), bucket * 256);
    e = Memo{&m, batch, bucket, time_to_seconds(m.iteration_time(shape_))};
    return e.s;
  }

 private:
  // One answer of a memo table: the price of the shape (model, a, b): (tokens,
  // context) for prefill_s, (batch, context bucket) for decode_step_s.
  struct Memo {
    const CostModel* model = nullptr;  // null: empty
    std::int64_t a = 0, b = 0;
    double s = 0;
    bool holds(const CostModel& m, std::int64_t x, std::int64_t y) const { return model == &m && a == x && b == y; }
  };
  // The slot of (m, a, b) in a direct-mapped table (its size a power of two).
  static Memo& slot(std::vector<Memo>& table, const CostModel& m, std::int64_t a, std::int64_t b) {
    std::uint64_t h = (static_cast<std::uint64_t>(a) * 0x9E3779B97F4A7C15ull) ^
                      (static_cast<std::uint64_t>(b) * 0xC2B2AE3D27D4EB4Full + reinterpret_cast<std::uintptr_t>(&m));
    h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return table[h & (table.size() - 1)];
  }
  BatchShape shape_;
  std::vector<Memo> prefill_memo_ = std::vector<Memo>(512);
  std::vector<Memo> decode_memo_ = std::vector<Memo>(1024);
};

class OutputLengthEstimate {
 public:
  explicit OutputLengthEstimate(double prior = 256) : prior_(prior) {}
  void add(std::int64_t output_tokens) {
    sum_ += static_cast<double>(output_tokens);
    ++n_;
  }
  double mean() const { return n_ == 0 ? prior_ : sum_ / static_cast<double>(n_); }

 private:
  double prior_;
  double sum_ = 0;
  std::uint64_t n_ = 0;
};

}  // namespace servesim
