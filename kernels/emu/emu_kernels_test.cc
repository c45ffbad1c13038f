// Runs the real device code of the dense attention kernels (decode_kernel.cuh,
// prefill_kernel.cuh) in the CPU warp emulator and compares with the CPU references.
// This is CI's check of the GPU code's logic (fragment layouts, masks, splits, merges,
// pipelining); speed and true concurrency are only checked on a GPU (servesim-kernels check).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "kernels/bench/check_report.h"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_host.h"
#include "kernels/decode/decode_kernel.cuh"
#include "kernels/decode/decode_ref.h"
#include "kernels/prefill/prefill_kernel.cuh"
#include "kernels/prefill/prefill_ref.h"

using namespace servesim::kernels;

namespace {

const __nv_bfloat16* as_bf16(const std::vector<uint16_t>& bits) {
  return reinterpret_cast<const __nv_bfloat16*>(bits.data());
}

std::vector<float> to_float(const std::vector<__nv_bfloat16>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = __bfloat162float(v[i]);
  return f;
}

template <int D>
void run_decode_case(const std::vector<int>& lens, AttentionHeads h, int split_tokens, bool expect_merge, uint64_t seed) {
  const HostPagedKv kv = make_random_paged_kv(lens, h.num_kv_heads, h.head_dim, seed);
  const std::vector<float> q = random_uniform(lens.size() * h.num_q_heads * D, seed + 1);
  const std::vector<uint16_t> q_bits = to_bf16_bits(q);
  const DecodePlan plan = plan_decode(kv.kv_lens, h.num_kv_heads, 132, split_tokens);

  std::vector<__nv_bfloat16> out(q.size(), __float2bfloat16(NAN));
  std::vector<float> lse(lens.size() * h.num_q_heads, NAN);
  std::vector<float> partial_o(size_t(plan.num_work()) * h.num_q_heads * D, NAN);
  std::vector<float> partial_lse(size_t(plan.num_work()) * h.num_q_heads, NAN);
  detail::DecodeParams p;
  p.a.q = as_bf16(q_bits);
  p.a.k_cache = as_bf16(kv.k_bits);
  p.a.v_cache = as_bf16(kv.v_bits);
  p.a.kv = kv.view();
  p.a.heads = h;
  p.a.out = out.data();
  p.a.lse = lse.data();
  p.work_seq = plan.work_seq.data();
  p.work_split = plan.work_split.data();
  p.seq_work_indptr = plan.seq_work_indptr.data();
  p.split_tokens = plan.split_tokens;
  p.scale_log2 = h.default_scale() * kLog2e;
  p.partial_o = partial_o.data();
  p.partial_lse = partial_lse.data();

  servesim_emu::launch({unsigned(plan.num_work()), unsigned(h.num_kv_heads), 1}, {detail::kDecodeThreads, 1, 1},
                       detail::decode_smem_bytes<D>(), [&] { detail::decode_splitkv_kernel<D>(p); });
  if (plan.needs_merge())
    servesim_emu::launch({unsigned(lens.size()), unsigned(h.num_q_heads), 1}, {D, 1, 1}, 0,
                         [&] { detail::decode_merge_kernel<D>(p); });

  std::vector<float> ref, ref_lse;
  decode_ref({&kv, &q, h.num_q_heads, h.default_scale()}, &ref, &ref_lse);
  const std::vector<float> got = to_float(out);
  CHECK_FALSE(has_non_finite(got));
  CHECK(relative_error(got, ref) < kBf16RelTol);
  CHECK(relative_error(lse, ref_lse) < 1e-4);
  CHECK(plan.needs_merge() == expect_merge);
}

// rows_per_tile 64 or 128 run prefill_kernel; 0 runs variant fa2_qreg (64-row tiles).
template <int D>
void run_prefill_case(const std::vector<int>& kv_lens, const std::vector<int>& q_lens, AttentionHeads h,
                      int rows_per_tile, uint64_t seed) {
  const bool qreg = rows_per_tile == 0;
  if (qreg) rows_per_tile = 64;
  const HostPagedKv kv = make_random_paged_kv(kv_lens, h.num_kv_heads, h.head_dim, seed);
  std::vector<int32_t> q_indptr(1, 0);
  for (int l : q_lens) q_indptr.push_back(q_indptr.back() + l);
  const std::vector<float> q = random_uniform(size_t(q_indptr.back()) * h.num_q_heads * D, seed + 1);
  const std::vector<uint16_t> q_bits = to_bf16_bits(q);
  const PrefillPlan plan = plan_prefill(q_indptr, kv.kv_lens, rows_per_tile);

  std::vector<__nv_bfloat16> out(q.size(), __float2bfloat16(NAN));
  std::vector<float> lse(size_t(q_indptr.back()) * h.num_q_heads, NAN);
  detail::PrefillParams p;
  p.a.q = as_bf16(q_bits);
  p.a.k_cache = as_bf16(kv.k_bits);
  p.a.v_cache = as_bf16(kv.v_bits);
  p.a.kv = kv.view();
  p.a.q_indptr = q_indptr.data();
  p.a.heads = h;
  p.a.out = out.data();
  p.a.lse = lse.data();
  p.tile_seq = plan.tile_seq.data();
  p.tile_q_begin = plan.tile_q_begin.data();
  p.scale_log2 = h.default_scale() * kLog2e;
  auto body = [&] {
    if (qreg)
      detail::prefill_kernel_qreg<D>(p);
    else if (rows_per_tile == 128)
      detail::prefill_kernel<D, 2>(p);
    else
      detail::prefill_kernel<D, 1>(p);
  };
  const size_t smem = qreg                  ? detail::prefill_qreg_smem_bytes<D>()
                      : rows_per_tile == 128 ? detail::prefill_smem_bytes<D, 2>()
                                             : detail::prefill_smem_bytes<D, 1>();
  servesim_emu::launch({unsigned(h.num_q_heads), unsigned(plan.num_tiles()), 1}, {detail::kPrefillThreads, 1, 1}, smem,
                       body);

  std::vector<float> ref, ref_lse;
  prefill_ref({&kv, &q_indptr, &q, h.num_q_heads, h.default_scale()}, &ref, &ref_lse);
  const std::vector<float> got = to_float(out);
  CHECK_FALSE(has_non_finite(got));
  CHECK(relative_error(got, ref) < kBf16RelTol);
  CHECK(relative_error(lse, ref_lse) < 1e-4);
}

}  // namespace

