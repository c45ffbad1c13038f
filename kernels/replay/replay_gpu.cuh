// GpuReplay: one recorded iteration (batch_record.h) executed as a real forward pass of
// a model's layer stack on the GPU, launch for launch as replay_plan.h lists them:
// embedding gather; per layer fused add + RMSNorm, QKV GEMM (cuBLASLt), RoPE, KV append
// into the paged cache, our prefill kernel over every prefill chunk and our paged decode
// kernel over every decode (one iteration, as the engine batches them), O GEMM, fused add
// + RMSNorm, gate/up GEMM, SiLU·mul, down GEMM; final add + RMSNorm, gather of the rows
// that produce output, LM head GEMM, greedy argmax.
//
// Weights: random bf16 on the device, or (the tiny model's check) the host weights of
// make_replay_weights(), so that logits compare with ReplayReference. Each recorded
// sequence is fresh: a prefill chunk's context and a decode's context are tokens already
// in the paged KV cache, whose contents are random (exact_context: context_kv() values,
// small models only). KV pools: one per layer, sized by kv_gb; an iteration that needs
// more pages than a pool has reuses pages modulo the pool (traffic unchanged, contents
// shared; said on stdout). TP: one GPU's shard is run; the all-reduces are not.
//
// prepare() does every host-side step (page tables, attention plans, inputs) and is not
// timed; run() only enqueues kernels on the stream and never synchronises.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/common/cuda_util.cuh"
#include "kernels/decode/decode.cuh"
#include "kernels/gemm/gemm_cublaslt.cuh"
#include "kernels/prefill/prefill.cuh"
#include "kernels/prefill/prefill_hopper.cuh"
#include "kernels/replay/replay_plan.h"
#include "kernels/replay/tiny_model.h"

namespace servesim::kernels {

struct GpuReplayOptions {
  int tp = 1;
  double kv_gb = 40;    // memory of all layers' KV pools together
  uint64_t seed = 1;    // tokens, random weights and random KV contents
  // Prefill attention kernel: "auto" (hopper_wgmma where prefill_hopper_available() and
  // head_dim is 128, as the calibrated cost model prices the fastest measured variant;
  // else fa2), "fa2" or "hopper_wgmma" (an error where it cannot run).
  std::string prefill_variant = "auto";
};

class GpuReplay {
 public:
  // host_weights: null for random weights; else the model's full weights (tp must be 1).
  GpuReplay(const ReplayModel& model, GpuReplayOptions options, const ReplayWeights* host_weights);
  // Host-side setup of one iteration (not timed). exact_context: the context KV holds
  // context_kv() (needs every page distinct; throws when the pools are too small).
  void prepare(const RecordedIteration& it, bool exact_context);
  void run(cudaStream_t stream);                  // the forward pass of the prepared iteration
  std::vector<float> logits() const;              // [rows][vocab / tp] of the last run (synchronises)
  std::vector<int32_t> sampled() const;           // [rows]
  int64_t rows() const { return rows_; }
  bool pages_reused() const { return pages_reused_; }
  int launches() const { return launches_; }      // kernels the last run() enqueued (GEMMs count 1)
  const char* prefill_variant() const { return use_hopper_ ? "hopper_wgmma" : "fa2"; }

 private:
  struct Layer {
    DeviceBuffer<__nv_bfloat16> attn_norm, qkv, o, mlp_norm, gate_up, down, k_cache, v_cache;
  };
  template <typename T>
  static void ensure(DeviceBuffer<T>& b, size_t n) {
    if (b.size() < n) b.resize(n);
  }
  ReplayModel m_;
  GpuReplayOptions opt_;
  int64_t hq_ = 0, hk_ = 0, inter_ = 0, vocab_ = 0, qkv_n_ = 0;  // one GPU's shard
  int64_t pool_pages_ = 0;
  int sms_ = 0;
  LtGemm gemm_;
  DeviceBuffer<__nv_bfloat16> embedding_, final_norm_, lm_head_;
  std::vector<Layer> layers_;
  // Per iteration.
  int64_t tokens_ = 0, prefill_rows_ = 0, rows_ = 0;
  bool pages_reused_ = false;
  int launches_ = 0;
  DeviceBuffer<int32_t> tok_, pos_, logit_rows_, sampled_;
  DeviceBuffer<int64_t> slot_;
  DeviceBuffer<int32_t> p_indptr_, p_pages_, p_lens_, p_q_indptr_, d_indptr_, d_pages_, d_lens_;
  DeviceBuffer<__nv_bfloat16> x_, residual_, qkv_, q_, attn_, gu_, act_, out_rows_, logits_;
  // The prefill arguments of layer L over this iteration's buffers (both prefill variants).
  PrefillArgs prefill_args(const Layer& L, const AttentionHeads& heads) const;
  std::unique_ptr<PrefillRunner> prefill_;
  std::vector<std::unique_ptr<PrefillHopperRunner>> hopper_;  // one per layer when use_hopper_
  bool use_hopper_ = false;
  std::unique_ptr<DecodeRunner> decode_;
  PagedKvView p_view_{}, d_view_{};
};

}  // namespace servesim::kernels
