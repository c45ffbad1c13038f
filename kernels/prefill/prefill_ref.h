// CPU references of dense causal prefill over a paged KV cache (layout: layout.h).
// The chunk's own K/V are already in the cache: kv_lens[b] = prefix + q_len.
//
// prefill_ref(): ground truth, dense_attention_ref (double) with causal_mask(prefix).
// prefill_tiled_ref(): the GPU algorithm in float: online softmax over key tiles of
// k_tile keys, masked on the diagonal. Tests check both against each other and the
// chunking property (a chunk over a cached prefix equals the matching rows of the full
// causal attention of the whole sequence).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/paged_kv_host.h"

namespace servesim::kernels {

struct PrefillRefInput {
  const HostPagedKv* kv = nullptr;
  const std::vector<int32_t>* q_indptr = nullptr;  // [batch + 1]
  const std::vector<float>* q = nullptr;           // [q_indptr[batch]][num_q_heads][head_dim]
  int num_q_heads = 0;
  float scale = 0;
};

// out: [rows][num_q_heads][head_dim]; lse: [rows][num_q_heads] (natural log).
void prefill_ref(const PrefillRefInput& in, std::vector<float>* out, std::vector<float>* lse);
void prefill_tiled_ref(const PrefillRefInput& in, int k_tile, std::vector<float>* out, std::vector<float>* lse);

}  // namespace servesim::kernels
