// Launcher of prefill variant hopper_wgmma: tensor maps (cuTensorMapEncodeTiled, taken
// from the driver through the runtime so the binary does not link libcuda), the tile
// list, one launch. Compiled for sm_90a only (kernels/CMakeLists.txt).
#include <cuda.h>

#include <stdexcept>
#include <string>

#include "kernels/prefill/prefill_hopper.cuh"
#include "kernels/prefill/prefill_hopper_kernel.cuh"

namespace servesim::kernels {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encoder(std::string* why) {
  static EncodeTiled fn = nullptr;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr)
      error = std::string("cuTensorMapEncodeTiled not available from the driver (") + cudaGetErrorName(e) + ")";
    else
      fn = reinterpret_cast<EncodeTiled>(p);
  }
  if (!fn && why) *why = error;
  return fn;
}

// A bf16 tensor of `rank` dims (innermost first, sizes in elements, strides of dims 1.. in
// bytes) with a box of `box` elements, 128-byte swizzle, zero fill out of bounds.
CUtensorMap encode(const void* base, int rank, const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box) {
  const EncodeTiled fn = encoder(nullptr);
  if (!fn) throw std::runtime_error("prefill hopper_wgmma: cuTensorMapEncodeTiled unavailable");
  CUtensorMap map{};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, cuuint32_t(rank), const_cast<void*>(base), dims, strides,
                        box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::invalid_argument("prefill hopper_wgmma: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) +
                                ")");
  return map;
}

}  // namespace

struct PrefillHopperRunner::Maps {
  CUtensorMap q, k, v;
};

bool prefill_hopper_available(std::string* why) {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    if (why) *why = "no CUDA device";
    return false;
  }
  if (prop.major != 9 || prop.minor != 0) {
    if (why) *why = "needs compute capability 9.0 (sm_90a code), device is " + std::to_string(prop.major) + "." +
                    std::to_string(prop.minor);
    return false;
  }
  return encoder(why) != nullptr;
}

PrefillHopperRunner::PrefillHopperRunner(const PrefillPlan& plan, const PrefillArgs& args, int64_t q_rows,
                                         int64_t cache_pages)
    : plan_(plan), args_(args), maps_(std::make_unique<Maps>()) {
  const AttentionHeads& h = args.heads;
  if (!h.valid() || h.head_dim != kHopperHeadDim)
    throw std::invalid_argument("prefill hopper_wgmma: needs head_dim 128, got " + std::to_string(h.head_dim));
  if (plan.rows_per_tile != kHopperRows) throw std::invalid_argument("prefill hopper_wgmma: needs rows_per_tile 128");
  if (plan.num_tiles() > 65535) throw std::invalid_argument("prefill hopper_wgmma: more than 65535 query tiles");
  if (q_rows <= 0 || cache_pages <= 0) throw std::invalid_argument("prefill hopper_wgmma: empty Q or cache");
  const cuuint64_t d = kHopperHeadDim, row_bytes = d * 2;
  {
    const cuuint64_t dims[3] = {d, cuuint64_t(h.num_q_heads), cuuint64_t(q_rows)};
    const cuuint64_t strides[2] = {row_bytes, row_bytes * h.num_q_heads};
    const cuuint32_t box[3] = {kHopperBoxCols, 1, kHopperRows};
    maps_->q = encode(args.q, 3, dims, strides, box);
  }
  const cuuint64_t dims[4] = {d, cuuint64_t(kPageSize), cuuint64_t(h.num_kv_heads), cuuint64_t(cache_pages)};
  const cuuint64_t strides[3] = {row_bytes, row_bytes * kPageSize, row_bytes * kPageSize * h.num_kv_heads};
  const cuuint32_t box[4] = {kHopperBoxCols, kPageSize, 1, 1};
  maps_->k = encode(args.k_cache, 4, dims, strides, box);
  maps_->v = encode(args.v_cache, 4, dims, strides, box);
  tile_seq_.upload(plan.tile_seq);
  tile_q_begin_.upload(plan.tile_q_begin);
}

PrefillHopperRunner::~PrefillHopperRunner() = default;

void PrefillHopperRunner::run(cudaStream_t stream) const {
  if (plan_.num_tiles() == 0) return;
  static const bool attr_set = [] {
    SERVESIM_CUDA_CHECK(cudaFuncSetAttribute(detail::prefill_hopper_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             kHopperSmemBytes));
    return true;
  }();
  (void)attr_set;
  detail::PrefillHopperParams p;
  p.a = args_;
  p.tile_seq = tile_seq_.get();
  p.tile_q_begin = tile_q_begin_.get();
  p.scale_log2 = (args_.scale > 0 ? args_.scale : args_.heads.default_scale()) * kLog2e;
  detail::prefill_hopper_kernel<<<dim3(args_.heads.num_q_heads, plan_.num_tiles()), kHopperThreads, kHopperSmemBytes,
                                  stream>>>(maps_->q, maps_->k, maps_->v, p);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels
