// Arguments of dense paged decode (decode.cuh), separate from the runner so that the
// device code (decode_kernel.cuh) depends on nothing but CUDA's bf16 type.
#pragma once

#include <cuda_bf16.h>

#include "kernels/common/layout.h"

namespace servesim::kernels {

struct DecodeArgs {                      // device pointers, not owned
  const __nv_bfloat16* q = nullptr;      // [batch][num_q_heads][head_dim]
  const __nv_bfloat16* k_cache = nullptr;
  const __nv_bfloat16* v_cache = nullptr;
  PagedKvView kv;                        // device page_indptr / page_indices / kv_lens
  AttentionHeads heads;
  float scale = 0;                       // 0 = 1/sqrt(head_dim)
  __nv_bfloat16* out = nullptr;          // [batch][num_q_heads][head_dim]
  float* lse = nullptr;                  // optional [batch][num_q_heads]
  // false: one page list per sequence (layout.h). true: one per (sequence, KV head), list
  // seq * num_kv_heads + kv_head of kv.page_indptr (batch * num_kv_heads + 1 entries);
  // kv_lens stays per sequence. Quest's selected pages (quest_page_lists) use this.
  bool per_head_pages = false;
};

}  // namespace servesim::kernels
