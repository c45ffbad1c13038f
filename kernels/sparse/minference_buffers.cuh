// Owning device storage for the MInference kernels (MInfBuffers views into it), the
// conversion of a GPU-built index back into the CPU reference's MInfHeadIndex, and the
// synthetic "structured" prompt generator the bench uses.
//
// Structured prompts: random bf16 queries and keys share a per-KV-head direction and are
// rotated by RoPE (theta_i = 10000^(-2i/128)) at their positions, so q_r . k_c peaks at
// r = c and decays with |r - c| (local / slash structure), and the first 4 keys get a
// large common component (attention sinks, a vertical line) - the shapes MInference
// exploits. Uniform random prompts instead give a nearly flat softmax, whose top-k lines
// are scattered: the worst case for the vertical-slash area. Neither is a real model's
// activations; the bench records which data and the resulting area with every row.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

#include "kernels/common/cuda_util.cuh"
#include "kernels/sparse/minference_kernels.cuh"
#include "kernels/sparse/minference_ref.h"

namespace servesim::kernels::sparse {

class MInfDeviceIndex {
 public:
  // Allocates every buffer the plan needs for a prompt with these heads.
  MInfDeviceIndex(const MInfPlan& plan, int num_q_heads, int num_kv_heads);
  MInfBuffers view() const { return view_; }
  const MInfPlan& plan() const { return plan_; }

  // The GPU index of every head as the CPU reference's structure (downloads; syncs).
  std::vector<MInfHeadIndex> download_index() const;
  // Key tiles of 64 the attention visits for head h (A-shape computed from its params).
  int64_t visited_tiles(const std::vector<MInfHeadIndex>& index, int head) const;

  DeviceBuffer<float> vertical, slash, bs_logits;
  DeviceBuffer<int32_t> lines_v, lines_s;
  DeviceBuffer<int2> ranges;
  DeviceBuffer<int32_t> range_count, col_count, cols;

 private:
  MInfPlan plan_;
  MInfBuffers view_;
  DeviceBuffer<MInfHeadDesc> heads_;
  DeviceBuffer<int32_t> vs_heads_, bs_heads_, bs_blocks_;
  DeviceBuffer<float> vs_ml_, vs_lse_, q_pool_, k_pool_;
};

// Writes a structured prompt: q [n][num_q_heads][128] and the K / V rows of tokens 0..n-1
// of one paged sequence (page_table on the device). Deterministic in seed.
void fill_structured_prompt(__nv_bfloat16* q, __nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                            const int32_t* page_table, int n, int num_q_heads, int num_kv_heads, uint64_t seed,
                            cudaStream_t stream);

}  // namespace servesim::kernels::sparse
