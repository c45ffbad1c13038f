// MInference estimates (minference_kernels.cuh): the vertical-slash last-64-query
// softmax sums and the block-sparse mean-pooled block logits.
//
// Vertical-slash: the 64 x n logits of the last queries are computed twice with tensor
// cores (first pass: per-chunk row max/sum, merged into the row LSE; second pass:
// probabilities summed along columns and diagonals) instead of being stored, so memory
// stays O(n) at 1M tokens. Cost ~ 2 x 2 x 64 x n x 128 FLOPs per head.
#include <algorithm>
#include <stdexcept>

#include "kernels/common/cuda_util.cuh"
#include "kernels/sparse/minference_kernels.cuh"
#include "kernels/sparse/sparse_device.cuh"
#include "kernels/sparse/sparse_wmma.cuh"

namespace servesim::kernels::sparse {
namespace {

constexpr int kDim = 128;
constexpr int kLd = kDim + 8;  // bf16 tile leading dimension (bank-conflict padding)
constexpr int kSLd = 64 + 4;   // float score tile leading dimension
constexpr float kLog2e = 1.4426950408889634f;

struct VsEstimateSmem {
  __nv_bfloat16 q[64][kLd];
  __nv_bfloat16 k[64][kLd];
  float s[64][kSLd];
  float slash[kMInfEstimateChunk + 64];  // diagonal sums of this chunk
  float col[64];
};

// kAccumulate == false: per-chunk (max, sum) of each last-query row (log2 domain).
// kAccumulate == true: probabilities exp2(x - lse) summed into vertical and slash.
template <bool kAccumulate>
__global__ void __launch_bounds__(128) vs_estimate_kernel(MInfPrompt pr, MInfBuffers buf) {
  SERVESIM_SPARSE_DYNAMIC_SMEM(smem_raw);
  VsEstimateSmem& sm = *reinterpret_cast<VsEstimateSmem*>(smem_raw);
  const int slot = blockIdx.y, chunk = blockIdx.x;
  const int h = buf.vs_heads[slot], kvh = h / (pr.num_q_heads / pr.num_kv_heads);
  const int n = pr.n, r0 = max(0, n - kMInfLastQ), nrows = n - r0;
  const int c_begin = chunk * kMInfEstimateChunk, c_end = min(n, c_begin + kMInfEstimateChunk);
  const int warp = threadIdx.x >> 5, row = threadIdx.x >> 1, half = threadIdx.x & 1;
  const int r = r0 + row;
  const float scale2 = pr.scale * kLog2e;
  const int o_lo = r0 - (c_end - 1);  // smallest diagonal offset this chunk can produce

  load_tile64(&sm.q[0][0], kLd, [&](int i) {
    return i < nrows ? pr.q + (static_cast<int64_t>(r0 + i) * pr.num_q_heads + h) * kDim : nullptr;
  });
  if (kAccumulate) {
    for (int i = threadIdx.x; i < kMInfEstimateChunk + 64; i += blockDim.x) sm.slash[i] = 0.0f;
  }
  __syncthreads();
  WmmaA qa[kDim / 16];
  wmma_load_rows16(qa, &sm.q[warp * 16][0], kLd);
  const float lse2 = kAccumulate && row < nrows ? buf.vs_lse[slot * 64 + row] : 0.0f;
  float m = -INFINITY, l = 0.0f;

  for (int t0 = c_begin; t0 < c_end; t0 += 64) {
    load_tile64(&sm.k[0][0], kLd, [&](int j) {
      return t0 + j < c_end ? paged_row(pr.k_cache, pr.page_table, t0 + j, kvh, pr.num_kv_heads, kDim) : nullptr;
    });
    __syncthreads();
    wmma_abt_16x64(qa, &sm.k[0][0], kLd, &sm.s[warp * 16][0], kSLd);
    __syncwarp();
    // Thread (row, half) owns columns [32 half, 32 half + 32) of its row.
    float x[32];
    float tmax = -INFINITY;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int c = t0 + half * 32 + i;
      const bool ok = row < nrows && c < c_end && c <= r;
      x[i] = ok ? sm.s[row][half * 32 + i] * scale2 : -INFINITY;
      tmax = fmaxf(tmax, x[i]);
    }
    if constexpr (!kAccumulate) {
      const float m_new = fmaxf(m, tmax);
      if (m_new != -INFINITY) {
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < 32; ++i) sum += exp2f(x[i] - m_new);
        l = l * exp2f(m - m_new) + sum;
        m = m_new;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 32; ++i) {
        const float p = x[i] == -INFINITY ? 0.0f : exp2f(x[i] - lse2);
        sm.s[row][half * 32 + i] = p;
        const int c = t0 + half * 32 + i;
        if (p != 0.0f) atomicAdd(&sm.slash[r - c - o_lo], p);
      }
      __syncthreads();
      const int t = static_cast<int>(threadIdx.x);
      if (t < 64 && t0 + t < c_end) {
        float sum = 0.0f;
        for (int i = 0; i < 64; ++i) sum += sm.s[i][t];
        buf.vertical[static_cast<int64_t>(slot) * n + t0 + t] = sum;
      }
    }
    __syncthreads();
  }
  if constexpr (!kAccumulate) {
    // Merge the two halves of the row.
    const float m2 = __shfl_xor_sync(0xffffffffu, m, 1), l2 = __shfl_xor_sync(0xffffffffu, l, 1);
    const float mm = fmaxf(m, m2);
    const float ll = mm == -INFINITY ? 0.0f : l * exp2f(m - mm) + l2 * exp2f(m2 - mm);
    if (half == 0) {
      float* out = buf.vs_ml + ((static_cast<int64_t>(slot) * buf.num_chunks + chunk) * 64 + row) * 2;
      out[0] = mm;
      out[1] = ll;
    }
  } else {
    for (int i = threadIdx.x; i < c_end - c_begin + 63; i += blockDim.x) {
      const int o = o_lo + i;
      if (o >= 0 && o < n && sm.slash[i] != 0.0f) atomicAdd(&buf.slash[static_cast<int64_t>(slot) * n + o], sm.slash[i]);
    }
  }
}

