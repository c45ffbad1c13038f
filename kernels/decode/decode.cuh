// Dense paged decode on the GPU: split-KV (flash-decoding) attention of one new token
// per sequence over a ragged batch of paged contexts, then a merge of the splits.
// Layouts: kernels/common/layout.h. Work decomposition: decode_plan.h.
//
// Kernel 1 (decode_splitkv): one block of 4 warps per (work item, KV head). The block
// streams its split's keys in 64-key tiles (4 pages) through a two-stage cp.async
// pipeline; every tile is loaded once and serves all `group` query heads of the KV head,
// which form the 16 rows of one mma tile (rows >= group are zero). Warp w takes keys
// 16w..16w+15 of each tile with its own online-softmax state; the four states merge in
// shared memory at the end. A sequence with a single split writes its bf16 output (and
// LSE) directly; otherwise the block writes a normalised fp32 partial and its LSE.
// Kernel 2 (decode_merge, only when some sequence has >1 split): one block per
// (sequence, query head) combines the partials: lse = log sum exp(lse_s),
// out = sum exp(lse_s - lse) o_s.
//
// Supported: head_dim 64 or 128, group = num_q_heads / num_kv_heads <= 16.
// REQUIRES: kv_lens[b] >= 1 for a meaningful output (0 gives zeros and lse = -inf).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/common/cuda_util.cuh"
#include "kernels/common/layout.h"
#include "kernels/decode/decode_args.h"
#include "kernels/decode/decode_plan.h"

namespace servesim::kernels {

// Holds a plan on the device plus the split partial buffers. Build once per batch shape
// (not timed), run many times.
class DecodeRunner {
 public:
  // REQUIRES: heads.valid(), head_dim in {64, 128}, heads.group() <= 16.
  DecodeRunner(const DecodePlan& plan, AttentionHeads heads);
  // Enqueues decode (+ merge when needed) on `stream`; never synchronises.
  void run(const DecodeArgs& args, cudaStream_t stream) const;
  const DecodePlan& plan() const { return plan_; }

 private:
  DecodePlan plan_;
  AttentionHeads heads_;
  bool merge_ = false;
  DeviceBuffer<int32_t> work_seq_, work_split_, seq_work_indptr_;
  DeviceBuffer<float> partial_o_, partial_lse_;
};

// Whether this build can run the shape (head_dim and group supported).
bool decode_supports(const AttentionHeads& heads);

}  // namespace servesim::kernels
