// Arguments of dense causal prefill (prefill.cuh), separate from the runner so that the
// device code (prefill_kernel.cuh) depends on nothing but CUDA's bf16 type.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/layout.h"

namespace servesim::kernels {

struct PrefillArgs {                     // device pointers, not owned
  const __nv_bfloat16* q = nullptr;      // [q_indptr[batch]][num_q_heads][head_dim]
  const __nv_bfloat16* k_cache = nullptr;
  const __nv_bfloat16* v_cache = nullptr;
  PagedKvView kv;                        // device page_indptr / page_indices / kv_lens
  const int32_t* q_indptr = nullptr;     // device [batch + 1]
  AttentionHeads heads;
  float scale = 0;                       // 0 = 1/sqrt(head_dim)
  __nv_bfloat16* out = nullptr;          // [q_indptr[batch]][num_q_heads][head_dim]
  float* lse = nullptr;                  // optional [q_indptr[batch]][num_q_heads]
};

}  // namespace servesim::kernels