// Row LSE (log2 domain) of the last queries from the per-chunk partials.
__global__ void vs_lse_kernel(MInfBuffers buf) {
  const int slot = blockIdx.x, row = threadIdx.x;
  const float* ml = buf.vs_ml + static_cast<int64_t>(slot) * buf.num_chunks * 128;
  float mx = -INFINITY;
  for (int c = 0; c < buf.num_chunks; ++c) mx = fmaxf(mx, ml[(c * 64 + row) * 2]);
  float sum = 0.0f;
  if (mx != -INFINITY) {
    for (int c = 0; c < buf.num_chunks; ++c) {
      const float m = ml[(c * 64 + row) * 2];
      if (m != -INFINITY) sum += ml[(c * 64 + row) * 2 + 1] * exp2f(m - mx);
    }
  }
  buf.vs_lse[slot * 64 + row] = sum > 0.0f ? mx + log2f(sum) : -INFINITY;
}

// Mean of each 64-token block; one block per (token block, head slot), thread = channel.
// Queries are contiguous (page_table == nullptr), keys paged.
__global__ void mean_pool_kernel(const __nv_bfloat16* x, const int32_t* page_table, int num_heads,
                                 const int32_t* head_ids, int n, int nb, float* out) {
  const int i = blockIdx.x, slot = blockIdx.y, d = threadIdx.x;
  const int h = head_ids ? head_ids[slot] : slot;
  const int t0 = i * kMInfBlock, t1 = min(n, t0 + kMInfBlock);
  float sum = 0.0f;
  for (int t = t0; t < t1; ++t) {
    const __nv_bfloat16* row = page_table ? paged_row(x, page_table, t, h, num_heads, kDim)
                                          : x + (static_cast<int64_t>(t) * num_heads + h) * kDim;
    sum += __bfloat162float(row[d]);
  }
  out[(static_cast<int64_t>(slot) * nb + i) * kDim + d] = sum / static_cast<float>(t1 - t0);
}

