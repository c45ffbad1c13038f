#include "kernels/decode/decode_plan.h"

#include <algorithm>

namespace servesim::kernels {

bool DecodePlan::needs_merge() const {
  for (size_t b = 0; b + 1 < seq_work_indptr.size(); ++b)
    if (seq_work_indptr[b + 1] - seq_work_indptr[b] > 1) return true;
  return false;
}

DecodePlan plan_decode(const std::vector<int32_t>& kv_lens, int num_kv_heads, int num_sms,
                       int split_tokens_override, int blocks_per_sm) {
  auto tiles = [](int64_t tokens) { return (tokens + kDecodeTileTokens - 1) / kDecodeTileTokens; };
  int64_t total_tiles = 0, max_tiles = 1;
  for (int32_t len : kv_lens) {
    total_tiles += tiles(len);
    max_tiles = std::max<int64_t>(max_tiles, tiles(len));
  }
  int64_t split_tiles;
  if (split_tokens_override > 0) {
    split_tiles = tiles(split_tokens_override);
  } else {
    const int64_t slots = std::max<int64_t>(1, int64_t{num_sms} * blocks_per_sm);
    const int64_t work_tiles = total_tiles * num_kv_heads;
    split_tiles = std::clamp<int64_t>((work_tiles + slots - 1) / slots, 1, max_tiles);
  }
  DecodePlan plan;
  plan.split_tokens = static_cast<int>(split_tiles * kDecodeTileTokens);
  plan.seq_work_indptr.push_back(0);
  for (size_t b = 0; b < kv_lens.size(); ++b) {
    const int64_t splits = std::max<int64_t>(1, (kv_lens[b] + plan.split_tokens - 1) / plan.split_tokens);
    for (int64_t s = 0; s < splits; ++s) {
      plan.work_seq.push_back(static_cast<int32_t>(b));
      plan.work_split.push_back(static_cast<int32_t>(s));
    }
    plan.seq_work_indptr.push_back(static_cast<int32_t>(plan.work_seq.size()));
  }
  return plan;
}

}  // namespace servesim::kernels
