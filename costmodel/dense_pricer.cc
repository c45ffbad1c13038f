// Dense prefill and dense decode: the backend's dense kernels in every layer.
// Prefill chunks of one iteration form one varlen launch per layer, decodes
// one ragged launch; decode reads ctx + 1 KV tokens (the new token's K/V is
// appended first). Also the registry entries of the default methods
// (prefill: dense, decode: dense, kv: none; attention_registry.h): no
// parameters, priced by both backends, no memory effect.
#include <algorithm>

#include "costmodel/attention_pricer.h"
#include "costmodel/attention_registry.h"

namespace servesim {
namespace {

class DensePrefill final : public AttentionPricer {
 public:
  explicit DensePrefill(const AttentionPricingContext& ctx) : dense_(ctx.dense), layers_(ctx.layers) {}
  double us(const BatchShape& b) const override {
    if (b.prefills.empty()) return 0;
    PrefillWork w;
    for (const PrefillChunk& c : b.prefills) w.add(static_cast<double>(c.new_tokens), static_cast<double>(c.context));
    return static_cast<double>(layers_) * (w.rows > 0 ? dense_->prefill_us(w) : 0.0);
  }

 private:
  const DenseAttentionKernels* dense_;
  std::int64_t layers_;
};

static_assert(static_cast<double>(kDecodeSplitTokenCount) == kDecodeSplitTokens,
              "batch_shape.h's split granularity must be kernel_features.h's");
static_assert((kDecodeSplitTokenCount & (kDecodeSplitTokenCount - 1)) == 0, "a power of two (a shift)");

class DenseDecode final : public AttentionPricer {
 public:
  explicit DenseDecode(const AttentionPricingContext& ctx) : dense_(ctx.dense), layers_(ctx.layers) {}
  double us(const BatchShape& b) const override {
    if (b.decode_contexts.empty()) return 0;
    // Kept by the engine (batch_shape.h): no pass over the contexts.
    if (b.decode_sums) return static_cast<double>(layers_) * dense_->decode_us(decode_work_from_sums(b));
    // DecodeWork::add per request, in integers (the engine's hottest loop when it
    // hands no sums: one pass per iteration over every decode). Exact: the sums are
    // integers far below 2^53, and ceil(n / 256) == (n + 255) / 256 for n >= 1.
    // Contexts are token counts (>= 0): unsigned sums and a shift, which the
    // compiler vectorizes (GCC builds this file with -ftree-vectorize: CMakeLists.txt).
    const std::int64_t* c = b.decode_contexts.data();
    const std::size_t n = b.decode_contexts.size();
    std::uint64_t sum = 0, split_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto a = static_cast<std::uint64_t>(c[i]);
      sum += a;
      split_sum += decode_split_count(a);
    }
    std::int64_t max_kv = 0;
    if (dense_->uses_max_kv()) {  // a pass of its own: a 64-bit max would keep the loop above scalar
      std::uint64_t longest = 0;
      for (std::size_t i = 0; i < n; ++i) longest = std::max(longest, static_cast<std::uint64_t>(c[i]));
      max_kv = static_cast<std::int64_t>(longest + 1);
    }
    DecodeWork w;
    w.seqs = static_cast<double>(n);
    w.kv_tokens = static_cast<double>(static_cast<std::int64_t>(sum + n));  // + 1 per request: its new token
    w.kv_splits = static_cast<double>(static_cast<std::int64_t>(split_sum));
    w.max_kv = static_cast<double>(max_kv);
    w.hints = &b.search_hints;
    return static_cast<double>(layers_) * dense_->decode_us(w);
  }

 private:
  const DenseAttentionKernels* dense_;
  std::int64_t layers_;
};

}  // namespace

AttentionMethodType dense_prefill_method() {
  AttentionMethodType t;
  t.phase = AttentionPhase::kPrefill;
  t.id = static_cast<std::uint8_t>(PrefillMethod::kDense);
  t.name = method_name(PrefillMethod::kDense);
  t.make_pricer = [](const AttentionMethods&, const AttentionPricingContext& ctx) {
    return std::unique_ptr<AttentionPricer>(std::make_unique<DensePrefill>(ctx));
  };
  return t;
}

AttentionMethodType dense_decode_method() {
  AttentionMethodType t;
  t.phase = AttentionPhase::kDecode;
  t.id = static_cast<std::uint8_t>(DecodeMethod::kDense);
  t.name = method_name(DecodeMethod::kDense);
  t.make_pricer = [](const AttentionMethods&, const AttentionPricingContext& ctx) {
    return std::unique_ptr<AttentionPricer>(std::make_unique<DenseDecode>(ctx));
  };
  return t;
}

AttentionMethodType no_kv_method() {
  AttentionMethodType t;
  t.phase = AttentionPhase::kKv;
  t.id = static_cast<std::uint8_t>(KvMethod::kNone);
  t.name = method_name(KvMethod::kNone);
  return t;  // no pricer, no eviction: the KV stays as prefill wrote it
}

}  // namespace servesim
