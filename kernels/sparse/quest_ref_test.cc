#include "kernels/sparse/quest_ref.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/common/attention_ref.h"
#include "kernels/sparse/sparse_test_util.h"

namespace servesim::kernels::sparse {
namespace {

using testing::FloatPagedCache;

constexpr int kQHeads = 8, kKvHeads = 2, kDim = 32;

std::vector<float> recomputed_meta(const FloatPagedCache& c, int seq) {
  std::vector<float> meta(static_cast<size_t>(c.host.num_pages) * kKvHeads * 2 * kDim, 0.0f);
  quest_recompute_metadata_ref(c.view(), c.page_table(seq), c.host.kv_lens[seq], meta.data());
  return meta;
}

double qk(const float* q, const float* k) {
  double s = 0;
  for (int i = 0; i < kDim; ++i) s += static_cast<double>(q[i]) * k[i];
  return s;
}

void check_bound(bool per_query_head) {
  const FloatPagedCache c({203}, kKvHeads, kDim, 11);
  const std::vector<float> meta = recomputed_meta(c, 0);
  const int64_t pages = pages_for_tokens(203);
  const int rows = per_query_head ? kQHeads : kKvHeads;
  const int heads_per_row = kQHeads / rows;
  for (uint64_t trial = 0; trial < 5; ++trial) {
    const std::vector<float> q = random_uniform(kQHeads * kDim, 100 + trial, -2.0f, 2.0f);
    std::vector<float> scores(rows * pages);
    quest_estimate_ref(q.data(), meta.data(), c.page_table(0), pages, kQHeads, kKvHeads, kDim,
                       per_query_head, scores.data());
    for (int row = 0; row < rows; ++row) {
      const int kvh = row * heads_per_row / (kQHeads / kKvHeads);
      for (int t = 0; t < 203; ++t) {
        double dot = 0;  // sum over the row's query heads of q_h . k_t
        for (int h = row * heads_per_row; h < (row + 1) * heads_per_row; ++h) {
          dot += qk(q.data() + h * kDim, c.k.data() + c.view().offset(c.page_table(0)[t / kPageSize], kvh, t % kPageSize));
        }
        const float score = scores[row * pages + t / kPageSize];
        CHECK(score >= dot - 1e-5 * (1 + std::abs(dot)));
      }
    }
  }
}

TEST_CASE("the Quest estimate bounds every key's q.k in its page from above, per KV head summed over its query heads") {
  check_bound(false);
}

TEST_CASE("the Quest estimate bounds every key's q.k in its page from above, per query head") {
  check_bound(true);
}

TEST_CASE("Quest metadata maintained incrementally as tokens are appended equals metadata recomputed from scratch") {
  const int len = 301;
  const FloatPagedCache c({len}, kKvHeads, kDim, 5);
  std::vector<float> meta(static_cast<size_t>(c.host.num_pages) * kKvHeads * 2 * kDim, 0.0f);
  // Prefill chunks of uneven sizes, then single-token decode steps.
  const std::vector<int> steps = {37, 16, 5, 64, 117, 1, 1, 1, 15, 16, 17, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  int64_t done = 0;
  for (int s : steps) {
    quest_append_metadata_ref(c.view(), c.page_table(0), done, s, meta.data());
    done += s;
  }
  REQUIRE(done == len);
  const std::vector<float> want = recomputed_meta(c, 0);
  for (int64_t p = 0; p < pages_for_tokens(len); ++p) {
    for (int h = 0; h < kKvHeads; ++h) {
      const int64_t off = quest_meta_offset(c.page_table(0)[p], h, kKvHeads, kDim);
      for (int i = 0; i < 2 * kDim; ++i) REQUIRE(meta[off + i] == want[off + i]);
    }
  }
}

TEST_CASE("Quest page selection keeps the budget's pages: the current page plus the top-scoring others") {
  const std::vector<float> scores = {0.5f, 3.0f, -1.0f, 3.0f, 2.0f, 9.0f, 0.0f, -5.0f};
  CHECK(quest_select_pages_ref(scores, 8, 3) == std::vector<int32_t>{1, 5, 7});  // tie 1 = 3: smaller index
  CHECK(quest_select_pages_ref(scores, 8, 2) == std::vector<int32_t>{5, 7});
  CHECK(quest_select_pages_ref(scores, 8, 1) == std::vector<int32_t>{7});
  CHECK(quest_select_pages_ref(scores, 4, 4) == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(quest_select_pages_ref(scores, 3, 100) == std::vector<int32_t>{0, 1, 2});
  CHECK(quest_budget_pages(2048) == 128);
  CHECK(quest_budget_pages(2047) == 128);
  CHECK(quest_budget_pages(1) == 1);
}

TEST_CASE("Quest sparse decode with all pages selected equals dense decode") {
  const std::vector<int> lens = {1, 16, 17, 250};
  const FloatPagedCache c(lens, kKvHeads, kDim, 21);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kDim));
  for (size_t b = 0; b < lens.size(); ++b) {
    const std::vector<float> q = random_uniform(kQHeads * kDim, 300 + b);
    std::vector<int32_t> all(pages_for_tokens(lens[b]));
    for (size_t p = 0; p < all.size(); ++p) all[p] = static_cast<int32_t>(p);
    for (bool per_q : {false, true}) {
      std::vector<float> got(kQHeads * kDim);
      paged_decode_subset_ref(q.data(), c.view(), c.page_table(static_cast<int>(b)), lens[b],
                              kQHeads, scale, per_q, [&](int) { return std::span<const int32_t>(all); },
                              got.data());
      const std::vector<float> k = c.host.gather_k(static_cast<int>(b)), v = c.host.gather_v(static_cast<int>(b));
      std::vector<float> want(kQHeads * kDim);
      dense_attention_ref({q.data(), k.data(), v.data(), 1, lens[b], kQHeads, kKvHeads, kDim, scale},
                          full_mask(), want.data(), nullptr);
      CHECK(relative_error(got, want) < 1e-6);
    }
  }
}

TEST_CASE("Quest sparse decode over selected pages equals dense attention masked to those pages") {
  const int len = 160;
  const FloatPagedCache c({len}, kKvHeads, kDim, 3);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kDim));
  const std::vector<float> q = random_uniform(kQHeads * kDim, 9);
  const std::vector<float> meta = recomputed_meta(c, 0);
  const int64_t pages = pages_for_tokens(len);
  std::vector<float> scores(kKvHeads * pages);
  quest_estimate_ref(q.data(), meta.data(), c.page_table(0), pages, kQHeads, kKvHeads, kDim, false, scores.data());
  std::vector<std::vector<int32_t>> sel;
  for (int g = 0; g < kKvHeads; ++g) {
    sel.push_back(quest_select_pages_ref(std::span<const float>(scores).subspan(g * pages, pages), pages, 4));
    REQUIRE(sel.back().size() == 4);
  }
  std::vector<float> got(kQHeads * kDim), want(kQHeads * kDim);
  paged_decode_subset_ref(q.data(), c.view(), c.page_table(0), len, kQHeads, scale, false,
                          [&](int row) { return std::span<const int32_t>(sel[row]); }, got.data());
  const std::vector<float> k = c.host.gather_k(0), v = c.host.gather_v(0);
  const int group = kQHeads / kKvHeads;
  dense_attention_ref({q.data(), k.data(), v.data(), 1, len, kQHeads, kKvHeads, kDim, scale},
                      [&](int, int key, int head) {
                        const auto& s = sel[head / group];
                        return std::binary_search(s.begin(), s.end(), key / kPageSize);
                      },
                      want.data(), nullptr);
  CHECK(relative_error(got, want) < 1e-6);
}

}  // namespace
}  // namespace servesim::kernels::sparse
