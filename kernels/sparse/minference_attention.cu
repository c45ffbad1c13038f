// MInference sparse prefill attention (minference_kernels.cuh): one launch for all heads,
// each with its own pattern. A block owns 64 query rows of one head (4 warps x 16 rows)
// and walks that row block's key tiles: the ranges in 64-key steps (block-sparse /
// slash ranges; A-shape sink and band), then the columns in gathered groups of 64
// (PIT-style vertical lines). Per tile: S = Q K^T on tensor cores (WMMA), masking
// (causal; A-shape band), online softmax in fp32, O += P V on tensor cores with P in bf16.
// The cost is proportional to the number of visited tiles, i.e. to the pattern's area.
//
// Shared memory: Q, K, V tiles (3 x 64 x 136 bf16), scores (64 x 68 fp32, reused for the
// P V partial products), P (64 x 72 bf16), tile key ids: 77 KiB -> 2 blocks per SM.
// Each lane owns one query row (lane / 2) and 64 of its 128 output channels.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/common/cuda_util.cuh"
#include "kernels/sparse/minference_kernels.cuh"
#include "kernels/sparse/sparse_device.cuh"
#include "kernels/sparse/sparse_wmma.cuh"

namespace servesim::kernels::sparse {
namespace {

constexpr int kDim = 128;
constexpr int kLd = kDim + 8;
constexpr int kSLd = 64 + 4;
constexpr int kPLd = 64 + 8;
constexpr float kLog2e = 1.4426950408889634f;

struct AttnSmem {
  __nv_bfloat16 q[64][kLd];
  __nv_bfloat16 k[64][kLd];
  __nv_bfloat16 v[64][kLd];
  float s[64][kSLd];
  __nv_bfloat16 p[64][kPLd];
  int key[64];  // key position of each tile row, -1 when the row is padding
};

struct RowState {
  float m = -INFINITY;  // running max (log2 domain)
  float l = 0.0f;       // running denominator (this lane's row; both lanes of a row agree)
  float o[64];          // channels [32 half, +32) and [64 + 32 half, +32)
};

// One 64-key tile whose keys are already in sm.key / sm.k / sm.v.
// Q fragments are reloaded from shared memory per tile (cheap) to stay under 255 registers.
__device__ __forceinline__ void attend_tile(AttnSmem& sm, RowState& st, int row_pos, bool row_valid, bool ashape,
                                            int sink, int window, float scale2) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int lr = warp * 16 + (lane >> 1), half = lane & 1;
  {
    WmmaA qa[kDim / 16];
    wmma_load_rows16(qa, &sm.q[warp * 16][0], kLd);
    wmma_abt_16x64(qa, &sm.k[0][0], kLd, &sm.s[warp * 16][0], kSLd);
  }
  __syncwarp();
  float x[32];
  float tmax = -INFINITY;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int c = sm.key[half * 32 + i];
    bool ok = row_valid && c >= 0 && c <= row_pos;
    if (ashape) ok = ok && (c < sink || row_pos - c < window);
    x[i] = ok ? sm.s[lr][half * 32 + i] * scale2 : -INFINITY;
    tmax = fmaxf(tmax, x[i]);
  }
  tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
  const float m_new = fmaxf(st.m, tmax);
  const bool empty = m_new == -INFINITY;  // nothing visible to this row yet
  const float alpha = empty ? 1.0f : exp2f(st.m - m_new);
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const float p = empty ? 0.0f : exp2f(x[i] - m_new);
    sum += p;
    sm.p[lr][half * 32 + i] = __float2bfloat16(p);
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  st.l = st.l * alpha + sum;
  st.m = m_new;
  __syncwarp();
#pragma unroll
  for (int part = 0; part < 2; ++part) {
    wmma_ab_16x64(&sm.p[warp * 16][0], kPLd, &sm.v[0][0], kLd, part * 64, &sm.s[warp * 16][0], kSLd);
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 32; ++i) st.o[part * 32 + i] = st.o[part * 32 + i] * alpha + sm.s[lr][half * 32 + i];
    __syncwarp();
  }
}

// Loads the K and V rows of the keys in sm.key (set by the caller before a
// __syncthreads) through the page table; padding rows (key -1) become zeros.
__device__ __forceinline__ void load_kv_tile(AttnSmem& sm, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                             const int32_t* page_table, int num_kv_heads, int kvh) {
  for (int idx = threadIdx.x; idx < 64 * (kDim / 8); idx += blockDim.x) {
    const int r = idx / (kDim / 8), c = (idx % (kDim / 8)) * 8;
    const int key = sm.key[r];
    uint4 kval = make_uint4(0, 0, 0, 0), vval = kval;
    if (key >= 0) {
      const int64_t off = kv_cache_offset(page_table[key / kPageSize], kvh, key % kPageSize, c, num_kv_heads, kDim);
      kval = *reinterpret_cast<const uint4*>(k + off);
      vval = *reinterpret_cast<const uint4*>(v + off);
    }
    *reinterpret_cast<uint4*>(&sm.k[r][c]) = kval;
    *reinterpret_cast<uint4*>(&sm.v[r][c]) = vval;
  }
}

