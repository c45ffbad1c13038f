#include "kernels/decode/decode_ref.h"

#include <doctest/doctest.h>

#include <cmath>

#include "kernels/common/attention_ref.h"
#include "kernels/common/host_util.h"

using namespace servesim::kernels;

namespace {

struct DecodeCase {
  HostPagedKv kv;
  std::vector<float> q;
  int hq;
  DecodeRefInput input() const { return {&kv, &q, hq, 1.0f / std::sqrt(float(kv.head_dim))}; }
};

DecodeCase make_case(const std::vector<int>& lens, int hq, int hkv, int d, uint64_t seed, bool shuffle = true) {
  PagedKvOptions opt;
  opt.shuffle_pages = shuffle;
  DecodeCase c{make_random_paged_kv(lens, hkv, d, seed, opt), random_uniform(lens.size() * hq * d, seed + 99), hq};
  return c;
}

}  // namespace

TEST_CASE("decode reference equals dense attention of each query over its gathered context") {
  const DecodeCase c = make_case({1, 16, 17, 45}, 4, 2, 32, 3);
  std::vector<float> out, lse;
  decode_ref(c.input(), &out, &lse);
  for (int b = 0; b < c.kv.batch(); ++b) {
    const auto k = c.kv.gather_k(b), v = c.kv.gather_v(b);
    std::vector<float> o(size_t(c.hq) * 32), l(c.hq);
    DenseAttentionArgs a{c.q.data() + size_t(b) * c.hq * 32, k.data(), v.data(), 1, c.kv.kv_lens[b], c.hq, 2, 32,
                         c.input().scale};
    dense_attention_ref(a, full_mask(), o.data(), l.data());
    CHECK(std::equal(o.begin(), o.end(), out.begin() + size_t(b) * c.hq * 32));
    // Spot-check a token against the raw page layout.
    CHECK(k[0] == c.kv.k(b, 0, 0, 0));
  }
  CHECK_FALSE(has_non_finite(out));  // NaN-filled spare slots never leak in
}

TEST_CASE("split-KV decode with merged partials equals one-pass softmax for every split size") {
  const DecodeCase c = make_case({1, 63, 64, 65, 300, 1000}, 8, 2, 64, 4);
  std::vector<float> ref, ref_lse;
  decode_ref(c.input(), &ref, &ref_lse);
  for (int split : {64, 128, 192, 1024}) {
    const DecodePlan plan = plan_decode(c.kv.kv_lens, 2, 132, split);
    CHECK(plan.split_tokens == split);
    std::vector<float> out, lse;
    decode_split_kv_ref(c.input(), plan, &out, &lse);
    CHECK(relative_error(out, ref) < 1e-5);
    CHECK(relative_error(lse, ref_lse) < 1e-5);
  }
}

TEST_CASE("GQA decode equals MHA decode with each KV head repeated for its group") {
  const int hq = 8, hkv = 2, d = 16, group = hq / hkv;
  const std::vector<int> lens = {5, 40};
  const DecodeCase gqa = make_case(lens, hq, hkv, d, 5, false);
  // Build the MHA cache by hand: same pages, KV head h copied from GQA head h / group.
  DecodeCase mha = make_case(lens, hq, hq, d, 5, false);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < lens[b]; ++t)
      for (int h = 0; h < hq; ++h)
        for (int x = 0; x < d; ++x) {
          const int32_t page = mha.kv.page_indices[mha.kv.page_indptr[b] + t / kPageSize];
          const int64_t dst = kv_cache_offset(page, h, t % kPageSize, x, hq, d);
          mha.kv.k_bits[dst] = float_to_bf16_bits(gqa.kv.k(b, t, h / group, x));
          mha.kv.v_bits[dst] = float_to_bf16_bits(gqa.kv.v(b, t, h / group, x));
        }
  mha.q = gqa.q;
  std::vector<float> a, la, m, lm;
  decode_ref(gqa.input(), &a, &la);
  decode_ref(mha.input(), &m, &lm);
  CHECK(a == m);
  CHECK(la == lm);
}

TEST_CASE("decode over a shuffled page table equals decode over contiguous pages") {
  const DecodeCase contiguous = make_case({7, 33, 129}, 4, 4, 32, 6, false);
  const DecodeCase shuffled = make_case({7, 33, 129}, 4, 4, 32, 6, true);
  CHECK(contiguous.kv.page_indices != shuffled.kv.page_indices);
  std::vector<float> a, la, b, lb;
  decode_ref(contiguous.input(), &a, &la);
  decode_ref(shuffled.input(), &b, &lb);
  CHECK(a == b);
  const DecodePlan plan = plan_decode(contiguous.kv.kv_lens, 4, 132, 64);
  decode_split_kv_ref(shuffled.input(), plan, &b, &lb);
  CHECK(relative_error(b, a) < 1e-5);
}

TEST_CASE("decode plan covers every token once with tile-aligned splits and balances ragged batches") {
  const std::vector<int32_t> lens = {0, 1, 100, 5000, 131072};
  const DecodePlan plan = plan_decode(lens, 8, 132);
  CHECK(plan.split_tokens % kDecodeTileTokens == 0);
  // One wave: about as many (work item, KV head) blocks as resident slots (132 SMs x 3).
  CHECK(plan.num_work() * 8 <= 132 * 3 + int(lens.size()) * 8);
  CHECK(plan.seq_work_indptr.size() == lens.size() + 1);
  for (size_t b = 0; b < lens.size(); ++b) {
    const int splits = plan.splits_of(int(b));
    CHECK(splits >= 1);
    CHECK(int64_t(splits) * plan.split_tokens >= lens[b]);                  // covers the context
    if (lens[b] > 0) CHECK(int64_t(splits - 1) * plan.split_tokens < lens[b]);  // no empty split
    for (int w = plan.seq_work_indptr[b]; w < plan.seq_work_indptr[b + 1]; ++w) {
      CHECK(plan.work_seq[w] == int(b));
      CHECK(plan.work_split[w] == w - plan.seq_work_indptr[b]);
    }
  }
  CHECK(plan.splits_of(4) > 8);  // the 128K context is spread over many blocks
  CHECK(plan.needs_merge());
  // A batch large enough to fill the GPU by itself is not split.
  const DecodePlan big = plan_decode(std::vector<int32_t>(256, 512), 8, 132);
  CHECK_FALSE(big.needs_merge());
}
