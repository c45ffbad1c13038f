// Device helpers shared by the sparse-attention kernels (Quest, MInference, AnDPro):
// bf16 vector loads, warp reductions, and block_topk(), the one GPU implementation of
// the top-k contract of sparse_ref_util.h (largest min(k, n) scores, NaN as -inf, ties
// to the smaller index, output in ascending index order), used for Quest pages,
// MInference lines/blocks and AnDPro blocks.
//
// block_topk is a 4-pass radix select (8 bits per pass) over order-preserving uint32
// keys, followed by one ordered compaction pass (block-wide ballot scans): O(4n + n)
// reads of the row, no sorting, deterministic. One thread block handles one row.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/sparse/topk_key.h"

namespace servesim::kernels::sparse {

// Dynamic shared memory of a sparse kernel, 128-byte aligned (WMMA needs 32).
#if defined(SERVESIM_WARP_EMULATION)
#define SERVESIM_SPARSE_DYNAMIC_SMEM(name) unsigned char* name = ::servesim_emu::dynamic_smem()
#else
#define SERVESIM_SPARSE_DYNAMIC_SMEM(name) extern __shared__ __align__(128) unsigned char name[]
#endif

// Threads of every block_topk launch (the kernels call it with exactly this many).
inline constexpr int kTopkThreads = 512;

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

// 8 consecutive bf16 (16 bytes, REQUIRES 16-byte alignment) as floats.
__device__ __forceinline__ void load_bf16x8(const __nv_bfloat16* p, float out[8]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// Row of token `pos` of KV head `kvh` in a paged K or V cache (layout.h).
__device__ __forceinline__ const __nv_bfloat16* paged_row(const __nv_bfloat16* cache, const int32_t* page_table,
                                                          int pos, int kvh, int num_kv_heads, int head_dim) {
  return cache + kv_cache_offset(page_table[pos / kPageSize], kvh, pos % kPageSize, 0, num_kv_heads, head_dim);
}

__device__ __forceinline__ uint32_t topk_key(float x) { return topk_order_key(x); }

struct TopkShared {
  int hist[256];
  int warp_counts[2][kTopkThreads / 32];
  int digit;
  int above;  // elements whose current digit is larger than the chosen one
};

namespace detail {

// Exclusive prefix count of `flag` over the block's threads, and the block total.
// Every thread of the block must call it (contains __syncthreads).
__device__ __forceinline__ int block_exclusive_count(bool flag, int* warp_counts, int* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned ballot = __ballot_sync(0xffffffffu, flag);
  const int in_warp = __popc(ballot & ((1u << lane) - 1u));
  if (lane == 0) warp_counts[warp] = __popc(ballot);
  __syncthreads();
  int before = 0, sum = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) {
    const int c = warp_counts[w];
    if (w < warp) before += c;
    sum += c;
  }
  *total = sum;
  return before + in_warp;
}

}  // namespace detail

// Writes the selected indices of scores[0 .. n) to out[0 .. min(k, n)) in ascending order.
// Indices < forced score +inf (forced lines / sink blocks); with forced_period > 0, the
// indices i with i % forced_period < forced do (AnDPro's layer-wide top-k over
// concatenated heads: block 0 of every head). REQUIRES: blockDim.x == kTopkThreads; all
// threads of the block call it with the same arguments.
__device__ inline void block_topk(const float* __restrict__ scores, int n, int k, int forced,
                           int32_t* __restrict__ out, TopkShared& sm, int forced_period = 0) {
  const int tid = threadIdx.x;
  if (k <= 0 || n <= 0) return;
  if (k >= n) {
    for (int i = tid; i < n; i += blockDim.x) out[i] = i;
    return;
  }
  auto key_of = [&](int i) {
    return (forced_period > 0 ? i % forced_period : i) < forced ? topk_key(INFINITY) : topk_key(scores[i]);
  };

  uint32_t prefix = 0, mask = 0;
  int remaining = k;  // how many of the still-undecided elements must be taken
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int i = tid; i < 256; i += blockDim.x) sm.hist[i] = 0;
    __syncthreads();
    for (int i = tid; i < n; i += blockDim.x) {
      const uint32_t u = key_of(i);
      if ((u & mask) == prefix) atomicAdd(&sm.hist[(u >> shift) & 255u], 1);
    }
    __syncthreads();
    if (tid < 32) {
      // Lane l owns digits [8l, 8l + 8); suffix sums from the top digit down.
      int local[8], own = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) own += (local[j] = sm.hist[tid * 8 + j]);
      int suffix = own;  // sum over lanes >= tid
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int other = __shfl_down_sync(0xffffffffu, suffix, o);
        if (tid + o < 32) suffix += other;
      }
      const int above_lane = suffix - own;  // elements in digits of higher lanes
      if (above_lane < remaining && remaining <= suffix) {
        int above = above_lane;
        for (int j = 7; j >= 0; --j) {
          if (above + local[j] >= remaining) {
            sm.digit = tid * 8 + j;
            sm.above = above;
            break;
          }
          above += local[j];
        }
      }
    }
    __syncthreads();
    prefix |= static_cast<uint32_t>(sm.digit) << shift;
    mask |= 255u << shift;
    remaining -= sm.above;
    __syncthreads();  // sm.digit / sm.hist are rewritten by the next pass
  }
  // prefix is the k-th largest key; take every larger key and the first `remaining`
  // keys equal to it, in index order.
  int eq_seen = 0, written = 0;
  for (int base = 0; base < n; base += blockDim.x) {
    const int i = base + tid;
    const uint32_t u = i < n ? key_of(i) : 0u;
    const bool eq = i < n && u == prefix;
    int eq_total = 0;
    const int eq_rank = eq_seen + detail::block_exclusive_count(eq, sm.warp_counts[0], &eq_total);
    const bool take = i < n && (u > prefix || (eq && eq_rank < remaining));
    int take_total = 0;
    const int pos = written + detail::block_exclusive_count(take, sm.warp_counts[1], &take_total);
    if (take) out[pos] = i;
    eq_seen += eq_total;
    written += take_total;
    __syncthreads();  // warp_counts reused by the next chunk
  }
}

}  // namespace servesim::kernels::sparse
