// The list of attention methods (attention_registry.h) and what iterates it
// inside costmodel/: make_attention_pricers(), describe(), make_kv_eviction()
// (kv_capacity.cc: kv_metadata_share()). Adding a method adds one declaration and one list
// entry here; its entry itself lives in its pricer file.
#include "costmodel/attention_registry.h"

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

// Defined in the per-method files.
AttentionMethodType dense_prefill_method();  // dense_pricer.cc
AttentionMethodType dense_decode_method();   // dense_pricer.cc
AttentionMethodType no_kv_method();          // dense_pricer.cc
AttentionMethodType quest_method();          // quest_pricer.cc
AttentionMethodType minference_method();     // minference_pricer.cc
AttentionMethodType andpro_method();         // andpro_pricer.cc

const std::vector<AttentionMethodType>& attention_method_types() {
  static const std::vector<AttentionMethodType> types = {
      dense_prefill_method(), dense_decode_method(), no_kv_method(),
      quest_method(),         minference_method(),   andpro_method(),
  };
  return types;
}

namespace {

const AttentionMethodType& find_method(AttentionPhase phase, std::uint8_t id) {
  for (const AttentionMethodType& t : attention_method_types())
    if (t.phase == phase && t.id == id) return t;
  throw std::logic_error(fmt::format("attention method {} of phase {} is not registered", id,
                                     static_cast<int>(phase)));
}

std::string describe_one(const AttentionMethodType& t, const AttentionMethods& a) {
  if (!t.describe_params) return std::string(t.name);
  return fmt::format("{}({})", t.name, t.describe_params(a));
}

}  // namespace

std::vector<const AttentionMethodType*> selected_methods(const AttentionMethods& a) {
  return {&find_method(AttentionPhase::kDecode, static_cast<std::uint8_t>(a.decode)),
          &find_method(AttentionPhase::kPrefill, static_cast<std::uint8_t>(a.prefill)),
          &find_method(AttentionPhase::kKv, static_cast<std::uint8_t>(a.kv))};
}

bool needs_profile(const AttentionMethods& a) {
  for (const AttentionMethodType* t : selected_methods(a))
    if (t->needs_profile) return true;
  return false;
}

AttentionPricers make_attention_pricers(const AttentionMethods& a, const AttentionPricingContext& ctx) {
  static constexpr std::string_view kPhaseKey[] = {"prefill", "decode", "kv"};
  AttentionPricers p;
  // Decode first: scaling notes keep the order identity() has always printed.
  for (const AttentionMethodType* t : selected_methods(a)) {
    if (t->needs_profile && !ctx.fits)
      throw InputError(fmt::format("attention {} {} is priced from measured kernels only; this backend has no profile "
                                   "(set cost_model: {{backend: calibrated, profile: PROFILE.csv}})",
                                   kPhaseKey[static_cast<int>(t->phase)], t->name));
    std::unique_ptr<AttentionPricer> pricer = t->make_pricer ? t->make_pricer(a, ctx) : nullptr;
    switch (t->phase) {
      case AttentionPhase::kPrefill: p.prefill = std::move(pricer); break;
      case AttentionPhase::kDecode: p.decode = std::move(pricer); break;
      case AttentionPhase::kKv: p.kv = std::move(pricer); break;
    }
  }
  return p;
}

std::string AttentionMethods::describe() const {
  const std::vector<const AttentionMethodType*> s = selected_methods(*this);
  return fmt::format("prefill={} decode={} kv={}", describe_one(*s[1], *this), describe_one(*s[0], *this),
                     describe_one(*s[2], *this));
}

std::shared_ptr<const KvEviction> make_kv_eviction(const AttentionMethods& a) {
  for (const AttentionMethodType* t : selected_methods(a))
    if (t->kv_eviction) return t->kv_eviction(a);
  return nullptr;
}

}  // namespace servesim
