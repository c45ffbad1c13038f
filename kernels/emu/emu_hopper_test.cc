// Prefill variant hopper_wgmma (prefill_hopper_kernel.cuh) run in the CPU warp emulator
// with its Hopper primitives (hopper_emu.h): the producer / consumer warpgroups, the
// mbarrier pipeline, TMA page boxes with the 128-byte swizzle, wgmma on shared-memory
// descriptors and register fragments, the V zeroing past kv_end - compared with
// prefill_ref on paged caches whose unused slots and spare pages are NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_host.h"
#include "kernels/prefill/prefill_hopper_kernel.cuh"
#include "kernels/prefill/prefill_plan.h"
#include "kernels/prefill/prefill_ref.h"

using namespace servesim::kernels;

namespace {

servesim_emu::EmuTensorMap map_of(const void* base, int rank, std::vector<uint64_t> dims, std::vector<uint64_t> strides,
                                  std::vector<uint32_t> box) {
  servesim_emu::EmuTensorMap m;
  m.base = base;
  m.rank = rank;
  for (int i = 0; i < rank; ++i) {
    m.dims[i] = dims[i];
    m.box[i] = box[i];
    m.strides[i] = i == 0 ? 2 : strides[i - 1];
  }
  m.swizzle128 = true;
  return m;
}

void run_hopper_case(const std::vector<int>& kv_lens, const std::vector<int>& q_lens, AttentionHeads h, uint64_t seed) {
  REQUIRE(h.head_dim == kHopperHeadDim);
  const HostPagedKv kv = make_random_paged_kv(kv_lens, h.num_kv_heads, h.head_dim, seed);
  std::vector<int32_t> q_indptr(1, 0);
  for (int l : q_lens) q_indptr.push_back(q_indptr.back() + l);
  const int64_t rows = q_indptr.back();
  const std::vector<float> q = random_uniform(size_t(rows) * h.num_q_heads * h.head_dim, seed + 1);
  const std::vector<uint16_t> q_bits = to_bf16_bits(q);
  const PrefillPlan plan = plan_prefill(q_indptr, kv.kv_lens, kHopperRows);

  std::vector<__nv_bfloat16> out(q.size(), __float2bfloat16(NAN));
  std::vector<float> lse(size_t(rows) * h.num_q_heads, NAN);
  detail::PrefillHopperParams p;
  p.a.q = reinterpret_cast<const __nv_bfloat16*>(q_bits.data());
  p.a.k_cache = reinterpret_cast<const __nv_bfloat16*>(kv.k_bits.data());
  p.a.v_cache = reinterpret_cast<const __nv_bfloat16*>(kv.v_bits.data());
  p.a.kv = kv.view();
  p.a.q_indptr = q_indptr.data();
  p.a.heads = h;
  p.a.out = out.data();
  p.a.lse = lse.data();
  p.tile_seq = plan.tile_seq.data();
  p.tile_q_begin = plan.tile_q_begin.data();
  p.scale_log2 = h.default_scale() * kLog2e;
  const uint64_t row_bytes = 2 * kHopperHeadDim;
  const auto map_q = map_of(q_bits.data(), 3, {kHopperHeadDim, uint64_t(h.num_q_heads), uint64_t(rows)},
                            {row_bytes, row_bytes * h.num_q_heads}, {kHopperBoxCols, 1, kHopperRows});
  const std::vector<uint64_t> cache_dims = {kHopperHeadDim, kPageSize, uint64_t(h.num_kv_heads), uint64_t(kv.num_pages)};
  const std::vector<uint64_t> cache_strides = {row_bytes, row_bytes * kPageSize, row_bytes * kPageSize * h.num_kv_heads};
  const auto map_k = map_of(kv.k_bits.data(), 4, cache_dims, cache_strides, {kHopperBoxCols, kPageSize, 1, 1});
  const auto map_v = map_of(kv.v_bits.data(), 4, cache_dims, cache_strides, {kHopperBoxCols, kPageSize, 1, 1});
  servesim_emu::launch({unsigned(h.num_q_heads), unsigned(plan.num_tiles()), 1}, {kHopperThreads, 1, 1}, kHopperSmemBytes,
                       [&] { detail::prefill_hopper_kernel(map_q, map_k, map_v, p); });

  std::vector<float> ref, ref_lse;
  prefill_ref({&kv, &q_indptr, &q, h.num_q_heads, h.default_scale()}, &ref, &ref_lse);
  std::vector<float> got(out.size());
  for (size_t i = 0; i < out.size(); ++i) got[i] = __bfloat162float(out[i]);
  CHECK_FALSE(has_non_finite(got));
  CHECK(relative_error(got, ref) < kBf16RelTol);
  CHECK(relative_error(lse, ref_lse) < 1e-4);
}

}  // namespace

TEST_CASE("emulated prefill variant hopper_wgmma (TMA, mbarriers, warp-specialised wgmma) matches the reference") {
  run_hopper_case({300}, {300}, {2, 1, 128}, 71);  // 3 key tiles: a stage reused, partial last page zeroed
  run_hopper_case({200, 1, 77}, {77, 1, 77}, {2, 2, 128}, 72);  // chunk over 123, one token, prompt; MHA
  run_hopper_case({660}, {260}, {1, 1, 128}, 73);  // prefix 400: 3 query tiles, diagonal across key tiles, 6 key tiles
}
