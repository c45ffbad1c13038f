// BatchShape: what one iteration computes, as the cost model sees it.
// The engine fills one per iteration (vectors are reused, not reallocated).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace servesim {

struct PrefillChunk {
  std::int64_t new_tokens = 0;  // tokens computed in this iteration (extend tokens)
  std::int64_t context = 0;     // tokens already in KV before this chunk (cached prefix + earlier chunks)
  bool completes = false;       // this chunk finishes the prompt (produces logits for a token)
};

// The split-KV granularity of dense decode, in tokens (kernel_features.h's
// kDecodeSplitTokens as an integer; dense_pricer.cc checks they agree).
inline constexpr std::int64_t kDecodeSplitTokenCount = 256;
// A decode's split count, ceil((context + 1) / kDecodeSplitTokenCount), for a
// context >= 0 (unsigned: a shift, which the pricer's loop vectorizes).
inline std::uint64_t decode_split_count(std::uint64_t context) {
  constexpr auto split = static_cast<std::uint64_t>(kDecodeSplitTokenCount);
  return (context + split) / split;
}

// Where the last pricing of a batch's decodes found its KV lengths among the
// measured decode rows (decode_grid.h: the grid's two batch rows, the ragged
// factor's two): starting guesses that are checked before they are used, so they
// change no price, only how long the search takes. The engine keeps one BatchShape
// per worker, so a worker's next iteration (its mean KV length one token longer,
// its batch size mostly the same) usually finds its guess right. Pricing writes them
// through a const BatchShape: one BatchShape is priced by one thread at a time.
struct DecodeSearchHints {
  std::uint16_t grid[2] = {0, 0};
  std::uint16_t ragged[2] = {0, 0};
};

struct BatchShape {
  std::vector<PrefillChunk> prefills;
  // Context length (tokens already in KV, attended by the new token) of each decode request.
  std::vector<std::int64_t> decode_contexts;
  // Optional sums over decode_contexts, for pricers that need only these (the
  // dense decode pricer): kv = Σ (context + 1) (KV tokens read, each new token's
  // included), splits = Σ decode_split_count(context) and max_kv = max (context + 1). Set
  // by whoever fills the contexts and can keep the sums cheaply (the engine's
  // decode lane, sim/worker_lane.cc); unset, a pricer sums the contexts itself.
  // Whatever changes decode_contexts afterwards must reset them (clear() does).
  struct DecodeSums {
    std::int64_t kv = 0;
    std::int64_t splits = 0;
    std::int64_t max_kv = 0;  // max (context + 1): the longest KV read (ragged decode pricing)
  };
  std::optional<DecodeSums> decode_sums;
  // Pricers' search hints (above): not part of the batch's value, kept by clear().
  mutable DecodeSearchHints search_hints;

  void clear() {
    prefills.clear();
    decode_contexts.clear();
    decode_sums.reset();
  }
  bool empty() const { return prefills.empty() && decode_contexts.empty(); }
  std::int64_t prefill_tokens() const {
    std::int64_t n = 0;
    for (const auto& p : prefills) n += p.new_tokens;
    return n;
  }
  std::int64_t decode_tokens() const { return static_cast<std::int64_t>(decode_contexts.size()); }
  std::int64_t total_tokens() const { return prefill_tokens() + decode_tokens(); }
};

}  // namespace servesim
