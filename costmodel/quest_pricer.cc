// Quest (decode: quest; attention_method.h): the first dense_layers layers run
// dense decode; every other layer runs the metadata update for every decoding
// sequence, plus estimate + top-k + sparse decode over `budget` tokens for
// sequences whose context exceeds the budget (shorter ones have nothing to
// select and run the dense kernel). Needs the profile's quest_* rows (variant
// kvhead), fitted per head shape: the model's shape when measured, else the
// nearest measured shape (a scaling note; an error when
// cost_model.allow_scaling is false). Building a prompt's metadata during prefill is not charged (no
// bench row; docs/costmodel.md). Its memory effect: page metadata (a min and
// a max key vector per page, KV head and Quest layer), as a share of the
// page's KV: (layers − dense_layers) / (layers × page_size).
// Without any quest_* rows (a dense-only profile, e.g. an imported public
// table) and with scaling allowed, DerivedQuestPricer prices the same steps
// from the profile's dense kernels (derived_sparse.h; a note in identity()):
// per Quest layer, the metadata update of every decoding sequence (read its new
// key, read and write the page's min and max: 5 key vectors per KV head) and,
// for sequences whose context exceeds the budget, the estimate (read the min
// and max vector of every page: 2 key vectors per page and KV head) and the
// top-k over the page scores (one per page and KV head) as memory-bound
// kernels, and the dense decode over the selected pages (ceil(budget/16)
// pages of 16 tokens).
// Registry entry (attention_registry.h): quest_method(), parameters under
// attention.quest (quest_options()).
#include <algorithm>

#include <fmt/format.h>

#include "costmodel/attention_pricer.h"
#include "costmodel/attention_registry.h"
#include "costmodel/derived_sparse.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/quest_fits.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

// A batch's decoding sequences split by Quest's budget (both pricers): every sequence
// (`all`), those within the budget (dense: nothing to select), those past it, and the
// tokens of the pages selected for them. The new token's K/V is read too (ctx + 1).
struct QuestSplit {
  DecodeWork all, short_ctx;
  QuestWork sparse;
  DecodeWork selected;
};
QuestSplit split_by_budget(const BatchShape& b, std::int64_t budget) {
  QuestSplit s;
  for (std::int64_t ctx : b.decode_contexts) {
    const auto kv = static_cast<double>(ctx + 1);
    s.all.add(kv);
    if (ctx + 1 <= budget) {
      s.short_ctx.add(kv);
    } else {
      s.sparse.add(kv, budget);
      s.selected.add(static_cast<double>(std::min(quest_pages(ctx + 1), quest_pages(budget)) * kQuestPageSize));
    }
  }
  return s;
}

// The first dense_layers layers run dense decode, the rest Quest.
double over_layers(double layers, std::int64_t dense_layers, double dense_layer, double quest_layer) {
  const double dense = std::min(layers, static_cast<double>(dense_layers));
  return dense * dense_layer + (layers - dense) * quest_layer;
}

class QuestPricer final : public AttentionPricer {
 public:
  QuestPricer(const QuestParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    const std::string& file = ctx.fits->file();
    // The kvhead fits at the model's head shape, else at the nearest measured one.
    const auto& variants = quest_fits(*ctx.fits).variants;
    auto it = variants.find("kvhead");
    const auto* fit = it == variants.end() ? nullptr : nearest_head_shape(it->second, ctx.shape);
    q_ = fit ? &fit->second : nullptr;
    if (!q_ || q_->metadata.empty() || q_->estimate.empty() || q_->topk.empty() || q_->decode.empty())
      throw InputError(fmt::format("{}: attention.decode quest needs the quest_metadata, quest_estimate, quest_topk and "
                                   "quest_decode rows of variant kvhead; run `servesim-kernels bench --family quest`{}",
                                   file, it == variants.end() && !ctx.allow_scaling
                                             ? " (or allow cost_model.allow_scaling to derive Quest from the dense "
                                               "kernels)"
                                             : ""));
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
    const auto [all, short_ctx, sparse, selected] = split_by_budget(b, p_.budget);
    const double dense_layer = ctx_.dense->decode_us(all);
    const double e = ctx_.launch_excess_us;  // each of its own kernels is one launch
    double quest_layer = queued_us(q_->metadata.predict(quest_metadata_features(shape, QuestWork{all.seqs, 0, 0, 0})), e);
    if (short_ctx.seqs > 0) quest_layer += ctx_.dense->decode_us(short_ctx);
    if (sparse.seqs > 0)
      quest_layer += queued_us(q_->estimate.predict(quest_estimate_features(shape, sparse)), e) +
                     queued_us(q_->topk.predict(quest_topk_features(shape, sparse)), e) +
                     queued_us(q_->decode.predict(quest_decode_features(shape, sparse)), e);
    return over_layers(layers, p_.dense_layers, dense_layer, quest_layer);
  }

