#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/decode/decode.cuh"
#include "kernels/decode/decode_kernel.cuh"

namespace servesim::kernels {

namespace {

using detail::DecodeParams;
using detail::decode_merge_kernel;
using detail::decode_smem_bytes;
using detail::decode_splitkv_kernel;
using detail::kDecodeThreads;

template <int D>
void launch_decode(const DecodeParams& p, int num_work, int batch, bool merge, cudaStream_t stream) {
  constexpr size_t smem = decode_smem_bytes<D>();
  static const bool attr_set = [] {
    SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(decode_splitkv_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
    return true;
  }();
  (void)attr_set;
  decode_splitkv_kernel<D><<<dim3(num_work, p.a.heads.num_kv_heads), kDecodeThreads, smem, stream>>>(p);
  SERVESIM_CUDA_CHECK_LAUNCH();
  if (merge) {
    decode_merge_kernel<D><<<dim3(batch, p.a.heads.num_q_heads), D, 0, stream>>>(p);
    SERVESIM_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

bool decode_supports(const AttentionHeads& heads) {
  return heads.valid() && (heads.head_dim == 64 || heads.head_dim == 128) && heads.group() <= 16;
}

DecodeRunner::DecodeRunner(const DecodePlan& plan, AttentionHeads heads)
    : plan_(plan), heads_(heads), merge_(plan.needs_merge()) {
  if (!decode_supports(heads))
    throw std::invalid_argument("decode: unsupported heads " + std::to_string(heads.num_q_heads) + "/" +
                                std::to_string(heads.num_kv_heads) + " head_dim " + std::to_string(heads.head_dim));
  work_seq_.upload(plan.work_seq);
  work_split_.upload(plan.work_split);
  seq_work_indptr_.upload(plan.seq_work_indptr);
  if (merge_) {
    partial_o_.resize(size_t(plan.num_work()) * heads.num_q_heads * heads.head_dim);
    partial_lse_.resize(size_t(plan.num_work()) * heads.num_q_heads);
  }
}

void DecodeRunner::run(const DecodeArgs& args, cudaStream_t stream) const {
  if (args.kv.batch + 1 != static_cast<int>(plan_.seq_work_indptr.size()))
    throw std::invalid_argument("decode: batch does not match the plan");
  DecodeParams p;
  p.a = args;
  p.a.heads = heads_;
  const float scale = args.scale > 0 ? args.scale : heads_.default_scale();
  p.scale_log2 = scale * kLog2e;
  p.work_seq = work_seq_.get();
  p.work_split = work_split_.get();
  p.seq_work_indptr = seq_work_indptr_.get();
  p.split_tokens = plan_.split_tokens;
  p.partial_o = partial_o_.get();
  p.partial_lse = partial_lse_.get();
  if (plan_.num_work() == 0) return;
  if (heads_.head_dim == 128)
    launch_decode<128>(p, plan_.num_work(), args.kv.batch, merge_, stream);
  else
    launch_decode<64>(p, plan_.num_work(), args.kv.batch, merge_, stream);
}

}  // namespace servesim::kernels
