// The KV-cache paging layout and tensor layouts shared by every attention kernel of
// servesim (dense decode/prefill here, Quest / MInference / AnDPro in kernels/sparse/).
// CPU references, GPU kernels and bench drivers all index through these helpers, so a
// layout change happens here or nowhere.
//
// KV cache (one layer): K and V are two separate bf16 arrays of identical shape
//     [num_pages][num_kv_heads][kPageSize][head_dim]      (row-major, head_dim fastest)
// so one page of one KV head is a contiguous 16 x head_dim tile (4 KiB at head_dim 128).
//
// Page table (CSR, int32): sequence b owns pages
//     page_indices[page_indptr[b] .. page_indptr[b+1])
// in token order; token t of sequence b sits in page page_indices[page_indptr[b] + t/16]
// at slot t % 16. kv_lens[b] (int32) is the number of valid tokens of sequence b.
// Invariants: page_indptr[0] == 0, non-decreasing; the sequence owns at least
// ceil(kv_lens[b] / 16) pages; page ids lie in [0, num_pages) and are never shared
// between two sequences of one batch (prefix sharing is the simulator's business, not
// the kernels'). Slots past kv_lens[b] in the last page hold garbage (tests fill them
// with NaN) and must never influence an output.
//
// Queries / outputs: [num_tokens][num_q_heads][head_dim] bf16, tokens of a batch packed
// back to back. Decode: token b is sequence b's single new token. Prefill: sequence b's
// new tokens are rows q_indptr[b] .. q_indptr[b+1]; their K/V have already been appended
// to the cache, so kv_lens[b] counts prefix + chunk, the chunk's row i has absolute
// position prefix + i with prefix = kv_lens[b] - q_len[b], and attends causally to
// keys 0 .. prefix + i.
//
// GQA: group = num_q_heads / num_kv_heads (REQUIRES: divides exactly); query head h
// reads KV head h / group. MHA is group 1, MQA is num_kv_heads 1.
//
// LSE (optional output): [num_tokens][num_q_heads] float, natural log of the softmax
// denominator sum_j exp(scale * q.k_j); lets a later kernel merge partial attentions.
// Softmax scale defaults to 1/sqrt(head_dim).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define SERVESIM_HOST_DEVICE __host__ __device__
#else
#define SERVESIM_HOST_DEVICE
#endif

namespace servesim::kernels {

inline constexpr int kPageSize = 16;

struct AttentionHeads {
  int num_q_heads = 32;
  int num_kv_heads = 8;
  int head_dim = 128;

  constexpr int group() const { return num_q_heads / num_kv_heads; }
  constexpr bool valid() const {
    return num_q_heads > 0 && num_kv_heads > 0 && head_dim > 0 && num_q_heads % num_kv_heads == 0;
  }
  // KV head read by query head h.
  constexpr int kv_head_of(int q_head) const { return q_head / group(); }
  float default_scale() const { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }
};

// Element offset of (page, kv_head, slot, d) in the K or V cache.
SERVESIM_HOST_DEVICE constexpr int64_t kv_cache_offset(int64_t page, int kv_head, int slot, int d, int num_kv_heads, int head_dim) {
  return ((page * num_kv_heads + kv_head) * kPageSize + slot) * static_cast<int64_t>(head_dim) + d;
}

// Elements of one page of one KV head (kPageSize * head_dim).
SERVESIM_HOST_DEVICE constexpr int64_t kv_page_stride_per_head(int head_dim) { return static_cast<int64_t>(kPageSize) * head_dim; }

// Element offset of (token, head, d) in a query / output array.
SERVESIM_HOST_DEVICE constexpr int64_t qo_offset(int64_t token, int head, int d, int num_heads, int head_dim) {
  return (token * num_heads + head) * static_cast<int64_t>(head_dim) + d;
}

SERVESIM_HOST_DEVICE constexpr int pages_for_tokens(int64_t tokens) { return static_cast<int>((tokens + kPageSize - 1) / kPageSize); }

// A paged batch as the kernels see it (host or device pointers; not owned).
struct PagedKvView {
  int batch = 0;
  const int32_t* page_indptr = nullptr;   // [batch + 1]
  const int32_t* page_indices = nullptr;  // [page_indptr[batch]]
  const int32_t* kv_lens = nullptr;       // [batch]
};

}  // namespace servesim::kernels
