// The attention-method registry (attention_registry.h): one entry per enum
// value of every phase, describe() text as before the registry, and the
// memory effects (KvEviction, page metadata) coming from the entries.
#include <doctest/doctest.h>

#include <set>

#include "costmodel/attention_registry.h"
#include "costmodel/kv_capacity.h"

using namespace servesim;

TEST_CASE("the registry has exactly one entry per attention method, named as the enum's names") {
  std::set<std::pair<int, int>> seen;
  for (const AttentionMethodType& t : attention_method_types()) {
    CAPTURE(t.name);
    CHECK(seen.insert({static_cast<int>(t.phase), t.id}).second);
    switch (t.phase) {
      case AttentionPhase::kPrefill: CHECK(t.name == kPrefillMethodNames.at(t.id)); break;
      case AttentionPhase::kDecode: CHECK(t.name == kDecodeMethodNames.at(t.id)); break;
      case AttentionPhase::kKv: CHECK(t.name == kKvMethodNames.at(t.id)); break;
    }
    // A method with parameters reads, writes and describes them.
    CHECK(t.params_key.empty() == !t.parse);
    CHECK(t.params_key.empty() == !t.write);
    CHECK(t.params_key.empty() == !t.describe_params);
    CHECK(t.params_key.empty() == t.params.empty());
  }
  CHECK(seen.size() == kPrefillMethodNames.size() + kDecodeMethodNames.size() + kKvMethodNames.size());
}

TEST_CASE("describe() names the selected methods with all their parameters") {
  AttentionMethods a;
  CHECK(a.describe() == "prefill=dense decode=dense kv=none");
  a.prefill = PrefillMethod::kMInference;
  a.minference.patterns = {{"vs_30_2048", 0.5}, {"bs_100", 0.5}};
  a.decode = DecodeMethod::kQuest;
  a.kv = KvMethod::kAndpro;
  a.andpro.block = 32;
  CHECK(a.describe() ==
        "prefill=minference(vs_30_2048:0.5 bs_100:0.5 min_length=32768) decode=quest(budget=2048 dense_layers=2) "
        "kv=andpro(budget=2048 window=32 block=32)");
}

TEST_CASE("memory effects come from the selected methods' entries") {
  AttentionMethods a;
  ModelSpec m;
  m.layers = 32;
  CHECK(make_kv_eviction(a) == nullptr);
  CHECK(kv_metadata_share(m, a, 16) == 0);
  a.decode = DecodeMethod::kQuest;
  CHECK(kv_metadata_share(m, a, 16) == doctest::Approx(30.0 / (32.0 * 16.0)));
  a.kv = KvMethod::kAndpro;
  const auto ev = make_kv_eviction(a);
  REQUIRE(ev != nullptr);
  CHECK(ev->kept_tokens(100000) == a.andpro.kept_tokens(100000));
  CHECK(ev->kept_tokens(1000) == 1000);
}

TEST_CASE("needs_profile comes from the selected methods' entries, not from a list of dense methods") {
  AttentionMethods a;
  CHECK_FALSE(needs_profile(a));  // dense, dense, none: every backend prices them
  AttentionMethods q = a;
  q.decode = DecodeMethod::kQuest;
  CHECK(needs_profile(q));
  AttentionMethods m = a;
  m.prefill = PrefillMethod::kMInference;
  CHECK(needs_profile(m));
  AttentionMethods k = a;
  k.kv = KvMethod::kAndpro;
  CHECK(needs_profile(k));
  // Parameters of methods that are not selected do not matter.
  AttentionMethods p = a;
  p.quest.budget = 64;
  CHECK_FALSE(needs_profile(p));
}
