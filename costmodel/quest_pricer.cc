// Quest (decode: quest; attention_method.h): the first dense_layers layers run
// dense decode; every other layer runs the metadata update for every decoding
// sequence, plus estimate + top-k + sparse decode over `budget` tokens for
// sequences whose context exceeds the budget (shorter ones have nothing to
// select and run the dense kernel). Needs the profile's quest_* rows (variant
// kvhead). Building a prompt's metadata during prefill is not charged (no
// bench row; docs/costmodel.md).
#include <algorithm>

#include <fmt/format.h>

#include "costmodel/attention_pricer.h"
#include "costmodel/kernel_fits.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

class QuestPricer final : public AttentionPricer {
 public:
  QuestPricer(const QuestParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    const std::string& file = ctx.fits->file();
    auto it = ctx.fits->quest().find("kvhead");
    q_ = it == ctx.fits->quest().end() ? nullptr : &it->second;
    if (!q_ || q_->metadata.empty() || q_->estimate.empty() || q_->topk.empty() || q_->decode.empty())
      throw InputError(fmt::format("{}: attention.decode quest needs the quest_metadata, quest_estimate, quest_topk and "
                                   "quest_decode rows of variant kvhead; run `servesim-kernels bench --family quest`",
                                   file));
    if (q_->shape != ctx.shape) {
      if (!ctx.allow_scaling)
        throw InputError(fmt::format("{}: quest was measured at head shape {}, the model needs {}; "
                                     "cost_model.allow_scaling is false", file, q_->shape.label(), ctx.shape.label()));
      if (ctx.notes) ctx.notes->push_back(fmt::format("quest {} from {} at its own bytes", ctx.shape.label(), q_->shape.label()));
    }
    ctx_.notes = nullptr;
  }

  double us(const BatchShape& b) const override {
    if (b.decode_contexts.empty()) return 0;
    const auto layers = static_cast<double>(ctx_.layers);
    const HeadShape& shape = ctx_.shape;
    DecodeWork all;
    DecodeWork short_ctx;  // contexts within the budget run dense (nothing to select)
    QuestWork sparse;
    for (std::int64_t ctx : b.decode_contexts) {
      const auto kv = static_cast<double>(ctx + 1);  // the new token's K/V is read too
      all.add(kv);
      if (ctx + 1 <= p_.budget) {
        short_ctx.add(kv);
      } else {
        sparse.add(kv, p_.budget);
      }
    }
    const double dense_layer = ctx_.dense->decode_us(all);
    double quest_layer = q_->metadata.predict(quest_metadata_features(shape, QuestWork{all.seqs, 0, 0, 0}));
    if (short_ctx.seqs > 0) quest_layer += ctx_.dense->decode_us(short_ctx);
    if (sparse.seqs > 0)
      quest_layer += q_->estimate.predict(quest_estimate_features(shape, sparse)) +
                     q_->topk.predict(quest_topk_features(shape, sparse)) +
                     q_->decode.predict(quest_decode_features(shape, sparse));
    const double dense_layers = std::min(layers, static_cast<double>(p_.dense_layers));
    return dense_layers * dense_layer + (layers - dense_layers) * quest_layer;
  }

 private:
  QuestParams p_;
  AttentionPricingContext ctx_;
  const QuestFits* q_ = nullptr;
};

}  // namespace

std::unique_ptr<AttentionPricer> make_quest_pricer(const QuestParams& p, const AttentionPricingContext& ctx) {
  return std::make_unique<QuestPricer>(p, ctx);
}

}  // namespace servesim
