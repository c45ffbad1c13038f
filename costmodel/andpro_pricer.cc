// AnDPro (kv: andpro; attention_method.h): when a prompt of n tokens completes,
// every layer pays score + select + compact (kept tokens as AndproParams
// computes them); nothing when n <= budget + window. Its memory effect is the
// engine's (KvEviction: kept_tokens() of AndproParams). Needs the profile's
// andpro_* rows of the window. Registry entry (attention_registry.h):
// andpro_method(), parameters under attention.andpro (andpro_options()).
#include <fmt/format.h>

#include "costmodel/attention_pricer.h"
#include "costmodel/attention_registry.h"
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
    auto it = ctx.fits->andpro().find(p.window);
    if (it == ctx.fits->andpro().end() || it->second.score.empty() || it->second.select.empty() ||
        it->second.compact.empty())
      throw InputError(fmt::format("{}: attention.andpro window {} has no measured andpro_score/select/compact rows; "
                                   "measured windows: {}; run `servesim-kernels bench --family andpro`",
                                   file, p.window, windows_of(ctx.fits->andpro())));
    a_ = &it->second;
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
      t += a_->score.predict(andpro_scan_features(shape, nd, w)) +
           a_->select.predict(andpro_scan_features(shape, nd, w)) +
           a_->compact.predict(andpro_compact_features(shape, static_cast<double>(p_.kept_tokens(n))));
    }
    return static_cast<double>(ctx_.layers) * t;
  }

 private:
  AndproParams p_;
  AttentionPricingContext ctx_;
  const AndproFits* a_ = nullptr;
};

}  // namespace

static const OptionTable<AndproParams>& andpro_options() {
  using R = OptionRange;
  static const OptionTable<AndproParams> t = {
      {"budget", &AndproParams::budget, R::kPositive, "tokens kept per KV head after prefill (a multiple of block)"},
      {"window", &AndproParams::window, R::kPositive, "observation window: the last prompt tokens, always kept"},
      {"block", &AndproParams::block, R::kPositive, "scoring block"},
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
  t.make_pricer = [](const AttentionMethods& a, const AttentionPricingContext& ctx) {
    return std::unique_ptr<AttentionPricer>(std::make_unique<AndproPricer>(a.andpro, ctx));
  };
  t.kv_eviction = [](const AttentionMethods& a) -> std::shared_ptr<const KvEviction> {
    struct Eviction final : KvEviction {
      explicit Eviction(AndproParams p) : params(p) {}
      std::int64_t kept_tokens(std::int64_t n) const override { return params.kept_tokens(n); }
      AndproParams params;
    };
    return std::make_shared<Eviction>(a.andpro);
  };
  return t;
}

}  // namespace servesim