__global__ void __launch_bounds__(128) minf_attention_kernel(MInfAttentionArgs a) {
  SERVESIM_SPARSE_DYNAMIC_SMEM(smem_raw);
  AttnSmem& sm = *reinterpret_cast<AttnSmem*>(smem_raw);
  const MInfPrompt pr = a.prompt;
  const MInfBuffers& ix = a.index;
  const int h = blockIdx.y, kvh = h / (pr.num_q_heads / pr.num_kv_heads);
  const int rb = ix.nb - 1 - static_cast<int>(blockIdx.x);  // longest rows first
  const int q0 = rb * kMInfBlock, q1 = min(pr.n, q0 + kMInfBlock);
  const MInfHeadDesc d = ix.heads[h];
  const bool ashape = d.type == static_cast<int32_t>(MInfPattern::kAShape);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int row_pos = q0 + warp * 16 + (lane >> 1), half = lane & 1;
  const bool row_valid = row_pos < q1;
  const float scale2 = pr.scale * kLog2e;

  load_tile64(&sm.q[0][0], kLd, [&](int i) {
    return q0 + i < q1 ? pr.q + (static_cast<int64_t>(q0 + i) * pr.num_q_heads + h) * kDim : nullptr;
  });
  RowState st;
#pragma unroll
  for (int i = 0; i < 64; ++i) st.o[i] = 0.0f;

  // Ranges: A-shape derives its two ranges; other patterns read the index.
  int num_ranges = 0;
  int2 sink_range = make_int2(0, 0), band_range = make_int2(0, 0);  // A-shape; either may be empty
  const int2* ranges = nullptr;
  if (ashape) {
    const int sink_end = min(d.a, q1);
    sink_range = make_int2(0, sink_end);
    band_range = make_int2(max(sink_end, q0 - d.b + 1), q1);
    num_ranges = 2;
  } else {
    num_ranges = ix.range_count[h * ix.nb + rb];
    ranges = ix.ranges + d.range_base + static_cast<int64_t>(rb) * d.range_cap;
  }
  for (int i = 0; i < num_ranges; ++i) {
    const int2 r = ashape ? (i == 0 ? sink_range : band_range) : ranges[i];
    for (int s = r.x; s < r.y; s += 64) {
      const int t = static_cast<int>(threadIdx.x);
      if (t < 64) sm.key[t] = s + t < r.y ? s + t : -1;
      __syncthreads();
      load_kv_tile(sm, pr.k_cache, pr.v_cache, pr.page_table, pr.num_kv_heads, kvh);
      __syncthreads();
      attend_tile(sm, st, row_pos, row_valid, ashape, d.a, d.b, scale2);
      __syncthreads();
    }
  }
  const int num_cols = ashape ? 0 : ix.col_count[h * ix.nb + rb];
  const int32_t* cols = ix.cols + d.col_base + static_cast<int64_t>(rb) * d.col_cap;
  for (int j0 = 0; j0 < num_cols; j0 += 64) {
    const int t = static_cast<int>(threadIdx.x);
    if (t < 64) sm.key[t] = j0 + t < num_cols ? cols[j0 + t] : -1;
    __syncthreads();
    load_kv_tile(sm, pr.k_cache, pr.v_cache, pr.page_table, pr.num_kv_heads, kvh);
    __syncthreads();
    attend_tile(sm, st, row_pos, row_valid, false, 0, 0, scale2);
    __syncthreads();
  }

  if (!row_valid) return;
  const float inv = st.l > 0.0f ? 1.0f / st.l : 0.0f;
  __nv_bfloat16* out = a.out + (static_cast<int64_t>(row_pos) * pr.num_q_heads + h) * kDim;
#pragma unroll
  for (int part = 0; part < 2; ++part) {
#pragma unroll
    for (int i = 0; i < 32; i += 2) {
      const int c = part * 64 + half * 32 + i;
      *reinterpret_cast<__nv_bfloat162*>(out + c) =
          __floats2bfloat162_rn(st.o[part * 32 + i] * inv, st.o[part * 32 + i + 1] * inv);
    }
  }
  if (a.lse && half == 0) {
    a.lse[static_cast<int64_t>(row_pos) * pr.num_q_heads + h] = st.l > 0.0f ? (st.m + log2f(st.l)) / kLog2e : -INFINITY;
  }
}

}  // namespace

void check_minf_attention_args(const MInfAttentionArgs& args, const char* name) {
  const MInfPrompt& pr = args.prompt;
  if (pr.head_dim != 128 || pr.num_kv_heads <= 0 || pr.num_q_heads % pr.num_kv_heads != 0 || pr.n <= 0)
    throw std::invalid_argument(std::string(name) + ": need head_dim 128, GQA heads and n >= 1");
}

void minf_attention(const MInfAttentionArgs& args, cudaStream_t stream) {
  static_assert(kDim == 128, "check_minf_attention_args checks head_dim 128");
  check_minf_attention_args(args, "minf_attention");
  const MInfPrompt& pr = args.prompt;
  const size_t smem = sizeof(AttnSmem);
  SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(minf_attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  SERVESIM_LAUNCH(minf_attention_kernel, dim3(args.index.nb, pr.num_q_heads), 128, smem, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels::sparse
