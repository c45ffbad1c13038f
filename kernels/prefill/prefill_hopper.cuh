// Prefill variant hopper_wgmma: dense causal prefill on Hopper's own path -
// TMA tensor copies on an mbarrier pipeline, a producer warpgroup and two consumer
// warpgroups, wgmma m64n128k16 (prefill_hopper_kernel.cuh; plan: prefill_hopper_plan.h).
// Same inputs and outputs as PrefillRunner (prefill.cuh): full prompts, chunks over a
// cached prefix, varlen batches, paged KV (layout.h), GQA; bf16, head_dim 128 only.
//
// Built only for sm_90a (kernels/CMakeLists.txt, target servesim_kernels_hopper) and runs
// only on a compute-capability 9.0 GPU (H100 / H200): prefill_hopper_available() says
// whether this process can run it, and why not. Measured on an H100 (2026-11-25): 366 TFLOP/s
// causal at 8K, 382 at 16K, head_dim 128, 32/8 heads (docs/kernels.md, "Measured on an H100").
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/common/cuda_util.cuh"
#include "kernels/prefill/prefill_args.h"
#include "kernels/prefill/prefill_plan.h"

namespace servesim::kernels {

// True when the current device is compute capability 9.0 and the driver gives out
// cuTensorMapEncodeTiled; otherwise false with the reason in *why.
bool prefill_hopper_available(std::string* why);

class PrefillHopperRunner {
 public:
  // Encodes the tensor maps of args' Q (q_rows rows) and K/V caches (cache_pages pages)
  // and uploads the tile list. REQUIRES: heads.valid(), heads.head_dim == 128,
  // plan.rows_per_tile == 128 (kHopperRows), plan.num_tiles() <= 65535, q / caches
  // 16-byte aligned, prefill_hopper_available(). Throws std::invalid_argument otherwise.
  PrefillHopperRunner(const PrefillPlan& plan, const PrefillArgs& args, int64_t q_rows, int64_t cache_pages);
  ~PrefillHopperRunner();
  PrefillHopperRunner(const PrefillHopperRunner&) = delete;
  PrefillHopperRunner& operator=(const PrefillHopperRunner&) = delete;
  // Enqueues one launch on `stream` over the arguments given at construction.
  void run(cudaStream_t stream) const;

 private:
  struct Maps;
  PrefillPlan plan_;
  PrefillArgs args_;
  std::unique_ptr<Maps> maps_;
  DeviceBuffer<int32_t> tile_seq_, tile_q_begin_;
};

}  // namespace servesim::kernels
