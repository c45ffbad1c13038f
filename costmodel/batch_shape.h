// BatchShape: what one iteration computes, as the cost model sees it.
// The engine fills one per iteration (vectors are reused, not reallocated).
#pragma once
#include <cstdint>
#include <vector>

namespace servesim {

struct PrefillChunk {
  std::int64_t new_tokens = 0;  // tokens computed in this iteration (extend tokens)
  std::int64_t context = 0;     // tokens already in KV before this chunk (cached prefix + earlier chunks)
  bool completes = false;       // this chunk finishes the prompt (produces logits for a token)
};

struct BatchShape {
  std::vector<PrefillChunk> prefills;
  // Context length (tokens already in KV, attended by the new token) of each decode request.
  std::vector<std::int64_t> decode_contexts;

  void clear() {
    prefills.clear();
    decode_contexts.clear();
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
