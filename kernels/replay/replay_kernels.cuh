// Device code of the GPU replay's small launches (replay_plan.h): embedding gather,
// fused residual add + RMSNorm, RoPE, KV append into the paged cache, SiLU·mul, row
// gather and greedy sampling. Plain CUDA (bf16 storage, float math), no launcher here:
// replay_gpu.cu launches them on a GPU, and the CPU warp emulator runs the same code
// (emu/emu_replay_test.cc) against the references of tiny_model.h.
//
// Numerics follow tiny_model.h: each output is rounded to bf16 once; norms reduce in
// float over a block (tree reduction in shared memory).
// Launch shapes (replay_row_chunks below): the norm and argmax take one block of
// kWideThreads per row, so a row of 4,096 is 4 loads deep per thread, not 16 (at a few
// tokens a kernel's time is its per-thread dependency chain, not bytes; the first GPU
// replay measured 16 us per 3-token norm and 200 us per argmax with 256-thread blocks);
// RoPE and SiLU·mul split each row over `chunks` blocks of kReplayThreads (block b works
// on row b / chunks, part b % chunks, striding by chunks · blockDim), so at 3 tokens
// they fill the GPU instead of 3 SMs; the rest take one block of kReplayThreads per row.
#pragma once
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdint>

#include "kernels/common/layout.h"

