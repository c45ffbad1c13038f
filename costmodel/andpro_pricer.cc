// AnDPro (kv: andpro; attention_method.h): when a prompt of n tokens completes,
// every layer pays score + select + compact (kept tokens as AndproParams
// computes them); nothing when n <= budget + window. allocation picks the
// selection and compaction kernels: layer_topk (default) andpro_select_layer +
// andpro_compact_ragged, equal andpro_select + andpro_compact. Its memory effect
// is the engine's (KvEviction: kept_tokens() of AndproParams, with layer_topk's
// worst-case per-head page rounding). The decode steps after it are priced by
// the decode method over that compacted context: a ragged cache is decoded per
// (sequence, KV head, 256-token split) work item, so its time follows the sum of
// the heads' lengths (= the equal split's total), not the longest head
// (docs/sparse_kernels.md, "AnDPro"). Needs the profile's andpro_* rows of the
// window. Registry entry (attention_registry.h): andpro_method(), parameters
// under attention.andpro (andpro_options()).
//
// Without any andpro_* rows (a dense-only profile) and with scaling allowed,
// DerivedAndproPricer prices the same three steps from the profile's dense
// kernels (derived_sparse.h; a note in identity()), per layer and completed
// prompt: the scoring scan reads the K and V of the n - window candidates
// (memory-bound); the selection is a top-k over the (n - window) / block block
// scores of every KV head (one top-k, either allocation: same scores); the
// compaction reads and writes the kept tokens' K and V (memory-bound). The
// decode over the compacted cache is the decode method's, at the kept length.
#include <fmt/format.h>

#include "costmodel/attention_pricer.h"
#include "costmodel/attention_registry.h"
#include "costmodel/derived_sparse.h"
#include "costmodel/andpro_fits.h"
#include "costmodel/kernel_fits.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

std::string windows_of(const std::map<std::int64_t, AndproFits>& m) {
  std::string s;
  for (const auto& kv : m) s += (s.empty() ? "" : ", ") + fmt::format("{}", kv.first);
  return s.empty() ? "none" : s;
}

class AndproPricer final : public AttentionPricer {
 public:
  AndproPricer(const AndproParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    const std::string& file = ctx.fits->file();
    const auto& windows = andpro_fits(*ctx.fits).windows;
    auto it = windows.find(p.window);
    if (it == windows.end() || it->second.score.empty() || it->second.select.empty() ||
        it->second.compact.empty())
      throw InputError(fmt::format("{}: attention.andpro window {} has no measured andpro_score/select/compact rows; "
                                   "measured windows: {}; run `servesim-kernels bench --family andpro`",
                                   file, p.window, windows_of(windows)));
    a_ = &it->second;
    if (p.layer_topk && (a_->select_layer.empty() || a_->compact_ragged.empty()))
      throw InputError(fmt::format("{}: attention.andpro allocation layer_topk needs andpro_select_layer and "
                                   "andpro_compact_ragged rows of window {}, which this profile lacks (measured "
                                   "before the layer_topk kernels existed?); run `servesim-kernels bench --family andpro`, or set "
                                   "attention.andpro.allocation: equal", file, p.window));
    if (a_->shape != ctx.shape) {
      if (!ctx.allow_scaling)
        throw InputError(fmt::format("{}: andpro was measured at head shape {}, the model needs {}; "
                                     "cost_model.allow_scaling is false", file, a_->shape.label(), ctx.shape.label()));
      if (ctx.notes) ctx.notes->push_back(fmt::format("andpro {} from {}", ctx.shape.label(), a_->shape.label()));
    }
    ctx_.notes = nullptr;
  }

  double us(const BatchShape& b) const override {
    double t = 0;
    const auto w = static_cast<double>(p_.window);
    const HeadShape& shape = ctx_.shape;
    for (const PrefillChunk& c : b.prefills) {
      if (!c.completes) continue;
      const std::int64_t n = c.context + c.new_tokens;  // the whole prompt is scored once, at its end
      if (n <= p_.budget + p_.window) continue;         // nothing to evict
      const auto nd = static_cast<double>(n);
      // kept_tokens: the rows compacted per KV head (layer_topk: on average, with the
      // worst-case per-head page rounding; attention_method.h).
      const double kept = static_cast<double>(p_.kept_tokens(n));
      const FeatureFit& select = p_.layer_topk ? a_->select_layer : a_->select;
      const FeatureFit& compact = p_.layer_topk ? a_->compact_ragged : a_->compact;
      const double e = ctx_.launch_excess_us;  // each of its own kernels is one launch
      t += queued_us(a_->score.predict(andpro_scan_features(shape, nd, w)), e) +
           queued_us(select.predict(andpro_scan_features(shape, nd, w)), e) +
           queued_us(compact.predict(andpro_compact_features(shape, kept)), e);
    }
    return static_cast<double>(ctx_.layers) * t;
  }