TEST_CASE("emulated split-KV decode kernel matches the reference across splits, merge and GQA groups") {
  run_decode_case<128>({1, 17, 100}, {8, 2, 128}, 64, true, 31);  // 4 work items, merge
  run_decode_case<64>({33, 64}, {4, 4, 64}, 1024, false, 32);      // one split each: direct output
  run_decode_case<64>({130}, {16, 1, 64}, 0, true, 33);           // group 16, planner splits
}

TEST_CASE("emulated causal prefill kernel matches the reference for prompts, chunks and varlen batches") {
  run_prefill_case<64>({80}, {80}, {2, 1, 64}, 64, 41);                 // full prompt, 2 tiles
  run_prefill_case<64>({150, 1, 70}, {40, 1, 70}, {2, 2, 64}, 64, 42);  // chunk over a prefix + varlen
  run_prefill_case<128>({100}, {30}, {2, 1, 128}, 64, 43);              // d128, 70-token prefix
}

TEST_CASE("emulated prefill variant fa2_qreg (Q in registers, K/V groups, 3 stages) matches the reference") {
  run_prefill_case<64>({80}, {80}, {2, 1, 64}, 0, 46);                   // 2 tiles: the prefetch runs past the end
  run_prefill_case<128>({300, 1, 70}, {200, 1, 70}, {2, 1, 128}, 0, 47);  // 5 key tiles: every stage reused
}

TEST_CASE("emulated prefill kernel with 128-row tiles (two m-tiles per warp) matches the reference") {
  run_prefill_case<64>({150}, {150}, {1, 1, 64}, 128, 44);
  run_prefill_case<128>({200, 9}, {130, 9}, {2, 1, 128}, 128, 45);
}
