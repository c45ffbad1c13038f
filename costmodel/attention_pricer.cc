// make_attention_pricers: the one place that maps a method to its pricer;
// see attention_pricer.h.
#include "costmodel/attention_pricer.h"

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

namespace {
void require_profile(const AttentionPricingContext& ctx, std::string_view phase, std::string_view method) {
  if (!ctx.fits)
    throw InputError(fmt::format("attention {} {} is priced from measured kernels only; this backend has no profile "
                                 "(set cost_model: {{backend: calibrated, profile: PROFILE.csv}})", phase, method));
}
}  // namespace

AttentionPricers make_attention_pricers(const AttentionMethods& a, const AttentionPricingContext& ctx) {
  AttentionPricers p;
  // Decode first: scaling notes keep the order identity() has always printed.
  switch (a.decode) {
    case DecodeMethod::kDense: p.decode = make_dense_decode_pricer(ctx); break;
    case DecodeMethod::kQuest:
      require_profile(ctx, "decode", method_name(a.decode));
      p.decode = make_quest_pricer(a.quest, ctx);
      break;
  }
  switch (a.prefill) {
    case PrefillMethod::kDense: p.prefill = make_dense_prefill_pricer(ctx); break;
    case PrefillMethod::kMInference:
      require_profile(ctx, "prefill", method_name(a.prefill));
      p.prefill = make_minference_pricer(a.minference, ctx);
      break;
  }
  switch (a.kv) {
    case KvMethod::kNone: break;
    case KvMethod::kAndpro:
      require_profile(ctx, "kv", method_name(a.kv));
      p.kv = make_andpro_pricer(a.andpro, ctx);
      break;
  }
  return p;
}

}  // namespace servesim
