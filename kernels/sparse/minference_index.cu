// MInference index building (minference_kernels.cuh): top-k lines / blocks with
// block_topk, the vertical-slash merge of Algorithm 4 (one thread per 64-row block), and
// the block-sparse ranges. The result is what minf_attention reads: per (head, row block)
// a count of (start, end) key ranges and a count of single columns.
#include <stdexcept>

#include "kernels/common/cuda_util.cuh"
#include "kernels/sparse/minference_kernels.cuh"
#include "kernels/sparse/sparse_device.cuh"

namespace servesim::kernels::sparse {
namespace {

// blockIdx.y == 0: vertical lines (columns), 1: slash lines (diagonal offsets).
__global__ void __launch_bounds__(kTopkThreads) vs_topk_kernel(int n, MInfBuffers buf) {
  __shared__ TopkShared sm;
  const int slot = blockIdx.x;
  const MInfHeadDesc d = buf.heads[buf.vs_heads[slot]];
  if (blockIdx.y == 0) {
    block_topk(buf.vertical + static_cast<int64_t>(slot) * n, n, d.col_cap, kMInfForcedColumns,
               buf.lines_v + static_cast<int64_t>(slot) * buf.max_kv, sm);
  } else {
    block_topk(buf.slash + static_cast<int64_t>(slot) * n, n, d.range_cap, kMInfForcedSlashes,
               buf.lines_s + static_cast<int64_t>(slot) * buf.max_ks, sm);
  }
}

// Algorithm 4 for one (VS head, row block): slash ranges by ascending start (offsets
// descending) merged when they overlap or touch; then the vertical columns < q1 that no
// range covers.
__global__ void vs_index_kernel(int n, MInfBuffers buf) {
  const int slot = blockIdx.y, rb = blockIdx.x * blockDim.x + threadIdx.x;
  if (rb >= buf.nb) return;
  const int h = buf.vs_heads[slot];
  const MInfHeadDesc d = buf.heads[h];
  const int q0 = rb * kMInfBlock, q1 = min(n, q0 + kMInfBlock);
  const int32_t* lv = buf.lines_v + static_cast<int64_t>(slot) * buf.max_kv;
  const int32_t* ls = buf.lines_s + static_cast<int64_t>(slot) * buf.max_ks;
  int2* ranges = buf.ranges + d.range_base + static_cast<int64_t>(rb) * d.range_cap;
  int32_t* cols = buf.cols + d.col_base + static_cast<int64_t>(rb) * d.col_cap;
  int nr = 0;
  int2 cur = make_int2(0, 0);
  for (int i = d.range_cap - 1; i >= 0; --i) {
    const int o = ls[i];
    if (q1 - o <= 0) continue;
    const int lo = max(0, q0 - o), hi = q1 - o;
    if (nr > 0 && lo <= cur.y) {
      cur.y = max(cur.y, hi);
    } else {
      if (nr > 0) ranges[nr - 1] = cur;
      cur = make_int2(lo, hi);
      ++nr;
    }
  }
  if (nr > 0) ranges[nr - 1] = cur;
  int nc = 0, r = 0;
  for (int i = 0; i < d.col_cap; ++i) {
    const int c = lv[i];
    if (c >= q1) break;
    while (r < nr && ranges[r].y <= c) ++r;
    if (r < nr && ranges[r].x <= c) continue;
    cols[nc++] = c;
  }
  buf.range_count[h * buf.nb + rb] = nr;
  buf.col_count[h * buf.nb + rb] = nc;
}

// Top k_b key blocks among j <= i of block-sparse row block i, written as key ranges.
__global__ void __launch_bounds__(kTopkThreads) bs_topk_kernel(int n, MInfBuffers buf) {
  __shared__ TopkShared sm;
  const int i = blockIdx.x, slot = blockIdx.y;
  const int h = buf.bs_heads[slot];
  const MInfHeadDesc d = buf.heads[h];
  int32_t* blocks = buf.bs_blocks + (static_cast<int64_t>(slot) * buf.nb + i) * buf.max_kb;
  block_topk(buf.bs_logits + (static_cast<int64_t>(slot) * buf.nb + i) * buf.nb, i + 1, d.range_cap, 0, blocks, sm);
  __syncthreads();
  const int count = min(d.range_cap, i + 1);
  int2* ranges = buf.ranges + d.range_base + static_cast<int64_t>(i) * d.range_cap;
  for (int t = threadIdx.x; t < count; t += blockDim.x) {
    const int j = blocks[t];
    ranges[t] = make_int2(j * kMInfBlock, min(n, (j + 1) * kMInfBlock));
  }
  if (threadIdx.x == 0) {
    buf.range_count[h * buf.nb + i] = count;
    buf.col_count[h * buf.nb + i] = 0;
  }
}

}  // namespace

void minf_vs_index(const MInfPrompt& pr, const MInfBuffers& buf, cudaStream_t stream) {
  if (buf.num_vs == 0) return;
  SERVESIM_LAUNCH(vs_topk_kernel, dim3(buf.num_vs, 2), kTopkThreads, 0, stream, pr.n, buf);
  SERVESIM_CUDA_CHECK_LAUNCH();
  SERVESIM_LAUNCH(vs_index_kernel, dim3((buf.nb + 127) / 128, buf.num_vs), 128, 0, stream, pr.n, buf);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

void minf_bs_index(const MInfPrompt& pr, const MInfBuffers& buf, cudaStream_t stream) {
  if (buf.num_bs == 0) return;
  SERVESIM_LAUNCH(bs_topk_kernel, dim3(buf.nb, buf.num_bs), kTopkThreads, 0, stream, pr.n, buf);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels::sparse
