// Chained block hashes over spans of content; see token_sequence.h.
#include "traces/generators/token_sequence.h"

#include <algorithm>

#include "sim/core/error.h"
#include "traces/seeded_hash.h"

namespace servesim {

void TokenSequence::append(std::uint64_t key, std::int64_t tokens) {
  SIM_CHECK(tokens >= 1, "empty span");
  if (!spans_.empty() && spans_.back().key == key) {
    spans_.back().end += tokens;
  } else {
    spans_.push_back({key, total_, total_ + tokens});
  }
  total_ += tokens;
}

void TokenSequence::blocks(std::int64_t n, std::vector<BlockHash>& out) const {
  SIM_CHECK(n >= 0 && n <= total_, "asked for {} of {} tokens", n, total_);
  out.clear();
  std::uint64_t chain = 0x7E57AB1E;
  std::size_t s = 0;
  for (std::int64_t b = 0; b < n; b += block_size_) {
    const std::int64_t e = std::min<std::int64_t>(b + block_size_, n);
    std::uint64_t h = mix64(chain);
    while (s < spans_.size() && spans_[s].end <= b) ++s;
    for (std::size_t k = s; k < spans_.size() && spans_[k].begin < e; ++k) {
      // Offsets are relative to the span, so identical content at another
      // position in another prompt would hash alike only with the same prefix (chain).
      const std::int64_t lo = std::max(b, spans_[k].begin) - spans_[k].begin;
      const std::int64_t hi = std::min(e, spans_[k].end) - spans_[k].begin;
      h = mix64(h ^ spans_[k].key);
      h = mix64(h ^ static_cast<std::uint64_t>(lo) ^ (static_cast<std::uint64_t>(hi) << 32));
    }
    chain = h;
    out.push_back(h);
  }
}

}  // namespace servesim