// logits[slot][i][j] = scale * q_pool_i . k_pool_j for j <= i, -inf above the diagonal.
__global__ void bs_logits_kernel(MInfPrompt pr, MInfBuffers buf) {
  const int i = blockIdx.x, slot = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  const int kvh = buf.bs_heads[slot] / (pr.num_q_heads / pr.num_kv_heads);
  const float* qp = buf.q_pool + (static_cast<int64_t>(slot) * buf.nb + i) * kDim + lane * 4;
  const float4 qv = *reinterpret_cast<const float4*>(qp);
  float* row = buf.bs_logits + (static_cast<int64_t>(slot) * buf.nb + i) * buf.nb;
  for (int j = warp; j < buf.nb; j += warps) {
    if (j > i) {
      if (lane == 0) row[j] = -INFINITY;
      continue;
    }
    const float4 kv = *reinterpret_cast<const float4*>(buf.k_pool + (static_cast<int64_t>(kvh) * buf.nb + j) * kDim + lane * 4);
    const float s = warp_sum(qv.x * kv.x + qv.y * kv.y + qv.z * kv.z + qv.w * kv.w);
    if (lane == 0) row[j] = s * pr.scale;
  }
}

void require_prompt(const MInfPrompt& pr) {
  if (pr.head_dim != kDim || pr.num_kv_heads <= 0 || pr.num_q_heads % pr.num_kv_heads != 0 || pr.n <= 0) {
    throw std::invalid_argument("minference kernels: need head_dim 128, GQA heads and n >= 1");
  }
}

template <bool kAccumulate>
void launch_vs_estimate(const MInfPrompt& pr, const MInfBuffers& buf, cudaStream_t stream) {
  const size_t smem = sizeof(VsEstimateSmem);
  SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(vs_estimate_kernel<kAccumulate>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  SERVESIM_LAUNCH(vs_estimate_kernel<kAccumulate>, dim3(buf.num_chunks, buf.num_vs), 128, smem, stream, pr, buf);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

void minf_vs_estimate(const MInfPrompt& pr, const MInfBuffers& buf, cudaStream_t stream) {
  require_prompt(pr);
  if (buf.num_vs == 0) return;
  launch_vs_estimate<false>(pr, buf, stream);
  SERVESIM_LAUNCH(vs_lse_kernel, buf.num_vs, 64, 0, stream, buf);
  SERVESIM_CUDA_CHECK_LAUNCH();
  SERVESIM_CUDA_CHECK(cudaMemsetAsync(buf.slash, 0, sizeof(float) * buf.num_vs * static_cast<size_t>(pr.n), stream));
  launch_vs_estimate<true>(pr, buf, stream);
}

void minf_bs_estimate(const MInfPrompt& pr, const MInfBuffers& buf, cudaStream_t stream) {
  require_prompt(pr);
  if (buf.num_bs == 0) return;
  SERVESIM_LAUNCH(mean_pool_kernel, dim3(buf.nb, buf.num_bs), kDim, 0, stream, pr.q, nullptr, pr.num_q_heads, buf.bs_heads, pr.n,
                                                                   buf.nb, buf.q_pool);
  SERVESIM_CUDA_CHECK_LAUNCH();
  SERVESIM_LAUNCH(mean_pool_kernel, dim3(buf.nb, pr.num_kv_heads), kDim, 0, stream, pr.k_cache, pr.page_table, pr.num_kv_heads,
                                                                       nullptr, pr.n, buf.nb, buf.k_pool);
  SERVESIM_CUDA_CHECK_LAUNCH();
  SERVESIM_LAUNCH(bs_logits_kernel, dim3(buf.nb, buf.num_bs), 256, 0, stream, pr, buf);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels::sparse
