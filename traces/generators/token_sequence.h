// TokenSequence: prefix block ids for generated prompts, without tokens. A
// prompt is described as spans of tokens, each span a distinct piece of
// content named by a 64-bit key (a system prompt, a user message, an answer).
// Block i (tokens [i*B, (i+1)*B)) gets a chained content hash: the hash of
// block i-1 mixed with the (key, start, end) pieces inside block i. So two
// prompts share block i exactly when they share every token up to its end —
// the property a radix prefix cache relies on — and a partial last block
// differs from the same block once it is full (the next turn's prompt).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/core/request.h"

namespace servesim {

class TokenSequence {
 public:
  // REQUIRES: block_size >= 1.
  explicit TokenSequence(std::int32_t block_size) : block_size_(block_size) {}

  // Appends `tokens` (>= 1) tokens of content `key`.
  void append(std::uint64_t key, std::int64_t tokens);
  std::int64_t tokens() const { return total_; }
  std::int32_t block_size() const { return block_size_; }

  // Block ids of the first `n` tokens (ceil(n / B) ids; n <= tokens()).
  void blocks(std::int64_t n, std::vector<BlockHash>& out) const;

 private:
  struct Span {
    std::uint64_t key;
    std::int64_t begin, end;  // token range in the sequence
  };
  std::int32_t block_size_;
  std::int64_t total_ = 0;
  std::vector<Span> spans_;
};

}  // namespace servesim
