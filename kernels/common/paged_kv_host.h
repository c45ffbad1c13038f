// Host-side paged KV cache for references, checks and tests (layout: layout.h).
//
// make_random_paged_kv() draws every token's K and V from a seed that depends only on
// (sequence, token, kv head), never on the page a token lands in, so two caches built
// with the same seed but different page permutations hold the same logical sequences:
// the property "paging with shuffled page tables changes nothing" compares exactly that.
// Unused slots of last pages and spare pages are filled with bf16 NaN so that any kernel
// or reference that reads past kv_lens produces NaN and fails its check.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/layout.h"

namespace servesim::kernels {

struct HostPagedKv {
  int num_kv_heads = 0;
  int head_dim = 0;
  int num_pages = 0;
  std::vector<uint16_t> k_bits, v_bits;  // bf16 [num_pages][num_kv_heads][16][head_dim]
  std::vector<int32_t> page_indptr;      // [batch + 1]
  std::vector<int32_t> page_indices;
  std::vector<int32_t> kv_lens;          // [batch]

  int batch() const { return static_cast<int>(kv_lens.size()); }
  PagedKvView view() const {
    return PagedKvView{batch(), page_indptr.data(), page_indices.data(), kv_lens.data()};
  }
  float k(int seq, int token, int kv_head, int d) const;
  float v(int seq, int token, int kv_head, int d) const;
  // Dense copies of one sequence: [kv_lens[seq]][num_kv_heads][head_dim] as float.
  std::vector<float> gather_k(int seq) const;
  std::vector<float> gather_v(int seq) const;
  int64_t total_tokens() const;
};

struct PagedKvOptions {
  bool shuffle_pages = true;  // permute page ids (a real allocator hands out scattered pages)
  int spare_pages = 3;        // NaN-filled pages that belong to nobody
  uint64_t page_seed = 7;     // seed of the page permutation (independent of the data seed)
  float lo = -1.0f, hi = 1.0f;
};

// REQUIRES: every kv_len >= 0, num_kv_heads > 0, head_dim > 0.
HostPagedKv make_random_paged_kv(const std::vector<int>& kv_lens, int num_kv_heads, int head_dim,
                                 uint64_t data_seed, const PagedKvOptions& options = {});

}  // namespace servesim::kernels
