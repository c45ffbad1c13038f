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
        "kv=andpro(budget=2048 window=32 block=32 allocation=layer_topk)");
  a.andpro.layer_topk = false;
  CHECK(a.describe().ends_with("kv=andpro(budget=2048 window=32 block=32 allocation=equal)"));
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

TEST_CASE("AnDPro memory: the same average per head for both allocations, ragged page rounding for layer_topk") {
  AndproParams equal;
  equal.layer_topk = false;
  AndproParams layer;  // the default
  REQUIRE(layer.layer_topk);
  // block 16: every head's segment is 16 m_h + tail, padded alike: no difference.
  for (std::int64_t n : {100, 2080, 2100, 100000}) {
    CAPTURE(n);
    CHECK(layer.kept_tokens(n) == equal.kept_tokens(n));
    CHECK(layer.average_kept_tokens(n) == equal.kept_tokens(n));
  }
  // block 4, n = 32 + 4000 + 3: tail 3 (remainder) + 32 (window) = 35, 512 blocks kept on
  // average per head: 2048 + 35 = 2083 (pad 13). A head of m blocks pads 4m + 35 to 16:
  // m = 3 gives 47, pad 1; m = 0 gives 35, pad 13; m = 1: 39, pad 9; m = 2: 43, pad 5.
  // The worst extra over the equal split is 13 - 13 = 0 here ...
  equal.block = layer.block = 4;
  CHECK(equal.kept_tokens(32 + 4000 + 3) == 2048 + 35);
  CHECK(layer.kept_tokens(32 + 4000 + 3) == 2048 + 35);
  // ... and with tail 32 + 2 = 34 (average 2082, pad 14): m = 1 gives 38, pad 10; m = 0
  // gives 34, pad 14; m = 3 gives 46, pad 2; worst 14 = the equal split's: equal again.
  CHECK(layer.kept_tokens(32 + 4000 + 2) == equal.kept_tokens(32 + 4000 + 2));
  // With tail 32 (no remainder), heads of 4m + 32 tokens pad up to 12 (m = 1) while the
  // equal split (2048 + 32) pads 0: 12 more tokens, one more page (131 instead of 130)
  // when every head's block count is 1 mod 4 (8 heads: seven of 509 blocks and one of 533).
  CHECK(equal.kept_tokens(32 + 4000) == 2080);
  CHECK(layer.kept_tokens(32 + 4000) == 2092);
  CHECK((layer.kept_tokens(32 + 4000) + 15) / 16 == (equal.kept_tokens(32 + 4000) + 15) / 16 + 1);
  // Never more than the prompt: 16 + 32 kept of 52 (pad 0), but a head of one block
  // (36 tokens) pads 12: 60 > 52, so the whole prompt is kept.
  layer.budget = equal.budget = 16;
  CHECK(equal.kept_tokens(32 + 20) == 48);
  CHECK(layer.kept_tokens(32 + 20) == 52);
  // Nothing scored (no whole block before the window): no ragged padding.
  CHECK(layer.kept_tokens(30) == 30);
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
