// MInference sparse prefill attention, variant `mma` (minference_kernels.cuh:
// minf_attention_mma): the contract of minf_attention (same index, same outputs), on the
// dense prefill's tensor-core path (kernels/common/attention_warp.cuh: ldmatrix,
// mma.sync m16n8k16, P kept in registers between S = Q K^T and O += P V) instead of WMMA
// with score / P round trips through shared memory and synchronous loads.
//
// A block owns 64 query rows of one head (4 warps x 16 rows) and walks that row block's
// key tiles in the order of minf_attention: the ranges in 64-key steps (block-sparse /
// slash ranges; A-shape sink and band), then the columns in gathered groups of 64. Every
// tile, contiguous or not, is loaded by the gathered-key cp.async loader
// (load_gathered_kv_tile_async: each row's position through the page table) into one of
// two stages, so the next tile's loads overlap this tile's math. Each stage keeps its
// tiles' key positions for masking (causal; A-shape band; padding rows -1).
//
// Shared memory: Q (64 x 136 bf16) + 2 stages x K, V (64 x 136 bf16) + 2 x 64 key ids:
// 85.5 KiB -> 2 blocks per SM (the WMMA variant: 77 KiB).
// Speed: unmeasured (no GPU run yet).
#include <algorithm>
#include <stdexcept>

#include "kernels/common/attention_warp.cuh"
#include "kernels/common/cuda_util.cuh"
#include "kernels/sparse/minference_kernels.cuh"
#include "kernels/sparse/sparse_device.cuh"

namespace servesim::kernels::sparse {
namespace {

constexpr int kMmaDim = 128;
constexpr int kMmaThreads = 128;
constexpr int kTileKeys = 64;
constexpr int kStride = kSmemStride<kMmaDim>;
constexpr int kTileElems = kTileKeys * kStride;

struct MmaSmem {
  __nv_bfloat16 q[kMInfBlock * kStride];
  __nv_bfloat16 k[2][kTileElems];
  __nv_bfloat16 v[2][kTileElems];
  int key[2][kTileKeys];
};

// The row block's key tiles as a cursor: ranges first (64-key steps), then column groups.
// Every thread of the block holds the same cursor (all inputs are block-uniform).
struct TileCursor {
  int range = 0;   // index of the current range; == num_ranges once in the columns
  int start = 0;   // first key of the tile (ranges) or first column index (columns)
  bool valid = false;
  bool contiguous = true;
  int end = 0;     // ranges: end of the range; columns: num_cols
};

struct TileSource {
  int num_ranges;
  int2 sink_range, band_range;  // A-shape
  const int2* ranges;           // other patterns
  bool ashape;
  int num_cols;
  const int32_t* cols;

  __device__ int2 range_at(int i) const { return ashape ? (i == 0 ? sink_range : band_range) : ranges[i]; }

