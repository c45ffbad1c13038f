// AttentionMethods: which attention algorithm a worker runs in prefill, in
// decode, and for KV eviction, with their parameters
// (../shared/spec/simulation.md, "Attention methods"; docs/costmodel.md).
//
//   prefill: dense | minference  MInference (Jiang et al., NeurIPS'24): per-head
//                                sparse patterns; dense below min_length.
//   decode:  dense | quest       Quest (Tang et al., ICML'24): page min/max
//                                metadata, top-k pages, sparse decode over
//                                `budget` tokens; the first two layers dense.
//   kv:      none  | andpro      AnDPro (seed 003): after prefill keep `budget`
//                                tokens per KV head (+ the observation window),
//                                on average: allocation layer_topk (default,
//                                the paper's top-k across a layer's KV heads,
//                                ragged per-head lengths) or equal.
//
// Time effects are priced by the calibrated cost model; memory effects by KV
// accounting (kv_capacity.h for Quest's metadata, the engine for AnDPro).
//
// This header holds the typed values only (enums, names, parameter structs).
// What each method does — its parameter table, parsing, write-back, pricing
// and memory effects — is its registry entry beside its pricer
// (attention_registry.h; costmodel/<method>_pricer.cc).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "costmodel/kv_eviction.h"

namespace servesim {

// The methods, typed. Their YAML names are the *_names arrays, in enum order.
enum class PrefillMethod : std::uint8_t { kDense, kMInference };
enum class DecodeMethod : std::uint8_t { kDense, kQuest };
enum class KvMethod : std::uint8_t { kNone, kAndpro };
inline constexpr std::array<std::string_view, 2> kPrefillMethodNames = {"dense", "minference"};
inline constexpr std::array<std::string_view, 2> kDecodeMethodNames = {"dense", "quest"};
inline constexpr std::array<std::string_view, 2> kKvMethodNames = {"none", "andpro"};

inline std::string_view method_name(PrefillMethod m) { return kPrefillMethodNames[static_cast<std::size_t>(m)]; }
inline std::string_view method_name(DecodeMethod m) { return kDecodeMethodNames[static_cast<std::size_t>(m)]; }
inline std::string_view method_name(KvMethod m) { return kKvMethodNames[static_cast<std::size_t>(m)]; }

// The method named `name` (one of Names, in enum order), or none.
template <class Method, std::size_t N>
std::optional<Method> method_by_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<Method>(i);
  return std::nullopt;
}

struct QuestParams {
  std::int64_t budget = 2048;     // tokens attended per decode step (ceil(budget/16) pages)
  std::int64_t dense_layers = 2;  // leading layers that stay dense (Quest paper, Sec. 4.2.4)
  bool operator==(const QuestParams&) const = default;
};

struct MInferenceParams {
  // Share of query heads per pattern (the bench's names: ashape_1024_4096,
  // vs_30_2048, vs_100_1800, vs_500_1500, vs_3000_200, bs_100); shares sum to 1.
  std::vector<std::pair<std::string, double>> patterns = {{"vs_500_1500", 1.0}};
  // A chunk whose attention span (cached context + chunk) is shorter runs the
  // dense kernel: MInference is slower than dense on short prompts.
  std::int64_t min_length = 32768;
  bool operator==(const MInferenceParams&) const = default;
};

struct AndproParams {
  std::int64_t budget = 2048;  // tokens kept per KV head after prefill (a multiple of block)
  std::int64_t window = 32;    // observation window: the last prompt tokens, always kept
  std::int64_t block = 16;     // scoring block (tokens merged per selection unit)
  // allocation: layer_topk (true; the paper's Algorithm 1 line 9: one top-k of
  // KV heads x budget/block blocks over all KV heads of a layer, ragged
  // per-head lengths) | equal (false; budget/block blocks per KV head).
  bool layer_topk = true;
  bool operator==(const AndproParams&) const = default;

  // Tokens each KV head keeps of an n-token prompt under the equal split, and
  // on average over the heads under layer_topk (same total): floor(budget/block)
  // scored blocks (at most those that exist) + the tokens after the last whole
  // block (window and remainder), as kernels/sparse/andpro_ref.h computes it.
  std::int64_t average_kept_tokens(std::int64_t n) const {
    if (n <= window) return n;
    const std::int64_t region = (n - window) / block * block;
    return std::min(region / block, budget / block) * block + (n - region);
  }

  // What the engine holds per request (KvEviction::kept_tokens), in tokens of
  // all KV heads. equal: average_kept_tokens(n). layer_topk: the ragged
  // compaction pads each head's segment to whole 16-token page rows
  // (andpro_ref.h, "Ragged layout"), so the worst case over the allocations
  // adds the largest extra padding a head can get beyond the equal split's:
  // max over m of pad(m*block + tail) - pad(average), pad(x) = (16 - x % 16) % 16,
  // tail = the unscored tokens. Zero when block is a multiple of 16; at most 15.
  // Both never exceed n (nothing is evicted then).
  std::int64_t kept_tokens(std::int64_t n) const {
    const std::int64_t avg = average_kept_tokens(n);
    if (!layer_topk || n <= window) return avg;
    const std::int64_t region = (n - window) / block * block;
    const std::int64_t blocks = std::min(region / block, budget / block);
    if (blocks == 0) return avg;
    const std::int64_t tail = n - region;
    auto pad = [](std::int64_t x) { return (16 - x % 16) % 16; };
    std::int64_t worst = 0;
    for (std::int64_t m = 0; m <= std::min<std::int64_t>(15, region / block); ++m)
      worst = std::max(worst, pad(m * block + tail));
    return std::min(n, avg + worst - pad(avg));
  }
};

struct AttentionMethods {
  PrefillMethod prefill = PrefillMethod::kDense;
  DecodeMethod decode = DecodeMethod::kDense;
  KvMethod kv = KvMethod::kNone;
  QuestParams quest;
  MInferenceParams minference;
  AndproParams andpro;

  // Identity: every field by value (all parameters, even those of methods
  // not selected). Configurations are compared with ==, never by describe().
  bool operator==(const AttentionMethods&) const = default;
  // The default methods are selected: dense prefill and decode, no KV method
  // (their parameters aside). Their pricers read a batch's decode sums, not its contexts.
  bool all_dense() const {
    return prefill == PrefillMethod::kDense && decode == DecodeMethod::kDense && kv == KvMethod::kNone;
  }

  // For people (reports, error messages): the selected methods and all their
  // parameters, e.g. "prefill=minference(vs_500_1500:1 min_length=32768)
  // decode=quest(budget=2048 dense_layers=2) kv=andpro(budget=2048 window=32 block=16)".
  // Built from the registry (attention_registry.cc).
  std::string describe() const;
};

// The engine's view of the KV method (kv_eviction.h): null for none
// (attention_registry.cc, from the selected methods' entries).
std::shared_ptr<const KvEviction> make_kv_eviction(const AttentionMethods& a);

}  // namespace servesim