 private:
  QuestParams p_;
  AttentionPricingContext ctx_;
  const QuestFits* q_ = nullptr;
};

// Quest from the dense kernels (no quest_* rows; derived_sparse.h).
class DerivedQuestPricer final : public AttentionPricer {
 public:
  DerivedQuestPricer(const QuestParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    if (ctx.notes)
      ctx.notes->push_back("quest derived from the dense kernels (no quest rows): metadata update; page estimate and "
                           "top-k at the dense decode fit's bytes; dense decode over the budget pages");
    ctx_.notes = nullptr;
  }

  double us(const BatchShape& b) const override {
    if (b.decode_contexts.empty()) return 0;
    const auto layers = static_cast<double>(ctx_.layers);
    const HeadShape& h = ctx_.shape;
    const DenseAttentionKernels& dense = *ctx_.dense;
    const double key_vector_bytes = 2.0 * static_cast<double>(h.kv_heads * h.head_dim);  // one bf16 key per KV head
    const auto [all, short_ctx, sparse, selected] = split_by_budget(b, p_.budget);
    const double dense_layer = dense.decode_us(all);
    double quest_layer = memory_kernel_us(dense, h, all.seqs, all.seqs * 5 * key_vector_bytes);
    if (short_ctx.seqs > 0) quest_layer += dense.decode_us(short_ctx);
    if (sparse.seqs > 0)
      quest_layer += memory_kernel_us(dense, h, sparse.seqs, sparse.pages * 2 * key_vector_bytes) +
                     topk_kernel_us(dense, h, sparse.seqs, sparse.pages * static_cast<double>(h.kv_heads)) +
                     dense.decode_us(selected);
    return over_layers(layers, p_.dense_layers, dense_layer, quest_layer);
  }

 private:
  QuestParams p_;
  AttentionPricingContext ctx_;
};

}  // namespace

static const OptionTable<QuestParams>& quest_options() {
  using R = OptionRange;
  static const OptionTable<QuestParams> t = {
      {"budget", &QuestParams::budget, R::kPositive, "tokens attended per decode step"},
      {"dense_layers", &QuestParams::dense_layers, R::kNonNegative, "leading layers that stay dense"},
  };
  return t;
}

AttentionMethodType quest_method() {
  AttentionMethodType t;
  t.phase = AttentionPhase::kDecode;
  t.id = static_cast<std::uint8_t>(DecodeMethod::kQuest);
  t.name = method_name(DecodeMethod::kQuest);
  t.needs_profile = true;
  t.params_key = "quest";
  t.params = attention_param_docs(quest_options());
  t.parse = [](YamlMap& m, AttentionMethods& a) { read_options(m, quest_options(), a.quest); };
  t.write = [](YAML::Node& n, const AttentionMethods& a) { write_options(n, quest_options(), a.quest); };
  t.describe_params = [](const AttentionMethods& a) { return describe_options(quest_options(), a.quest); };
  t.make_pricer = [](const AttentionMethods& a, const AttentionPricingContext& ctx) -> std::unique_ptr<AttentionPricer> {
    if (ctx.allow_scaling && !quest_fits(*ctx.fits).variants.count("kvhead")) return std::make_unique<DerivedQuestPricer>(a.quest, ctx);
    return std::make_unique<QuestPricer>(a.quest, ctx);
  };
  t.kv_metadata_share = [](const ModelSpec& m, const AttentionMethods& a, std::int64_t page_size) {
    const auto sparse_layers = static_cast<double>(std::max<std::int64_t>(0, m.layers - a.quest.dense_layers));
    return sparse_layers / (static_cast<double>(m.layers) * static_cast<double>(page_size));
  };
  t.fitting = quest_fitting();
  return t;
}

}  // namespace servesim