 private:
  AndproParams p_;
  AttentionPricingContext ctx_;
  const AndproFits* a_ = nullptr;
};

// AnDPro from the dense kernels (no andpro_* rows; derived_sparse.h).
class DerivedAndproPricer final : public AttentionPricer {
 public:
  DerivedAndproPricer(const AndproParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    if (ctx.notes)
      ctx.notes->push_back("andpro derived from the dense kernels (no andpro rows): scoring scan over the candidates' "
                           "K/V; block top-k and compaction at the dense decode fit's bytes");
    ctx_.notes = nullptr;
  }

  double us(const BatchShape& b) const override {
    double t = 0;
    const HeadShape& h = ctx_.shape;
    const DenseAttentionKernels& dense = *ctx_.dense;
    for (const PrefillChunk& c : b.prefills) {
      if (!c.completes) continue;
      const std::int64_t n = c.context + c.new_tokens;  // the whole prompt is scored once, at its end
      if (n <= p_.budget + p_.window) continue;         // nothing to evict
      const auto candidates = static_cast<double>(n - p_.window);
      const double blocks = std::floor(candidates / static_cast<double>(p_.block)) * static_cast<double>(h.kv_heads);
      const auto kept = static_cast<double>(p_.kept_tokens(n));
      t += memory_kernel_us(dense, h, 1, candidates * h.kv_token_bytes()) + topk_kernel_us(dense, h, 1, blocks) +
           memory_kernel_us(dense, h, 1, 2 * kept * h.kv_token_bytes());
    }
    return static_cast<double>(ctx_.layers) * t;
  }

 private:
  AndproParams p_;
  AttentionPricingContext ctx_;
};

}  // namespace

static const OptionTable<AndproParams>& andpro_options() {
  using R = OptionRange;
  static const OptionTable<AndproParams> t = {
      {"budget", &AndproParams::budget, R::kPositive, "tokens kept per KV head after prefill (a multiple of block)"},
      {"window", &AndproParams::window, R::kPositive, "observation window: the last prompt tokens, always kept"},
      {"block", &AndproParams::block, R::kPositive, "scoring block"},
      {"allocation", choice(&AndproParams::layer_topk, "layer_topk", "equal"), R::kAny,
       "layer_topk: one top-k over all KV heads of a layer (ragged per-head lengths, the paper); equal: budget per KV head"},
  };
  return t;
}

AttentionMethodType andpro_method() {
  AttentionMethodType t;
  t.phase = AttentionPhase::kKv;
  t.id = static_cast<std::uint8_t>(KvMethod::kAndpro);
  t.name = method_name(KvMethod::kAndpro);
  t.needs_profile = true;
  t.params_key = "andpro";
  t.params = attention_param_docs(andpro_options());
  t.parse = [](YamlMap& m, AttentionMethods& a) {
    read_options(m, andpro_options(), a.andpro);
    if (a.andpro.budget % a.andpro.block != 0)
      m.fail("budget", fmt::format("must be a multiple of block ({}), got {}", a.andpro.block, a.andpro.budget));
  };
  t.write = [](YAML::Node& n, const AttentionMethods& a) { write_options(n, andpro_options(), a.andpro); };
  t.describe_params = [](const AttentionMethods& a) { return describe_options(andpro_options(), a.andpro); };
  t.make_pricer = [](const AttentionMethods& a, const AttentionPricingContext& ctx) -> std::unique_ptr<AttentionPricer> {
    if (ctx.allow_scaling && andpro_fits(*ctx.fits).windows.empty()) return std::make_unique<DerivedAndproPricer>(a.andpro, ctx);
    return std::make_unique<AndproPricer>(a.andpro, ctx);
  };
  t.kv_eviction = [](const AttentionMethods& a) -> std::shared_ptr<const KvEviction> {
    struct Eviction final : KvEviction {
      explicit Eviction(AndproParams p) : params(p) {}
      std::int64_t kept_tokens(std::int64_t n) const override { return params.kept_tokens(n); }
      AndproParams params;
    };
    return std::make_shared<Eviction>(a.andpro);
  };
  t.fitting = andpro_fitting();
  return t;
}

}  // namespace servesim
