#include "kernels/prefill/prefill_ref.h"

#include <doctest/doctest.h>

#include <cmath>

#include "kernels/common/host_util.h"
#include "kernels/prefill/prefill_plan.h"

using namespace servesim::kernels;

namespace {

struct PrefillCase {
  HostPagedKv kv;
  std::vector<int32_t> q_indptr;
  std::vector<float> q;
  int hq;
  PrefillRefInput input() const { return {&kv, &q_indptr, &q, hq, 1.0f / std::sqrt(float(kv.head_dim))}; }
};

// kv_lens[b] tokens in the cache, the last q_lens[b] of them being the new chunk.
PrefillCase make_prefill_case(const std::vector<int>& kv_lens, const std::vector<int>& q_lens, int hq, int hkv, int d,
                      uint64_t seed, bool shuffle = true) {
  PagedKvOptions opt;
  opt.shuffle_pages = shuffle;
  PrefillCase c{make_random_paged_kv(kv_lens, hkv, d, seed, opt), {0}, {}, hq};
  for (int len : q_lens) c.q_indptr.push_back(c.q_indptr.back() + len);
  c.q = random_uniform(size_t(c.q_indptr.back()) * hq * d, seed + 77);
  return c;
}

}  // namespace

TEST_CASE("chunked prefill over a cached prefix equals the matching rows of full causal attention") {
  const int L = 150, hq = 4, hkv = 2, d = 32;
  const PrefillCase full = make_prefill_case({L}, {L}, hq, hkv, d, 21);
  std::vector<float> full_out, full_lse;
  prefill_ref(full.input(), &full_out, &full_lse);
  for (int prefix : {0, 1, 64, 100, 149}) {
    PrefillCase chunk = make_prefill_case({L}, {L - prefix}, hq, hkv, d, 21);  // same cache contents
    chunk.q.assign(full.q.begin() + size_t(prefix) * hq * d, full.q.end());
    std::vector<float> out, lse, tiled, tiled_lse;
    prefill_ref(chunk.input(), &out, &lse);
    const std::vector<float> expect(full_out.begin() + size_t(prefix) * hq * d, full_out.end());
    const std::vector<float> expect_lse(full_lse.begin() + size_t(prefix) * hq, full_lse.end());
    CHECK(out == expect);  // the same double arithmetic on the same keys: bitwise equal
    CHECK(lse == expect_lse);
    prefill_tiled_ref(chunk.input(), 64, &tiled, &tiled_lse);
    CHECK(relative_error(tiled, expect) < 1e-5);
    CHECK(relative_error(tiled_lse, expect_lse) < 1e-5);
  }
}

TEST_CASE("tiled online-softmax prefill equals the exact reference on a varlen batch") {
  const PrefillCase c = make_prefill_case({70, 5, 200, 64}, {70, 5, 33, 1}, 8, 2, 64, 22);
  std::vector<float> ref, ref_lse;
  prefill_ref(c.input(), &ref, &ref_lse);
  CHECK_FALSE(has_non_finite(ref));
  for (int tile : {16, 64}) {
    std::vector<float> out, lse;
    prefill_tiled_ref(c.input(), tile, &out, &lse);
    CHECK(relative_error(out, ref) < 1e-5);
    CHECK(relative_error(lse, ref_lse) < 1e-5);
  }
}

TEST_CASE("a varlen prefill batch equals each sequence prefilled on its own") {
  const std::vector<int> kv_lens = {40, 90, 17}, q_lens = {40, 25, 17};
  const PrefillCase batch = make_prefill_case(kv_lens, q_lens, 4, 4, 16, 23, false);
  std::vector<float> out, lse;
  prefill_ref(batch.input(), &out, &lse);
  for (size_t b = 0; b < kv_lens.size(); ++b) {
    PrefillCase one = make_prefill_case({kv_lens[b]}, {q_lens[b]}, 4, 4, 16, 23, false);
    // Same logical tokens: rebuild sequence b's cache from the batch cache.
    for (int t = 0; t < kv_lens[b]; ++t)
      for (int h = 0; h < 4; ++h)
        for (int x = 0; x < 16; ++x) {
          const int64_t dst = kv_cache_offset(one.kv.page_indices[t / kPageSize], h, t % kPageSize, x, 4, 16);
          one.kv.k_bits[dst] = float_to_bf16_bits(batch.kv.k(int(b), t, h, x));
          one.kv.v_bits[dst] = float_to_bf16_bits(batch.kv.v(int(b), t, h, x));
        }
    one.q.assign(batch.q.begin() + size_t(batch.q_indptr[b]) * 4 * 16, batch.q.begin() + size_t(batch.q_indptr[b + 1]) * 4 * 16);
    std::vector<float> o, l;
    prefill_ref(one.input(), &o, &l);
    CHECK(std::equal(o.begin(), o.end(), out.begin() + size_t(batch.q_indptr[b]) * 4 * 16));
  }
}

