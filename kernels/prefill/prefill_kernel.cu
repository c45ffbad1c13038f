#include <stdexcept>
#include <string>

#include "kernels/prefill/prefill.cuh"
#include "kernels/prefill/prefill_kernel.cuh"

namespace servesim::kernels {

namespace {

using detail::PrefillParams;
using detail::prefill_kernel;
using detail::prefill_smem_bytes;
using detail::kPrefillThreads;
using detail::prefill_kernel_qreg;
using detail::prefill_qreg_smem_bytes;

template <int D>
void launch_prefill_qreg(const PrefillParams& p, int num_tiles, cudaStream_t stream) {
  constexpr size_t smem = prefill_qreg_smem_bytes<D>();
  static const bool attr_set = [] {
    SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel_qreg<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
    return true;
  }();
  (void)attr_set;
  prefill_kernel_qreg<D><<<dim3(p.a.heads.num_q_heads, num_tiles), kPrefillThreads, smem, stream>>>(p);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

template <int D, int MT>
void launch_prefill(const PrefillParams& p, int num_tiles, cudaStream_t stream) {
  constexpr size_t smem = prefill_smem_bytes<D, MT>();
  static const bool attr_set = [] {
    SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel<D, MT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
    return true;
  }();
  (void)attr_set;
  prefill_kernel<D, MT><<<dim3(p.a.heads.num_q_heads, num_tiles), kPrefillThreads, smem, stream>>>(p);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool prefill_supports(const AttentionHeads& heads) {
  return heads.valid() && (heads.head_dim == 64 || heads.head_dim == 128);
}

PrefillRunner::PrefillRunner(const PrefillPlan& plan, AttentionHeads heads) : plan_(plan), heads_(heads) {
  if (!prefill_supports(heads))
    throw std::invalid_argument("prefill: unsupported head_dim " + std::to_string(heads.head_dim));
  if (plan.rows_per_tile != 64 && plan.rows_per_tile != 128)
    throw std::invalid_argument("prefill: rows_per_tile must be 64 or 128");
  if (plan.num_tiles() > 65535) throw std::invalid_argument("prefill: more than 65535 query tiles in one launch");
  tile_seq_.upload(plan.tile_seq);
  tile_q_begin_.upload(plan.tile_q_begin);
}

void PrefillRunner::run(const PrefillArgs& args, cudaStream_t stream) const {
  if (plan_.num_tiles() == 0) return;
  PrefillParams p;
  p.a = args;
  p.a.heads = heads_;
  p.scale_log2 = (args.scale > 0 ? args.scale : heads_.default_scale()) * kLog2e;
  p.tile_seq = tile_seq_.get();
  p.tile_q_begin = tile_q_begin_.get();
  const bool wide = plan_.rows_per_tile == 128;
  if (heads_.head_dim == 128) {
    wide ? launch_prefill<128, 2>(p, plan_.num_tiles(), stream) : launch_prefill<128, 1>(p, plan_.num_tiles(), stream);
  } else {
    wide ? launch_prefill<64, 2>(p, plan_.num_tiles(), stream) : launch_prefill<64, 1>(p, plan_.num_tiles(), stream);
  }
}

void PrefillRunner::run_qreg(const PrefillArgs& args, cudaStream_t stream) const {
  if (plan_.rows_per_tile != 64) throw std::invalid_argument("prefill fa2_qreg: needs rows_per_tile 64");
  if (plan_.num_tiles() == 0) return;
  PrefillParams p;
  p.a = args;
  p.a.heads = heads_;
  p.scale_log2 = (args.scale > 0 ? args.scale : heads_.default_scale()) * kLog2e;
  p.tile_seq = tile_seq_.get();
  p.tile_q_begin = tile_q_begin_.get();
  heads_.head_dim == 128 ? launch_prefill_qreg<128>(p, plan_.num_tiles(), stream)
                         : launch_prefill_qreg<64>(p, plan_.num_tiles(), stream);
}

}  // namespace servesim::kernels
