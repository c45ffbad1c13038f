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
//
// Without any minf_* rows (a dense-only profile) and with scaling allowed,
// DerivedMInferencePricer prices the same steps from the profile's dense
// kernels (derived_sparse.h; a note in identity()):
//   attention  the pattern's area is its budget: every query row attends
//              `keys` keys (vs_<v>_<s>: v + s; bs_<k>: k blocks of 64;
//              ashape_<sink>_<window>: sink + window), a causal band of
//              keys / 64 tiles per 64-row block (minf_band_tiles); the dense
//              prefill fit evaluated at that area (its FLOPs, rows and K/V),
//              divided by kMinfSparseEfficiency;
//   estimate   vs: the last 64 queries' logits over the span, a dense prefill of
//              64 rows behind span - 64 keys; bs: mean pooling (read Q and K
//              once, memory-bound) and the causal (span/64)² block logits, a
//              dense prefill over span/64 pooled rows at half its FLOPs (QKᵀ,
//              no PV); ashape: none;
//   index      vs: top-k of the span's vertical and slash scores per head, then
//              writing each 64-row block's lines (int32) per head; bs: top-k of
//              the block scores per head; memory-bound (derived_sparse.h);
//   envelope   a sparse chunk costs at least the largest dense chunk below
//              min_length it contains (the derived sparse price can fall below
//              dense right at min_length; CostModel prices are monotone).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "costmodel/attention_pricer.h"
#include "costmodel/attention_registry.h"
#include "costmodel/derived_sparse.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/minference_fits.h"
#include "sim/core/error.h"

