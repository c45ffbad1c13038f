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

// Launches one kernel instantiation over (query heads, query tiles) with `Smem` bytes of
// dynamic shared memory (the attribute is set once per instantiation).
template <auto Kernel, size_t Smem>
void launch(const PrefillParams& p, int num_tiles, cudaStream_t stream) {
  static const bool attr_set = [] {
    SERVESIM_CUDA_CHECK(
        cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Smem)));
    return true;
  }();
  (void)attr_set;
  Kernel<<<dim3(p.a.heads.num_q_heads, num_tiles), kPrefillThreads, Smem, stream>>>(p);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

template <int D>
void launch_prefill_qreg(const PrefillParams& p, int num_tiles, cudaStream_t stream) {
  launch<prefill_kernel_qreg<D>, prefill_qreg_smem_bytes<D>()>(p, num_tiles, stream);
}

template <int D, int MT>
void launch_prefill(const PrefillParams& p, int num_tiles, cudaStream_t stream) {
  launch<prefill_kernel<D, MT>, prefill_smem_bytes<D, MT>()>(p, num_tiles, stream);
}

// The kernels' parameters for one call: the arguments, the heads and scale, the plan's tiles.
PrefillParams prefill_params(const PrefillArgs& args, const AttentionHeads& heads, const int32_t* tile_seq,
                             const int32_t* tile_q_begin) {
  PrefillParams p;
  p.a = args;
  p.a.heads = heads;
  p.scale_log2 = (args.scale > 0 ? args.scale : heads.default_scale()) * kLog2e;
  p.tile_seq = tile_seq;
  p.tile_q_begin = tile_q_begin;
  return p;
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
  const PrefillParams p = prefill_params(args, heads_, tile_seq_.get(), tile_q_begin_.get());
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
  const PrefillParams p = prefill_params(args, heads_, tile_seq_.get(), tile_q_begin_.get());
  heads_.head_dim == 128 ? launch_prefill_qreg<128>(p, plan_.num_tiles(), stream)
                         : launch_prefill_qreg<64>(p, plan_.num_tiles(), stream);
}

}  // namespace servesim::kernels
