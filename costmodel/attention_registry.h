// The attention-method registry: one AttentionMethodType per method, defined
// beside the method's pricer (costmodel/<method>_pricer.cc), listed once in
// attention_registry.cc. Everything that depends on which methods exist
// iterates this list and names no method:
//   - parsing and writing back the scenario's `attention:` map
//     (configs/scenario_config.cc: parse_attention(), attention_node()),
//   - AttentionMethods::describe() (reports, error messages),
//   - make_attention_pricers() (both cost-model backends),
//   - make_kv_eviction() (the engine's KvEviction) and kv_metadata_share()
//     (KV capacity),
//   - the docs check (configs/option_tables_test.cc: every parameter key is
//     in docs/configuration.md with its default).
//
// Contract: exactly one entry per (phase, id) for every enum value of
// attention_method.h; entries with parameters own one YAML map under
// `attention:` (params_key) whose keys come from the method's OptionTable.
// All parameter maps are read and written whether or not their method is
// selected (identity is by value, attention_method.h), in registry order.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "costmodel/attention_method.h"
#include "costmodel/attention_pricer.h"
#include "costmodel/kv_eviction.h"
#include "costmodel/method_fits.h"
#include "costmodel/model_spec.h"
#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"

namespace servesim {

enum class AttentionPhase : std::uint8_t { kPrefill, kDecode, kKv };

// One documented parameter: key, default as YAML text, help.
struct AttentionParamDoc {
  std::string key, default_value, help;
};

struct AttentionMethodType {
  AttentionPhase phase = AttentionPhase::kPrefill;
  std::uint8_t id = 0;                // the method's enum value within its phase
  std::string_view name;              // its YAML name (the k*MethodNames entry)
  bool needs_profile = false;         // priced from measured kernels only (calibrated backend)

  // Parameters: the map attention.<params_key> (empty: the method has none).
  std::string params_key;
  std::vector<AttentionParamDoc> params;                     // the table's keys (docs, help)
  std::function<void(YamlMap&, AttentionMethods&)> parse;    // reads and checks the map (caller: finish())
  std::function<void(YAML::Node&, const AttentionMethods&)> write;  // writes the map back
  std::function<std::string(const AttentionMethods&)> describe_params;  // "budget=2048 dense_layers=2"

  // Pricing: the method's AttentionPricer (null for a phase with no work, kv: none).
  std::function<std::unique_ptr<AttentionPricer>(const AttentionMethods&, const AttentionPricingContext&)> make_pricer;
  // Memory effects (empty: none): KV kept after prefill, metadata per KV page.
  std::function<std::shared_ptr<const KvEviction>(const AttentionMethods&)> kv_eviction;
  std::function<double(const ModelSpec&, const AttentionMethods&, std::int64_t page_size)> kv_metadata_share;

  // Fitting its own profile kernels (<method>_fits.h); empty: priced from the
  // shared kernels only.
  MethodFitting fitting;
};

// Every method, in the order their parameter maps are read and written.
const std::vector<AttentionMethodType>& attention_method_types();

// The entries of the methods `a` selects, in pricing order: decode, prefill, kv.
std::vector<const AttentionMethodType*> selected_methods(const AttentionMethods& a);

// Whether a selected method is priced from measured kernels only (its entry's
// needs_profile): such a worker needs the calibrated backend.
bool needs_profile(const AttentionMethods& a);

// Helpers for entries whose parameters are one options struct with a table.
template <class P>
std::vector<AttentionParamDoc> attention_param_docs(const OptionTable<P>& table) {
  std::vector<AttentionParamDoc> out;
  for (const OptionField<P>& f : table) out.push_back({f.key, option_default(f), f.help});
  return out;
}

// "key=value key=value" in table order (values as YAML text).
template <class P>
std::string describe_options(const OptionTable<P>& table, const P& p) {
  std::string out;
  for (const OptionField<P>& f : table) {
    YAML::Emitter e;
    e << option_value(f, p);
    out += (out.empty() ? "" : " ") + std::string(f.key) + "=" + e.c_str();
  }
  return out;
}

}  // namespace servesim
