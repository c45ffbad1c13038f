// The pricing fast path; see priced_cost_model.h.
#include "costmodel/priced_cost_model.h"

#include "sim/core/error.h"

namespace servesim {
namespace {

constexpr auto kLmHead = static_cast<std::size_t>(Part::kLmHead);
constexpr auto kSampling = static_cast<std::size_t>(Part::kSampling);

bool is_attention(std::size_t i) {
  return i == static_cast<std::size_t>(Part::kAttentionPrefill) ||
         i == static_cast<std::size_t>(Part::kAttentionDecode) || i == static_cast<std::size_t>(Part::kAttentionKv);
}

}  // namespace

PricedCostModel::PricedCostModel(std::shared_ptr<const CostModel> backend)
    : backend_(std::move(backend)), split_(dynamic_cast<const TablePricedBackend*>(backend_.get())) {
  SIM_CHECK(split_ && split_->table_priceable(), "PricedCostModel over a backend that cannot be table-priced: {}",
            backend_->identity());
  prefill_sensitive_ = split_->prefill_sensitive();
}

const PricedCostModel::TokenRow& PricedCostModel::token_row(std::int64_t tokens, bool prefill) const {
  auto& table = tokens_[prefill ? 1 : 0];
  const auto i = static_cast<std::size_t>(tokens);
  if (i >= table.size()) table.resize(i + 1);
  TokenRow& row = table[i];
  if (row.filled) return row;
  // A synthetic batch with the same T (and prefill presence) and no logit rows.
  BatchShape b;
  if (prefill || !prefill_sensitive_)
    b.prefills.push_back(PrefillChunk{tokens, 0, false});
  else
    b.decode_contexts.assign(i, 0);  // decode-only: every token is a row; the R parts are dropped below
  row.parts = backend_->parts(b);
  for (std::size_t k = 0; k < kPartCount; ++k)
    if (is_attention(k) || k == kLmHead || k == kSampling) row.parts[k] = 0;
  row.filled = true;
  return row;
}

const PricedCostModel::RowsRow& PricedCostModel::rows_row(std::int64_t rows, bool prefill) const {
  auto& table = rows_[prefill ? 1 : 0];
  const auto i = static_cast<std::size_t>(rows);
  if (i >= table.size()) table.resize(i + 1);
  RowsRow& row = table[i];
  if (row.filled) return row;
  if (rows > 0) {  // no rows: the operation list has no lm_head or sampling
    BatchShape b;
    if (prefill || !prefill_sensitive_)
      b.prefills.assign(i, PrefillChunk{1, 0, true});
    else
      b.decode_contexts.assign(i, 0);
    const PartTimes p = backend_->parts(b);
    row.lm_head = p[kLmHead];
    row.sampling = p[kSampling];
  }
  row.filled = true;
  return row;
}

const PricedCostModel::TokenRow& PricedCostModel::decode_row(std::int64_t n) const {
  const auto i = static_cast<std::size_t>(n);
  if (i >= decode_.size()) decode_.resize(i + 1);
  TokenRow& row = decode_[i];
  if (row.filled) return row;
  row.parts = token_row(n, false).parts;
  const RowsRow& r = rows_row(n, false);
  row.parts[kLmHead] = r.lm_head;
  row.parts[kSampling] = r.sampling;
  row.stem = split_->row_stem(row.parts);
  row.tail = split_->row_tail(row.parts);
  row.filled = true;
  return row;
}

Time PricedCostModel::iteration_time(const BatchShape& b) const {
  if (b.empty()) return 0;
  const auto decodes = static_cast<std::int64_t>(b.decode_contexts.size());
  if (b.prefills.empty() && decodes <= kMaxTableTokens) {  // decode only: T = R = decodes, no prefill
    const TokenRow& row = decode_row(decodes);
    return split_->decode_time(b, row.parts, row.stem, row.tail);
  }
  std::int64_t tokens = decodes, rows = decodes;
  for (const PrefillChunk& c : b.prefills) {
    tokens += c.new_tokens;
    rows += c.completes ? 1 : 0;
  }
  if (tokens > kMaxTableTokens) return backend_->iteration_time(b);
  const bool prefill = prefill_sensitive_ && !b.prefills.empty();
  PartTimes p = token_row(tokens, prefill).parts;
  const RowsRow& r = rows_row(rows, prefill);
  p[kLmHead] = r.lm_head;
  p[kSampling] = r.sampling;
  split_->attention_parts(b, p);
  return split_->time_of(p);
}

std::size_t PricedCostModel::table_rows() const {
  std::size_t n = 0;
  for (const auto& t : tokens_)
    for (const auto& r : t) n += r.filled ? 1 : 0;
  for (const auto& t : rows_)
    for (const auto& r : t) n += r.filled ? 1 : 0;
  return n;  // (decode_ rows copy token and rows rows: not counted again)
}

std::shared_ptr<const CostModel> priced(std::shared_ptr<const CostModel> backend) {
  const auto* split = dynamic_cast<const TablePricedBackend*>(backend.get());
  if (!split || !split->table_priceable()) return backend;
  return std::make_shared<PricedCostModel>(std::move(backend));
}

}  // namespace servesim
