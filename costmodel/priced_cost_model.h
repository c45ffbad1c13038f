// PricedCostModel: the pricing fast path. A decorator over any
// backend that opts in through TablePricedBackend; the engine asks it for
// every iteration's time, and it answers from per-model tables instead of
// walking the operation list and pricing every GEMM again.
//
// Why it is exact. Every part of the operation list (operation_list.h) but
// attention is a function of three integers of the batch: T (all tokens),
// R (rows producing logits) and whether the batch has prefills (a backend
// with CUDA-graph decode prices eager and graph kernels differently):
//   T:     embedding, attn_norm, qkv, rope, kv_write, o, mlp_norm, gate_up,
//          activation, down, allreduce, final_norm (and launch, overhead, other:
//          constants);
//   R:     lm_head, sampling;
//   batch: attention_prefill, attention_decode, attention_kv (the method's pricers).
// The tables hold the backend's own parts() of a synthetic batch with the same
// (T, has-prefill) or (R, has-prefill), filled on first use (a row is priced
// once per run, not once per iteration); attention is priced by the backend
// per iteration, and the backend turns the parts into a time with the same
// arithmetic (same order of additions) as its iteration_time(): results are
// bit-identical, not approximately equal.
//
// Decode-only batches also skip the start of the backend's sum: a decode row keeps
// the backend's row_stem() (TablePricedBackend), the sum up to the first part that
// varies, and the backend continues from it (bit-identical by contract). A decode
// row also keeps row_tail(), the parts after attention summed ahead: the roofline
// adds that one number instead of its parts wherever the two sums cannot round to
// different nanoseconds (roofline_cost_model.cc, time_if_clear), so the answer is
// still the same integer time.
//
// Memory: one row of PartTimes and two sums (184 B) per distinct T seen, plus 16 B per R,
// plus one more row per decode-only batch size seen (decode_row);
// T up to kMaxTableTokens (larger batches go to the backend directly). Workers
// equal by value share one backend (configs/run_builder.cc) and so one table.
// Not thread-safe (the tables fill lazily): one instance per run, as
// execute_run builds them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "sim/core/huge_page_allocator.h"

namespace servesim {

// What a backend implements to be table-priced.
class TablePricedBackend {
 public:
  virtual ~TablePricedBackend() = default;
  // False: this configuration of the backend is not separable (e.g. the
  // roofline's flat model, whose iteration_time() is not a sum of parts).
  virtual bool table_priceable() const = 0;
  // True when non-attention parts also depend on whether the batch has prefills.
  virtual bool prefill_sensitive() const = 0;
  // The batch's attention parts (prefill, decode, kv), as parts() computes them; other entries untouched.
  virtual void attention_parts(const BatchShape& b, PartTimes& p) const = 0;
  // iteration_time() of a non-empty batch whose parts() are p, same arithmetic.
  virtual Time time_of(const PartTimes& p) const = 0;
  // Optional, for decode-only batches (the commonest): `stem` is what the backend's
  // sum has accumulated before it reaches a part that varies between batches of the
  // same size (attention), computed once per table row from the row's parts;
  // time_of_stem(p, row_stem(p)) == time_of(p), bit for bit, for any attention parts
  // in p. The defaults do no work ahead.
  virtual double row_stem(const PartTimes&) const { return 0; }
  virtual Time time_of_stem(const PartTimes& p, double) const { return time_of(p); }
  // Optional, with decode_time: what the backend's sum adds after the varying parts,
  // computed once per table row in any order (so not the bits of its own sum: a
  // backend may use it only where it can tell the difference cannot change the
  // answer; roofline_cost_model.cc). The default does no work ahead.
  virtual double row_tail(const PartTimes&) const { return 0; }
  // Optional: a decode-only batch's time from its table row (`row`: the parts
  // with attention 0, `stem` = row_stem(row), `tail` = row_tail(row)), the same
  // bits as the default: the row with the batch's attention parts, through time_of_stem().
  virtual Time decode_time(const BatchShape& b, const PartTimes& row, double stem, double /*tail*/) const {
    PartTimes p = row;
    attention_parts(b, p);
    return time_of_stem(p, stem);
  }
};

class PricedCostModel final : public CostModel {
 public:
  static constexpr std::int64_t kMaxTableTokens = 1 << 16;
  // REQUIRES: backend implements TablePricedBackend with table_priceable().
  explicit PricedCostModel(std::shared_ptr<const CostModel> backend);

  Time iteration_time(const BatchShape& batch) const override;
  PartTimes parts(const BatchShape& batch) const override { return backend_->parts(batch); }
  std::string identity() const override { return backend_->identity(); }
  bool calibrated() const override { return backend_->calibrated(); }
  // The tables read no context; the backend's pricers and its own answer past the table do.
  bool reads_decode_contexts() const override { return backend_->reads_decode_contexts(); }
  const CostModel& backend() const { return *backend_; }
  // Table rows filled so far (tests, docs).
  std::size_t table_rows() const;

 private:
  struct TokenRow {
    bool filled = false;
    PartTimes parts{};  // T-dependent and constant parts; attention and R parts 0
    double stem = 0;    // decode_ rows: the backend's row_stem(parts)
    double tail = 0;    // decode_ rows: the backend's row_tail(parts)
  };
  struct RowsRow {
    bool filled = false;
    double lm_head = 0, sampling = 0;
  };
  const TokenRow& token_row(std::int64_t tokens, bool prefill) const;
  const RowsRow& rows_row(std::int64_t rows, bool prefill) const;
  // A decode-only batch of n requests: token_row(n) with rows_row(n)'s lm_head and
  // sampling in place (one lookup for the commonest batch).
  const TokenRow& decode_row(std::int64_t n) const;

  std::shared_ptr<const CostModel> backend_;
  const TablePricedBackend* split_;
  bool prefill_sensitive_;
  // [has-prefill][T] and [has-prefill][R]; index 0 only when not prefill-sensitive.
  // (Read at random every iteration: kept in huge pages when large, sim/core/huge_page_allocator.h.)
  mutable std::vector<TokenRow, HugePageAllocator<TokenRow>> tokens_[2];
  mutable std::vector<RowsRow, HugePageAllocator<RowsRow>> rows_[2];
  mutable std::vector<TokenRow, HugePageAllocator<TokenRow>> decode_;
};

// `backend` wrapped in a PricedCostModel when it can be table-priced, else itself.
std::shared_ptr<const CostModel> priced(std::shared_ptr<const CostModel> backend);

}  // namespace servesim
