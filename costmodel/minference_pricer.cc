// MInference (prefill: minference; attention_method.h): a chunk whose
// attention span (cached context + chunk) reaches min_length runs the sparse
// kernels of its head mix; shorter chunks the backend's dense prefill (one
// varlen launch). A sparse chunk's rows over [context, span) visit
// band(span) - band(context) tiles per head (area-proportional); estimate and
// index run over the whole span. Needs the profile's minf_* rows (structured
// data) of every pattern in the mix. Registry entry (attention_registry.h):
// minference_method(), parameters under attention.minference (`patterns`,
// read by hand: a name or a map of name: share of heads; then
// minference_options()).
#include <cmath>

#include <fmt/format.h>

#include "costmodel/attention_pricer.h"
#include "costmodel/attention_registry.h"
#include "costmodel/kernel_fits.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

class MInferencePricer final : public AttentionPricer {
 public:
  MInferencePricer(const MInferenceParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    const std::string& file = ctx.fits->file();
    for (const auto& [name, share] : p.patterns) {
      auto it = ctx.fits->minference().find(name + "/structured");
      const MinfFits* m = it == ctx.fits->minference().end() ? nullptr : &it->second;
      if (!m || m->attention.empty() || m->band_width <= 0 || (m->estimate.empty() != m->index.empty())) {
        std::string known;
        for (const auto& [key, f] : ctx.fits->minference())
          if (key.ends_with("/structured")) known += (known.empty() ? "" : ", ") + key.substr(0, key.find('/'));
        throw InputError(fmt::format("{}: attention.minference pattern '{}' has no measured minf_attention rows "
                                     "(structured data); measured patterns: {}; run `servesim-kernels bench --family "
                                     "minference`", file, name, known.empty() ? "none" : known));
      }
      if (m->shape != ctx.shape) {
        if (!ctx.allow_scaling)
          throw InputError(fmt::format("{}: minference was measured at head shape {}, the model needs {}; "
                                       "cost_model.allow_scaling is false", file, m->shape.label(), ctx.shape.label()));
        if (ctx.notes) ctx.notes->push_back(fmt::format("minference {} {} from {}", name, ctx.shape.label(), m->shape.label()));
      }
      patterns_.push_back(Pattern{share, m});
    }
    ctx_.notes = nullptr;
  }

  double us(const BatchShape& b) const override {
    if (b.prefills.empty()) return 0;
    const HeadShape& shape = ctx_.shape;
    PrefillWork dense;
    double sparse = 0;
    const auto heads = static_cast<double>(shape.heads);
    for (const PrefillChunk& c : b.prefills) {
      const auto n = static_cast<double>(c.new_tokens), ctx = static_cast<double>(c.context);
      const double span = ctx + n;
      if (patterns_.empty() || span < static_cast<double>(p_.min_length)) {
        dense.add(n, ctx);
        continue;
      }
      for (const Pattern& p : patterns_) {
        const MinfFits& m = *p.fits;
        const double tiles = (minf_band_tiles(span, m.band_width) - minf_band_tiles(ctx, m.band_width)) * heads;
        double t = m.attention.predict(minf_attention_features(shape, n, tiles));
        if (!m.estimate.empty())
          t += m.estimate.predict(minf_estimate_features(shape, span, m.info)) +
               m.index.predict(minf_index_features(shape, span, m.info));
        sparse += p.share * t;
      }
    }
    return static_cast<double>(ctx_.layers) * (sparse + (dense.rows > 0 ? ctx_.dense->prefill_us(dense) : 0.0));
  }

 private:
  struct Pattern {
    double share = 0;
    const MinfFits* fits = nullptr;
  };
  MInferenceParams p_;
  AttentionPricingContext ctx_;
  std::vector<Pattern> patterns_;
};

}  // namespace

static const OptionTable<MInferenceParams>& minference_options() {
  using R = OptionRange;
  static const OptionTable<MInferenceParams> t = {
      {"min_length", &MInferenceParams::min_length, R::kPositive, "dense below this attention span"},
  };
  return t;
}

namespace {

// patterns: a pattern name (all heads) or a map of pattern name: share of heads.
void parse_patterns(YamlMap& mi, MInferenceParams& params) {
  if (!mi.has("patterns")) return;
  YAML::Node p = mi.raw("patterns");
  params.patterns.clear();
  if (p.IsScalar()) {
    params.patterns.emplace_back(p.as<std::string>(), 1.0);
  } else if (p.IsMap()) {
    YamlMap pm(p, mi.file(), mi.key_path("patterns"));
    double sum = 0;
    for (const auto& kv : p) {
      const std::string name = kv.first.as<std::string>();
      const double share = pm.get<double>(name, 0.0);
      if (!(share > 0 && share <= 1)) pm.fail(name, fmt::format("share of heads must be in (0, 1], got {}", share));
      params.patterns.emplace_back(name, share);
      sum += share;
    }
    if (params.patterns.empty() || std::abs(sum - 1) > 1e-6)
      mi.fail("patterns", fmt::format("head shares must sum to 1, got {}", sum));
  } else {
    mi.fail("patterns", "expected a pattern name (vs_500_1500) or a map of pattern: share of heads");
  }
  for (const auto& [name, share] : params.patterns) {
    const std::string type = name.substr(0, name.find('_'));
    if (type != "vs" && type != "bs" && type != "ashape")
      mi.fail("patterns", fmt::format("'{}' is not a MInference pattern name (vs_<verticals>_<slashes>, bs_<blocks>, "
                                      "ashape_<sink>_<window>)", name));
  }
}

}  // namespace

AttentionMethodType minference_method() {
  AttentionMethodType t;
  t.phase = AttentionPhase::kPrefill;
  t.id = static_cast<std::uint8_t>(PrefillMethod::kMInference);
  t.name = method_name(PrefillMethod::kMInference);
  t.needs_profile = true;
  t.params_key = "minference";
  t.params = attention_param_docs(minference_options());
  t.parse = [](YamlMap& m, AttentionMethods& a) {
    parse_patterns(m, a.minference);
    read_options(m, minference_options(), a.minference);
  };
  t.write = [](YAML::Node& n, const AttentionMethods& a) {
    YAML::Node p;
    for (const auto& [name, share] : a.minference.patterns) p[name] = share;
    n["patterns"] = p;
    write_options(n, minference_options(), a.minference);
  };
  t.describe_params = [](const AttentionMethods& a) {
    std::string s;
    for (const auto& [name, share] : a.minference.patterns) s += fmt::format("{}:{} ", name, share);
    return s + describe_options(minference_options(), a.minference);
  };
  t.make_pricer = [](const AttentionMethods& a, const AttentionPricingContext& ctx) {
    return std::unique_ptr<AttentionPricer>(std::make_unique<MInferencePricer>(a.minference, ctx));
  };
  return t;
}

}  // namespace servesim