  // The first tile at or after (range i, key s).
  __device__ TileCursor seek(int i, int s) const {
    TileCursor c;
    for (; i < num_ranges; ++i) {
      const int2 r = range_at(i);
      const int from = max(s, r.x);
      if (from < r.y) {
        c.range = i, c.start = from, c.end = r.y, c.valid = true, c.contiguous = true;
        return c;
      }
      s = 0;
    }
    c.range = num_ranges, c.contiguous = false;
    if (s < num_cols) c.start = s, c.end = num_cols, c.valid = true;
    return c;
  }
  __device__ TileCursor first() const { return seek(0, 0); }
  __device__ TileCursor next(const TileCursor& c) const {
    if (c.contiguous) return seek(c.range, c.start + kTileKeys);
    TileCursor n = c;
    n.start += kTileKeys;
    n.valid = n.start < num_cols;
    return n;
  }
  __device__ int key(const TileCursor& c, int r) const {
    const int j = c.start + r;
    if (j >= c.end) return -1;
    return c.contiguous ? j : cols[j];
  }
};

__global__ void __launch_bounds__(kMmaThreads) minf_attention_mma_kernel(MInfAttentionArgs a) {
  SERVESIM_SPARSE_DYNAMIC_SMEM(smem_raw);
  MmaSmem& sm = *reinterpret_cast<MmaSmem*>(smem_raw);
  const MInfPrompt pr = a.prompt;
  const MInfBuffers& ix = a.index;
  const int h = blockIdx.y, kvh = h / (pr.num_q_heads / pr.num_kv_heads);
  const int rb = ix.nb - 1 - static_cast<int>(blockIdx.x);  // longest rows first
  const int q0 = rb * kMInfBlock, q1 = min(pr.n, q0 + kMInfBlock);
  const MInfHeadDesc d = ix.heads[h];
  const bool ashape = d.type == static_cast<int32_t>(MInfPattern::kAShape);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int warp_pos0 = q0 + warp * 16;  // position of the warp's first row
  const float scale_log2 = pr.scale * kLog2e;

  TileSource src{};
  src.ashape = ashape;
  if (ashape) {
    const int sink_end = min(d.a, q1);
    src.sink_range = make_int2(0, sink_end);
    src.band_range = make_int2(max(sink_end, q0 - d.b + 1), q1);
    src.num_ranges = 2;
    src.num_cols = 0;
  } else {
    src.num_ranges = ix.range_count[h * ix.nb + rb];
    src.ranges = ix.ranges + d.range_base + static_cast<int64_t>(rb) * d.range_cap;
    src.num_cols = ix.col_count[h * ix.nb + rb];
    src.cols = ix.cols + d.col_base + static_cast<int64_t>(rb) * d.col_cap;
  }

  load_rows_async<kMmaDim, kMmaThreads>(sm.q, pr.q + (static_cast<int64_t>(q0) * pr.num_q_heads + h) * kMmaDim,
                                        static_cast<int64_t>(pr.num_q_heads) * kMmaDim, kMInfBlock, q1 - q0, tid);
  auto issue = [&](const TileCursor& c, int stage) {
    if (tid < kTileKeys) sm.key[stage][tid] = src.key(c, tid);
    load_gathered_kv_tile_async<kMmaDim, kTileKeys, kMmaThreads>(
        sm.k[stage], sm.v[stage], pr.k_cache, pr.v_cache, pr.page_table, pr.num_kv_heads, kvh,
        [&](int r) { return src.key(c, r); }, tid);
  };
  TileCursor cur = src.first();
  if (cur.valid) issue(cur, 0);
  ptx::cp_async_commit();  // Q (and the first tile)

  WarpAttnState<kMmaDim, 1> st;
  st.init();
  for (int i = 0; cur.valid; ++i) {
    const int stage = i & 1;
    const TileCursor nxt = src.next(cur);
    if (nxt.valid) {
      issue(nxt, stage ^ 1);
      ptx::cp_async_commit();
      ptx::cp_async_wait<1>();
    } else {
      ptx::cp_async_wait<0>();
    }
    __syncthreads();  // this stage's K, V and key ids are visible to the block
    const int* keys = sm.key[stage];
    // A contiguous tile entirely above the warp's last row contributes nothing.
    const bool skip = cur.contiguous && cur.start > warp_pos0 + 15;
    if (!skip) {
      float s[1][kTileKeys / 8][4];
      warp_qk<kMmaDim, 1, kTileKeys>(s, sm.q + warp * 16 * kStride, sm.k[stage], lane);
      const bool tile_ashape = ashape && cur.contiguous;
      warp_online_softmax<kMmaDim, 1, kTileKeys>(
          st, s, scale_log2, true,
          [&](int r, int kk) {
            const int pos = warp_pos0 + r, c = keys[kk];
            bool ok = pos < q1 && c >= 0 && c <= pos;
            if (tile_ashape) ok = ok && (c < d.a || pos - c < d.b);
            return ok;
          },
          lane);
      warp_pv<kMmaDim, 1, kTileKeys>(st, s, sm.v[stage], lane);
    }
    __syncthreads();  // the stage is refilled by the next iteration's prefetch
    cur = nxt;
  }
  ptx::cp_async_wait<0>();
  st.finalize_row_sums();

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int pos = warp_pos0 + g + 8 * hh;
    if (pos >= q1) continue;
    const float l = st.l[0][hh];
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    __nv_bfloat16* out = a.out + (static_cast<int64_t>(pos) * pr.num_q_heads + h) * kMmaDim;
#pragma unroll
    for (int j = 0; j < kMmaDim / 8; ++j)
      *reinterpret_cast<__nv_bfloat162*>(out + j * 8 + 2 * t) =
          __floats2bfloat162_rn(st.o[0][j][2 * hh] * inv, st.o[0][j][2 * hh + 1] * inv);
    if (a.lse && t == 0)
      a.lse[static_cast<int64_t>(pos) * pr.num_q_heads + h] = l > 0.0f ? (st.m[0][hh] + log2f(l)) * kLn2 : -INFINITY;
  }
}

}  // namespace

void minf_attention_mma(const MInfAttentionArgs& args, cudaStream_t stream) {
  static_assert(kMmaDim == 128, "check_minf_attention_args checks head_dim 128");
  check_minf_attention_args(args, "minf_attention_mma");
  const MInfPrompt& pr = args.prompt;
  const size_t smem = sizeof(MmaSmem);
  SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(minf_attention_mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  SERVESIM_LAUNCH(minf_attention_mma_kernel, dim3(args.index.nb, pr.num_q_heads), kMmaThreads, smem, stream, args);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels::sparse
