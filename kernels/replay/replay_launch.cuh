// Launchers of the replay's small kernels (replay_kernels.cuh) with their launch shapes,
// shared by the GPU replay (replay_gpu.cu) and the bench family `elementwise`
// (elementwise_family.cu), so the kernels the cost model is calibrated on are launched
// exactly as the replay launches them. Each enqueues one launch on `st`; none synchronises.
// Defined in replay_launch.cu, the one translation unit that holds the kernels (a __global__
// function defined in a header included by two .cu files would be defined twice).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace servesim::kernels::replay_detail {

void launch_embedding(const int32_t* tokens, const __nv_bfloat16* table, __nv_bfloat16* out, int rows, int h,
                             cudaStream_t st);
void launch_add_rmsnorm(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* w,
                               __nv_bfloat16* out, int rows, int h, float eps, int accumulate, cudaStream_t st);
void launch_rope(__nv_bfloat16* qkv, const int32_t* positions, __nv_bfloat16* q_out, int rows, int hq, int hk,
                        int d, float theta, cudaStream_t st);
void launch_kv_append(const __nv_bfloat16* qkv, const int64_t* slot_of, __nv_bfloat16* k_cache,
                             __nv_bfloat16* v_cache, int rows, int hq, int hk, int d, cudaStream_t st);
void launch_silu_mul(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int rows, int inter, cudaStream_t st);
void launch_gather_rows(const __nv_bfloat16* x, const int32_t* rows_of, __nv_bfloat16* out, int rows, int h,
                               cudaStream_t st);
void launch_argmax(const __nv_bfloat16* logits, int rows, int vocab, int32_t* sampled, cudaStream_t st);

}  // namespace servesim::kernels::replay_detail