namespace servesim {

namespace {

class MInferencePricer final : public AttentionPricer {
 public:
  MInferencePricer(const MInferenceParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    const std::string& file = ctx.fits->file();
    for (const auto& [name, share] : p.patterns) {
      const auto& measured = minference_fits(*ctx.fits).patterns;
      auto it = measured.find(name + "/structured");
      const MinfFits* m = it == measured.end() ? nullptr : &it->second;
      if (!m || m->attention.empty() || m->band_width <= 0 || (m->estimate.empty() != m->index.empty())) {
        std::string known;
        for (const auto& [key, f] : measured)
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
        const double e = ctx_.launch_excess_us;  // each of its own kernels is one launch
        double t = queued_us(m.attention.predict(minf_attention_features(shape, n, tiles)), e);
        if (!m.estimate.empty())
          t += queued_us(m.estimate.predict(minf_estimate_features(shape, span, m.info)), e) +
               queued_us(m.index.predict(minf_index_features(shape, span, m.info)), e);
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

// MInference from the dense kernels (no minf_* rows; derived_sparse.h).
class DerivedMInferencePricer final : public AttentionPricer {
 public:
  DerivedMInferencePricer(const MInferenceParams& p, const AttentionPricingContext& ctx) : p_(p), ctx_(ctx) {
    for (const auto& [name, share] : p.patterns) {
      Pattern pat{share, minf_pattern_info(name), 0};
      if (pat.info.type == "ashape") {  // ashape_<sink>_<window>: lines holds nothing; read the two numbers
        const std::size_t a = name.find('_'), b = name.find('_', a + 1);
        pat.keys = std::atof(name.substr(a + 1, b - a - 1).c_str()) +
                   (b == std::string::npos ? 0.0 : std::atof(name.substr(b + 1).c_str()));
      } else {
        pat.keys = pat.info.type == "bs" ? 64 * pat.info.lines : pat.info.lines;
      }
      patterns_.push_back(pat);
    }
    if (ctx.notes)
      ctx.notes->push_back(fmt::format("minference derived from the dense kernels (no minf rows): area = pattern "
                                       "budget; dense prefill at that area / sparse efficiency {} (H100-measured); "
                                       "estimate as dense prefill; index as top-k at the dense decode fit's bytes",
                                       kMinfSparseEfficiency));
    ctx_.notes = nullptr;
  }

  double us(const BatchShape& b) const override {
    if (b.prefills.empty()) return 0;
    const HeadShape& h = ctx_.shape;
    const DenseAttentionKernels& dense = *ctx_.dense;
    const auto heads = static_cast<double>(h.heads);
    PrefillWork dense_work;
    double sparse = 0;
    for (const PrefillChunk& c : b.prefills) {
      const auto n = static_cast<double>(c.new_tokens), ctx = static_cast<double>(c.context);
      const double span = ctx + n;
      if (patterns_.empty() || span < static_cast<double>(p_.min_length)) {
        dense_work.add(n, ctx);
        continue;
      }
      double chunk = 0;
      for (const Pattern& p : patterns_) {
        // The visited area at the dense kernel's rate, over the sparse kernel's efficiency.
        const double tiles = minf_band_tiles(span, p.keys / 64) - minf_band_tiles(ctx, p.keys / 64);  // per head
        PrefillWork area;
        area.rows = n;
        area.q_tiles = std::ceil(n / kPrefillQueryTile);
        area.kv_tokens = span;
        area.visible = tiles * 64 * 64;
        double t = dense.prefill_us(area) / kMinfSparseEfficiency;
        if (p.info.type == "vs") {
          PrefillWork last;
          last.add(std::min(64.0, span), std::max(0.0, span - 64));
          t += dense.prefill_us(last) +
               topk_kernel_us(dense, h, 1, 2 * span * heads) +
               memory_kernel_us(dense, h, 1, kScoreBytes * (span / 64) * p.info.lines * heads);
        } else if (p.info.type == "bs") {
          const double blocks = std::ceil(span / 64);
          PrefillWork pooled;
          pooled.rows = blocks;
          pooled.q_tiles = std::ceil(blocks / kPrefillQueryTile);
          pooled.kv_tokens = blocks;
          pooled.visible = blocks * (blocks + 1) / 4;  // causal block pairs, QKᵀ only (half the FLOPs)
          const double qk_bytes = span * 2.0 * static_cast<double>((h.heads + h.kv_heads) * h.head_dim);
          t += memory_kernel_us(dense, h, 1, qk_bytes) + dense.prefill_us(pooled) +
               topk_kernel_us(dense, h, 1, blocks * (blocks + 1) / 2 * heads);
        }
        chunk += p.share * t;
      }
      // Monotone envelope: never cheaper than the largest dense chunk below min_length
      // that this one contains (as many rows as it has, up to min_length - 1 tokens of
      // span), so that crossing min_length never lowers the price (CostModel contract).
      const double limit = static_cast<double>(p_.min_length) - 1;
      const double below_rows = std::min(n, limit);
      PrefillWork below;
      below.add(below_rows, std::min(ctx, limit - below_rows));
      sparse += std::max(chunk, dense.prefill_us(below));
    }
    return static_cast<double>(ctx_.layers) * (sparse + (dense_work.rows > 0 ? dense.prefill_us(dense_work) : 0.0));
  }

 private:
  struct Pattern {
    double share = 0;
    MinfPatternInfo info;
    double keys = 0;  // keys each query row attends (the pattern's budget)
  };
  MInferenceParams p_;
  AttentionPricingContext ctx_;
  std::vector<Pattern> patterns_;
};

bool has_minference_rows(const KernelFits& fits) {
  for (const auto& [key, f] : minference_fits(fits).patterns)
    if (key.ends_with("/structured")) return true;
  return false;
}

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
  t.make_pricer = [](const AttentionMethods& a, const AttentionPricingContext& ctx) -> std::unique_ptr<AttentionPricer> {
    if (ctx.allow_scaling && !has_minference_rows(*ctx.fits))
      return std::make_unique<DerivedMInferencePricer>(a.minference, ctx);
    return std::make_unique<MInferencePricer>(a.minference, ctx);
  };
  t.fitting = minference_fitting();
  return t;
}

}  // namespace servesim