TEST_CASE("prefill over a shuffled page table equals prefill over contiguous pages") {
  const PrefillCase a = make_prefill_case({100, 37}, {36, 37}, 4, 2, 32, 24, false);
  const PrefillCase b = make_prefill_case({100, 37}, {36, 37}, 4, 2, 32, 24, true);
  CHECK(a.kv.page_indices != b.kv.page_indices);
  std::vector<float> oa, la, ob, lb;
  prefill_ref(a.input(), &oa, &la);
  prefill_ref(b.input(), &ob, &lb);
  CHECK(oa == ob);
  prefill_tiled_ref(b.input(), 64, &ob, &lb);
  CHECK(relative_error(ob, oa) < 1e-5);
}

TEST_CASE("GQA prefill equals MHA prefill with each KV head repeated for its group") {
  const int hq = 4, hkv = 1, d = 16;
  const PrefillCase gqa = make_prefill_case({50}, {20}, hq, hkv, d, 25, false);
  PrefillCase mha = make_prefill_case({50}, {20}, hq, hq, d, 25, false);
  for (int t = 0; t < 50; ++t)
    for (int h = 0; h < hq; ++h)
      for (int x = 0; x < d; ++x) {
        const int64_t dst = kv_cache_offset(mha.kv.page_indices[t / kPageSize], h, t % kPageSize, x, hq, d);
        mha.kv.k_bits[dst] = float_to_bf16_bits(gqa.kv.k(0, t, 0, x));
        mha.kv.v_bits[dst] = float_to_bf16_bits(gqa.kv.v(0, t, 0, x));
      }
  mha.q = gqa.q;
  std::vector<float> a, la, m, lm;
  prefill_ref(gqa.input(), &a, &la);
  prefill_ref(mha.input(), &m, &lm);
  CHECK(a == m);
}

TEST_CASE("prefill plan covers every query row once, longest tiles first") {
  const std::vector<int32_t> q_indptr = {0, 130, 131, 131 + 64};
  const std::vector<int32_t> kv_lens = {130, 1000, 64};
  const PrefillPlan plan = plan_prefill(q_indptr, kv_lens);
  CHECK(plan.num_tiles() == 3 + 1 + 1);
  std::vector<int> covered(q_indptr.back(), 0);
  for (int t = 0; t < plan.num_tiles(); ++t) {
    const int b = plan.tile_seq[t];
    for (int r = plan.tile_q_begin[t]; r < std::min(plan.tile_q_begin[t] + kPrefillTileQ, q_indptr[b + 1] - q_indptr[b]); ++r)
      covered[q_indptr[b] + r]++;
    if (t > 0) CHECK(plan.tile_keys[t - 1] >= plan.tile_keys[t]);
  }
  for (int c : covered) CHECK(c == 1);
  CHECK(plan.tile_seq[0] == 1);  // the single row over a 999-token prefix is the costliest tile
}

TEST_CASE("prefill FLOP count equals four times head_dim per visible query-key pair") {
  const std::vector<int32_t> q_indptr = {0, 3, 5}, kv_lens = {3, 12};
  // seq 0: rows see 1,2,3 keys; seq 1 (prefix 10): rows see 11, 12 keys.
  CHECK(prefill_flops(q_indptr, kv_lens, 2, 8) == 4.0 * 8 * 2 * (1 + 2 + 3 + 11 + 12));
}

TEST_CASE("prefill uses 128-row tiles only when they still fill the GPU twice over") {
  CHECK(choose_prefill_rows_per_tile({0, 256}, 32, 132) == 64);     // 2 tiles x 32 heads = 64 blocks
  CHECK(choose_prefill_rows_per_tile({0, 8192}, 32, 132) == 128);   // 64 tiles x 32 heads
  const PrefillPlan plan = plan_prefill({0, 300}, {300}, 128);
  CHECK(plan.num_tiles() == 3);
  CHECK(plan.rows_per_tile == 128);
}
