// Dense causal prefill on the GPU over a paged KV cache: full prompts, chunks attending
// to a cached prefix plus themselves, and varlen batches of both, in one launch.
// Layouts: kernels/common/layout.h (the chunk's K/V are already appended to the cache,
// so kv_lens[b] = prefix + q_len). Work decomposition: prefill_plan.h.
//
// FlashAttention-2 style (seed 004): one block of 4 warps per (query tile, query head);
// each warp owns 16 (rows_per_tile 64) or 32 (rows_per_tile 128) query rows; K/V tiles of
// 64 keys stream through a two-stage cp.async pipeline; S = QK^T and O += PV run on
// tensor cores (mma.sync m16n8k16 bf16, fp32 accumulate) with the online softmax in
// registers (common/attention_warp.cuh). Only tiles on the causal diagonal are masked;
// warps skip key tiles entirely above their rows. Blocks run longest-first.
//
// Supported: head_dim 64 or 128, any GQA group.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/common/cuda_util.cuh"
#include "kernels/common/layout.h"
#include "kernels/prefill/prefill_args.h"
#include "kernels/prefill/prefill_plan.h"

namespace servesim::kernels {

class PrefillRunner {
 public:
  // REQUIRES: heads.valid(), head_dim in {64, 128}, plan.rows_per_tile in {64, 128},
  // plan.num_tiles() <= 65535.
  PrefillRunner(const PrefillPlan& plan, AttentionHeads heads);
  // Enqueues one launch on `stream`; never synchronises.
  void run(const PrefillArgs& args, cudaStream_t stream) const;
  // Variant fa2_qreg (prefill_kernel.cuh: Q in registers, K/V in separate cp.async groups,
  // 3 stages). REQUIRES plan.rows_per_tile == 64. Slower than run() on an H100 (143 against
  // 230 TFLOP/s causal at 8K; docs/kernels.md).
  void run_qreg(const PrefillArgs& args, cudaStream_t stream) const;
  const PrefillPlan& plan() const { return plan_; }

 private:
  PrefillPlan plan_;
  AttentionHeads heads_;
  DeviceBuffer<int32_t> tile_seq_, tile_q_begin_;
};

bool prefill_supports(const AttentionHeads& heads);

}  // namespace servesim::kernels