namespace servesim::kernels::replay_detail {

inline constexpr int kReplayThreads = 256;
inline constexpr int kWideThreads = 1024;  // add_rmsnorm_kernel and argmax_kernel blocks

// Blocks per row for a chunked kernel: enough that each thread has one element (or pair).
inline int replay_row_chunks(int64_t elements_per_row) {
  return static_cast<int>(std::max<int64_t>(1, (elements_per_row + kReplayThreads - 1) / kReplayThreads));
}

// Block-wide sum of one float per thread (blockDim.x == kWideThreads).
__device__ __forceinline__ float block_sum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kWideThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

// out[r] = table[tokens[r]] (rows of h).
__global__ void embedding_kernel(const int32_t* tokens, const __nv_bfloat16* table, __nv_bfloat16* out, int h) {
  const int64_t r = blockIdx.x;
  const int64_t src = static_cast<int64_t>(tokens[r]) * h;
  for (int i = threadIdx.x; i < h; i += blockDim.x) out[r * h + i] = table[src + i];
}

// residual[r] += x[r] (rounded to bf16; accumulate 0: residual[r] = x[r], the first
// layer's norm); out[r] = RMSNorm(residual[r]) * w. out may alias x. blockDim.x == kWideThreads.
__global__ void add_rmsnorm_kernel(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* w,
                                   __nv_bfloat16* out, int h, float eps, int accumulate) {
  __shared__ float shared[kWideThreads];
  const int64_t base = static_cast<int64_t>(blockIdx.x) * h;
  float ss = 0;
  for (int i = threadIdx.x; i < h; i += blockDim.x) {
    const float prev = accumulate ? __bfloat162float(residual[base + i]) : 0.0f;
    const float r = __bfloat162float(__float2bfloat16(prev + __bfloat162float(x[base + i])));
    residual[base + i] = __float2bfloat16(r);
    ss += r * r;
  }
  const float inv = 1.0f / sqrtf(block_sum(ss, shared) / static_cast<float>(h) + eps);
  for (int i = threadIdx.x; i < h; i += blockDim.x)
    out[base + i] = __float2bfloat16(__bfloat162float(residual[base + i]) * inv * __bfloat162float(w[i]));
}

// Rotate-half RoPE (row r of qkv [T][(hq + 2hk)·d] over `chunks` blocks, grid T·chunks):
// q heads are written rotated to q_out [T][hq][d] (contiguous for the attention kernels),
// k heads are rotated in place; v is untouched.
__global__ void rope_kernel(__nv_bfloat16* qkv, const int32_t* positions, __nv_bfloat16* q_out, int hq, int hk, int d,
                            float theta, int chunks) {
  const int64_t r = blockIdx.x / chunks;
  const int part = static_cast<int>(blockIdx.x % chunks);
  const int half = d / 2;
  const int64_t row = r * static_cast<int64_t>(hq + 2 * hk) * d;
  const float pos = static_cast<float>(positions[r]);
  for (int p = part * blockDim.x + threadIdx.x; p < (hq + hk) * half; p += chunks * blockDim.x) {
    const int head = p / half, i = p % half;
    const float freq = powf(theta, -2.0f * static_cast<float>(i) / static_cast<float>(d));
    const float a = pos * freq, c = cosf(a), s = sinf(a);
    const int64_t off = row + static_cast<int64_t>(head) * d;
    const float x1 = __bfloat162float(qkv[off + i]), x2 = __bfloat162float(qkv[off + i + half]);
    const __nv_bfloat16 y1 = __float2bfloat16(x1 * c - x2 * s), y2 = __float2bfloat16(x2 * c + x1 * s);
    if (head < hq) {
      const int64_t q = (r * hq + head) * d;
      q_out[q + i] = y1;
      q_out[q + i + half] = y2;
    } else {
      qkv[off + i] = y1;
      qkv[off + i + half] = y2;
    }
  }
}

// K and V of token r (already rotated) into the paged cache at slot_of[r] = page·16 + slot.
__global__ void kv_append_kernel(const __nv_bfloat16* qkv, const int64_t* slot_of, __nv_bfloat16* k_cache,
                                 __nv_bfloat16* v_cache, int hq, int hk, int d) {
  const int64_t r = blockIdx.x;
  const int64_t row = r * static_cast<int64_t>(hq + 2 * hk) * d;
  const int64_t page = slot_of[r] / kPageSize;
  const int slot = static_cast<int>(slot_of[r] % kPageSize);
  for (int e = threadIdx.x; e < hk * d; e += blockDim.x) {
    const int head = e / d, i = e % d;
    const int64_t dst = kv_cache_offset(page, head, slot, i, hk, d);
    k_cache[dst] = qkv[row + static_cast<int64_t>(hq) * d + e];
    v_cache[dst] = qkv[row + static_cast<int64_t>(hq + hk) * d + e];
  }
}

// out[r][i] = SiLU(gate_up[r][i]) · gate_up[r][inter + i]; row r over `chunks` blocks (grid T·chunks).
__global__ void silu_mul_kernel(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int inter, int chunks) {
  const int64_t r = blockIdx.x / chunks;
  const int part = static_cast<int>(blockIdx.x % chunks);
  for (int i = part * blockDim.x + threadIdx.x; i < inter; i += chunks * blockDim.x) {
    const float g = __bfloat162float(gate_up[r * 2 * inter + i]);
    const float u = __bfloat162float(gate_up[r * 2 * inter + inter + i]);
    const float s = __bfloat162float(__float2bfloat16(g / (1.0f + expf(-g))));
    out[r * inter + i] = __float2bfloat16(s * u);
  }
}

// out[j] = x[rows[j]] (one block per output row).
__global__ void gather_rows_kernel(const __nv_bfloat16* x, const int32_t* rows, __nv_bfloat16* out, int h) {
  const int64_t j = blockIdx.x;
  const int64_t src = static_cast<int64_t>(rows[j]) * h;
  for (int i = threadIdx.x; i < h; i += blockDim.x) out[j * h + i] = x[src + i];
}

// sampled[j] = argmax over the vocab of logits[j] (lowest id on ties), one block of
// kWideThreads per row.
__global__ void argmax_kernel(const __nv_bfloat16* logits, int vocab, int32_t* sampled) {
  __shared__ float best_v[kWideThreads];
  __shared__ int best_i[kWideThreads];
  const int64_t base = static_cast<int64_t>(blockIdx.x) * vocab;
  float bv = -3.0e38f;
  int bi = vocab;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = __bfloat162float(logits[base + i]);
    if (v > bv) {
      bv = v;
      bi = i;
    }
  }
  best_v[threadIdx.x] = bv;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  for (int s = kWideThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) {
      const float ov = best_v[threadIdx.x + s];
      const int oi = best_i[threadIdx.x + s];
      if (ov > best_v[threadIdx.x] || (ov == best_v[threadIdx.x] && oi < best_i[threadIdx.x])) {
        best_v[threadIdx.x] = ov;
        best_i[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) sampled[blockIdx.x] = best_i[0];
}

}  // namespace servesim::kernels::replay_detail
