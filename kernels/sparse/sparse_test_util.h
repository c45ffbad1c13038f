// Test fixtures of the sparse-attention CPU tests: a random paged cache (from
// kernels/common/paged_kv_host.h, NaN in every slot past a sequence's length) exposed as
// float arrays, and contiguous random tensors.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_host.h"
#include "kernels/sparse/sparse_ref_util.h"

namespace servesim::kernels::sparse::testing {

struct FloatPagedCache {
  HostPagedKv host;
  std::vector<float> k, v;  // float copies of host.k_bits / host.v_bits (NaN preserved)

  FloatPagedCache(const std::vector<int>& lens, int num_kv_heads, int head_dim, uint64_t seed)
      : host(make_random_paged_kv(lens, num_kv_heads, head_dim, seed)),
        k(from_bf16_bits(host.k_bits)),
        v(from_bf16_bits(host.v_bits)) {}

  KvCacheF32 view() const { return {k.data(), v.data(), host.num_kv_heads, host.head_dim}; }
  std::span<const int32_t> page_table(int seq) const {
    return std::span<const int32_t>(host.page_indices)
        .subspan(host.page_indptr[seq], host.page_indptr[seq + 1] - host.page_indptr[seq]);
  }
};

}  // namespace servesim::kernels::sparse::testing
