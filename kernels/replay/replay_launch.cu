// Launchers of the replay's small kernels; contract in replay_launch.cuh.
#include "kernels/replay/replay_launch.cuh"

#include "kernels/common/cuda_util.cuh"
#include "kernels/replay/replay_kernels.cuh"

namespace servesim::kernels::replay_detail {

void launch_embedding(const int32_t* tokens, const __nv_bfloat16* table, __nv_bfloat16* out, int rows, int h,
                             cudaStream_t st) {
  SERVESIM_LAUNCH(embedding_kernel, rows, kReplayThreads, 0, st, tokens, table, out, h);
}
void launch_add_rmsnorm(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* w,
                               __nv_bfloat16* out, int rows, int h, float eps, int accumulate, cudaStream_t st) {
  SERVESIM_LAUNCH(add_rmsnorm_kernel, rows, kWideThreads, 0, st, x, residual, w, out, h, eps, accumulate);
}
void launch_rope(__nv_bfloat16* qkv, const int32_t* positions, __nv_bfloat16* q_out, int rows, int hq, int hk,
                        int d, float theta, cudaStream_t st) {
  const int chunks = replay_row_chunks(static_cast<int64_t>(hq + hk) * (d / 2));
  SERVESIM_LAUNCH(rope_kernel, static_cast<unsigned>(rows * chunks), kReplayThreads, 0, st, qkv, positions, q_out, hq, hk,
                  d, theta, chunks);
}
void launch_kv_append(const __nv_bfloat16* qkv, const int64_t* slot_of, __nv_bfloat16* k_cache,
                             __nv_bfloat16* v_cache, int rows, int hq, int hk, int d, cudaStream_t st) {
  SERVESIM_LAUNCH(kv_append_kernel, rows, kReplayThreads, 0, st, qkv, slot_of, k_cache, v_cache, hq, hk, d);
}
void launch_silu_mul(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int rows, int inter, cudaStream_t st) {
  const int chunks = replay_row_chunks(inter);
  SERVESIM_LAUNCH(silu_mul_kernel, static_cast<unsigned>(rows * chunks), kReplayThreads, 0, st, gate_up, out, inter,
                  chunks);
}
void launch_gather_rows(const __nv_bfloat16* x, const int32_t* rows_of, __nv_bfloat16* out, int rows, int h,
                               cudaStream_t st) {
  SERVESIM_LAUNCH(gather_rows_kernel, rows, kReplayThreads, 0, st, x, rows_of, out, h);
}
void launch_argmax(const __nv_bfloat16* logits, int rows, int vocab, int32_t* sampled, cudaStream_t st) {
  SERVESIM_LAUNCH(argmax_kernel, rows, kWideThreads, 0, st, logits, vocab, sampled);
}

}  // namespace servesim::kernels::replay_detail
