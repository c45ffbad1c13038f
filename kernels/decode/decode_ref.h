// CPU references of dense paged decode (layout: kernels/common/layout.h).
//
// decode_ref(): ground truth. Gathers each sequence's pages into dense K/V and runs
// dense_attention_ref (double, exact softmax) for its single query token.
// decode_split_kv_ref(): the GPU algorithm in float on the CPU: every split of the plan
// runs an online softmax over 16-key tiles into an AttentionPartial, and the partials of
// a sequence are merged. Tests assert the two agree (split-KV merging equals one-pass
// softmax) for any split size.
#pragma once

#include <vector>

#include "kernels/common/paged_kv_host.h"
#include "kernels/decode/decode_plan.h"

namespace servesim::kernels {

struct DecodeRefInput {
  const HostPagedKv* kv = nullptr;
  const std::vector<float>* q = nullptr;  // [batch][num_q_heads][head_dim] (bf16-rounded values)
  int num_q_heads = 0;
  float scale = 0;
};

// out: [batch][num_q_heads][head_dim]; lse: [batch][num_q_heads] (natural log).
void decode_ref(const DecodeRefInput& in, std::vector<float>* out, std::vector<float>* lse);
void decode_split_kv_ref(const DecodeRefInput& in, const DecodePlan& plan, std::vector<float>* out,
                         std::vector<float>* lse);

}  // namespace servesim::kernels
