#include "kernels/sparse/andpro_ref.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "kernels/common/attention_ref.h"
#include "kernels/sparse/sparse_test_util.h"

namespace servesim::kernels::sparse {
namespace {

using testing::FloatPagedCache;

constexpr int kAndproQHeads = 4, kAndproKvHeads = 2, kAndproDim = 32;

// One prompt in a paged cache, plus the prefill's outputs and LSE of its window rows.
struct PrefilledPrompt {
  int64_t n;
  int window;
  FloatPagedCache cache;
  std::vector<float> q, k, v;        // contiguous [n][heads][d]
  std::vector<float> q_win, y_win, lse_win;
  float scale = 1.0f / std::sqrt(static_cast<float>(kAndproDim));

  PrefilledPrompt(int len, int w, uint64_t seed)
      : n(len), window(w), cache({len}, kAndproKvHeads, kAndproDim, seed),
        q(random_uniform(static_cast<size_t>(len) * kAndproQHeads * kAndproDim, derive_seed(seed, 77), -2.0f, 2.0f)),
        k(cache.host.gather_k(0)), v(cache.host.gather_v(0)) {
    std::vector<float> out(q.size()), lse(static_cast<size_t>(n) * kAndproQHeads);
    dense_attention_ref({q.data(), k.data(), v.data(), len, len, kAndproQHeads, kAndproKvHeads, kAndproDim, scale},
                        causal_mask(0), out.data(), lse.data());
    const size_t row = kAndproQHeads * kAndproDim;
    q_win.assign(q.end() - w * row, q.end());
    y_win.assign(out.end() - w * row, out.end());
    lse_win.assign(lse.end() - w * kAndproQHeads, lse.end());
  }

  std::vector<float> token_scores() const {
    std::vector<float> s(kAndproKvHeads * (n - window));
    andpro_token_scores_ref(q_win.data(), y_win.data(), lse_win.data(), cache.view(), cache.page_table(0),
                            n, window, kAndproQHeads, scale, s.data());
    return s;
  }
};

TEST_CASE("AnDPro scores computed from the prefill's outputs and LSE equal the naive formula") {
  for (int w : {16, 32, 64}) {
    const PrefilledPrompt p(211, w, 3 + w);
    std::vector<float> naive(kAndproKvHeads * (p.n - w));
    andpro_naive_scores_ref(p.q.data(), p.k.data(), p.v.data(), p.n, w, kAndproQHeads, kAndproKvHeads, kAndproDim, p.scale,
                            naive.data());
    CHECK(relative_error(p.token_scores(), naive) < 1e-5);
  }
}

TEST_CASE("AnDPro block merging sums the token scores of each block and drops the remainder") {
  const AndproParams params{.window = 16, .block = 8, .budget = 24, .keep_first_block = false};
  const int64_t n = 16 + 8 * 5 + 3;  // 5 whole blocks, 3 remainder tokens before the window
  std::vector<float> tokens(kAndproKvHeads * (n - 16));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<float>(i % 7) - 2.0f;
  const std::vector<float> blocks = andpro_merge_blocks_ref(tokens, kAndproKvHeads, n, params);
  REQUIRE(blocks.size() == static_cast<size_t>(kAndproKvHeads * 5));
  for (int g = 0; g < kAndproKvHeads; ++g) {
    for (int b = 0; b < 5; ++b) {
      float want = 0;
      for (int j = 0; j < 8; ++j) want += tokens[g * (n - 16) + b * 8 + j];
      CHECK(blocks[g * 5 + b] == doctest::Approx(want));
    }
  }
  CHECK(andpro_kept_tokens(n, params) == 3 * 8 + 3 + 16);
}

TEST_CASE("the AnDPro kept set has exactly the budget's blocks per head and maximises their scores") {
  for (bool keep_first : {false, true}) {
    const AndproParams params{.window = 32, .block = 16, .budget = 64, .keep_first_block = keep_first};
    const PrefilledPrompt p(32 + 16 * 12 + 7, params.window, 17);
    const std::vector<float> blocks = andpro_merge_blocks_ref(p.token_scores(), kAndproKvHeads, p.n, params);
    const std::vector<int32_t> kept = andpro_select_blocks_ref(blocks, kAndproKvHeads, p.n, params);
    const int64_t nb = 12, per_head = andpro_kept_blocks(p.n, params);
    REQUIRE(per_head == 4);
    REQUIRE(kept.size() == static_cast<size_t>(kAndproKvHeads * per_head));
    for (int g = 0; g < kAndproKvHeads; ++g) {
      const std::vector<int32_t> mine(kept.begin() + g * per_head, kept.begin() + (g + 1) * per_head);
      REQUIRE(std::is_sorted(mine.begin(), mine.end()));
      if (keep_first) CHECK(mine.front() == 0);
      for (int64_t b = 0; b < nb; ++b) {
        if (std::binary_search(mine.begin(), mine.end(), b)) continue;
        for (int32_t s : mine) {
          if (keep_first && s == 0) continue;  // forced sink block
          CHECK(blocks[g * nb + s] >= blocks[g * nb + b]);
        }
      }
    }
  }
}

TEST_CASE("AnDPro compaction copies each head's kept tokens in position order, window last") {
  const AndproParams params{.window = 16, .block = 16, .budget = 32, .keep_first_block = true};
  const PrefilledPrompt p(16 + 16 * 6 + 5, params.window, 23);
  const std::vector<float> blocks = andpro_merge_blocks_ref(p.token_scores(), kAndproKvHeads, p.n, params);
  const std::vector<int32_t> kept = andpro_select_blocks_ref(blocks, kAndproKvHeads, p.n, params);
  const int64_t count = andpro_kept_tokens(p.n, params);
  REQUIRE(count == 32 + 5 + 16);
  const int pages = pages_for_tokens(count);
  std::vector<int32_t> dst_table(pages);
  for (int i = 0; i < pages; ++i) dst_table[i] = pages - 1 - i;  // reversed: page ids are arbitrary
  std::vector<float> dk(static_cast<size_t>(pages) * kAndproKvHeads * kPageSize * kAndproDim, NAN), dv = dk;
  andpro_compact_ref(p.cache.view(), p.cache.page_table(0), kept, p.n, params, dst_table, dk.data(), dv.data());
  const KvCacheF32 dst{dk.data(), dv.data(), kAndproKvHeads, kAndproDim};
  for (int g = 0; g < kAndproKvHeads; ++g) {
    const std::span<const int32_t> mine(kept.data() + g * 2, 2);
    int64_t prev = -1;
    for (int64_t j = 0; j < count; ++j) {
      const int64_t pos = andpro_source_position(mine, j, p.n, params);
      CHECK(pos > prev);
      prev = pos;
      const bool in_block = j < 32 && pos / 16 == mine[j / 16];
      CHECK((in_block || pos >= p.n - 16 - 5));
      for (int d = 0; d < kAndproDim; ++d) {
        REQUIRE(dk[dst.offset(dst_table[j / kPageSize], g, j % kPageSize) + d] == p.k[(pos * kAndproKvHeads + g) * kAndproDim + d]);
        REQUIRE(dv[dst.offset(dst_table[j / kPageSize], g, j % kPageSize) + d] == p.v[(pos * kAndproKvHeads + g) * kAndproDim + d]);
      }
    }
  }
}

// ---- layer_topk allocation (issue 20 item 4): hand-computed examples ----

// Two KV heads, window 16, block 16, four whole blocks each and a 5-token remainder:
// n = 16 + 64 + 5, tail 21; budget 32 = two blocks per head on average, four in total.
constexpr int64_t kN = 16 + 64 + 5;
AndproParams layer_params(bool keep_first) {
  return {.window = 16, .block = 16, .budget = 32, .keep_first_block = keep_first};
}

TEST_CASE("layer top-k: a head with all the high scores gets all of the layer's budget") {
  const std::vector<float> scores = {9, 8, 7, 6, /* head 1 */ 1, 2, 3, 4};
  const AndproParams p = layer_params(false);
  REQUIRE(andpro_layer_kept_blocks(kN, p, 2) == 4);
  const std::vector<int32_t> kept = andpro_select_layer_ref(scores, 2, kN, p);
  CHECK(kept == std::vector<int32_t>{0, 1, 2, 3});
  const AndproRagged r = andpro_ragged(kept, 2, kN, p);
  CHECK(r.begin == std::vector<int64_t>{0, 4, 4});
  CHECK(r.tokens == std::vector<int64_t>{4 * 16 + 21, 21});  // head 1 keeps only the tail
  CHECK(r.slice == std::vector<int64_t>{0, 6, 8});
  CHECK(r.pages == 4);
  // The equal split keeps two blocks per head: head 0 {0, 1}, head 1 {2, 3}.
  CHECK(andpro_select_blocks_ref(scores, 2, kN, p) == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(andpro_kept_tokens(kN, p) == 2 * 16 + 21);
}

TEST_CASE("layer top-k: ties go to the lower KV head, then the earlier block, and keep_first forces every head's block 0") {
  const std::vector<float> equal_scores(8, 1.0f);
  CHECK(andpro_select_layer_ref(equal_scores, 2, kN, layer_params(false)) == std::vector<int32_t>{0, 1, 2, 3});
  // Forced: flat 0 and 4 (block 0 of each head), then the two first of the ties: 1, 2.
  CHECK(andpro_select_layer_ref(equal_scores, 2, kN, layer_params(true)) == std::vector<int32_t>{0, 1, 2, 4});
  // Interleaved: 5 (h0 b0), 4 (h1 b0), 4 (h1 b1), then 1 at h0 b1 (smaller flat index).
  const std::vector<float> mixed = {5, 1, 1, 1, /* head 1 */ 4, 4, 0, 0};
  const std::vector<int32_t> kept = andpro_select_layer_ref(mixed, 2, kN, layer_params(false));
  CHECK(kept == std::vector<int32_t>{0, 1, 4, 5});
  const AndproRagged r = andpro_ragged(kept, 2, kN, layer_params(false));
  CHECK(r.tokens == std::vector<int64_t>{53, 53});
  // NaN counts as -inf: a head of NaN scores loses every block it is not forced to keep.
  const std::vector<float> nan_head = {NAN, NAN, NAN, NAN, /* head 1 */ 0, 0, 0, 0};
  CHECK(andpro_select_layer_ref(nan_head, 2, kN, layer_params(true)) == std::vector<int32_t>{0, 4, 5, 6});
}

TEST_CASE("layer top-k keeps the same total as the equal split and at least its total score") {
  for (uint64_t seed : {5u, 6u, 7u}) {
    const AndproParams p{.window = 32, .block = 16, .budget = 64, .keep_first_block = false};
    const PrefilledPrompt pr(32 + 16 * 12 + 7, p.window, seed);
    const std::vector<float> blocks = andpro_merge_blocks_ref(pr.token_scores(), kAndproKvHeads, pr.n, p);
    const std::vector<int32_t> layer = andpro_select_layer_ref(blocks, kAndproKvHeads, pr.n, p);
    const std::vector<int32_t> equal = andpro_select_blocks_ref(blocks, kAndproKvHeads, pr.n, p);
    REQUIRE(layer.size() == equal.size());
    double layer_sum = 0, equal_sum = 0;
    for (int32_t f : layer) layer_sum += blocks[f];
    for (int g = 0; g < kAndproKvHeads; ++g)
      for (int i = 0; i < 4; ++i) equal_sum += blocks[g * 12 + equal[g * 4 + i]];
    CHECK(layer_sum >= equal_sum);
    const AndproRagged r = andpro_ragged(layer, kAndproKvHeads, pr.n, p);
    CHECK(r.tokens[0] + r.tokens[1] == 2 * andpro_kept_tokens(pr.n, p));
    CHECK(r.pages <= andpro_ragged_pages_bound(pr.n, p));
  }
}

TEST_CASE("ragged page rounding: block 4 heads pad their last slice and the bound covers the worst case") {
  // n = 16 + 40, window 16: ten 4-token blocks, no remainder, tail 16; budget 8 = 2 blocks
  // per head. Equal: 8 + 16 = 24 tokens per head, 2 slices each, 2 pages for G = 2.
  const AndproParams p{.window = 16, .block = 4, .budget = 8, .keep_first_block = false};
  const int64_t n = 16 + 40;
  CHECK(andpro_kept_tokens(n, p) == 24);
  // Head 0 takes 3 blocks (28 tokens, 2 slices), head 1 one block (20 tokens, 2 slices):
  // 4 slices, 2 pages.
  std::vector<float> s(20, 0.0f);
  s[0] = s[1] = s[2] = 3;
  s[10] = 2;
  AndproRagged r = andpro_ragged(andpro_select_layer_ref(s, 2, n, p), 2, n, p);
  CHECK(r.tokens == std::vector<int64_t>{28, 20});
  CHECK(r.slice == std::vector<int64_t>{0, 2, 4});
  CHECK(r.pages == 2);
  // Pad of 4m + 16 is at most 12 (m = 1): the bound is ceil((24 + 12) / 16) = 3 pages.
  CHECK(andpro_ragged_pages_bound(n, p) == 3);
  // G = 3 heads of 1, 2, 3 blocks: 20, 24, 28 tokens -> 2 + 2 + 2 = 6 slices, 2 pages.
  std::vector<float> t(30, 0.0f);
  t[0] = t[10] = t[11] = t[20] = t[21] = t[22] = 1;
  r = andpro_ragged(andpro_select_layer_ref(t, 3, n, p), 3, n, p);
  CHECK(r.tokens == std::vector<int64_t>{20, 24, 28});
  CHECK(r.pages == 2);
}

TEST_CASE("ragged compaction: each head's kept tokens in position order in its own slices, padding untouched") {
  const AndproParams params{.window = 16, .block = 16, .budget = 32, .keep_first_block = true};
  const PrefilledPrompt p(16 + 16 * 6 + 5, params.window, 29);
  // Make head 0 win most blocks: its block scores are shifted up.
  std::vector<float> blocks = andpro_merge_blocks_ref(p.token_scores(), kAndproKvHeads, p.n, params);
  for (int b = 0; b < 6; ++b) blocks[b] += 1e6f;
  const std::vector<int32_t> kept = andpro_select_layer_ref(blocks, kAndproKvHeads, p.n, params);
  const AndproRagged r = andpro_ragged(kept, kAndproKvHeads, p.n, params);
  CHECK(r.tokens == std::vector<int64_t>{3 * 16 + 21, 16 + 21});  // 4 blocks: head 1 keeps only its forced block 0
  const int pages = static_cast<int>(andpro_ragged_pages_bound(p.n, params));
  REQUIRE(r.pages <= pages);
  std::vector<int32_t> dst_table(pages);
  for (int i = 0; i < pages; ++i) dst_table[i] = pages - 1 - i;
  std::vector<float> dk(static_cast<size_t>(pages) * kAndproKvHeads * kPageSize * kAndproDim, NAN), dv = dk;
  andpro_compact_ragged_ref(p.cache.view(), p.cache.page_table(0), kept, p.n, params, dst_table, dk.data(), dv.data());
  const KvCacheF32 dst{dk.data(), dv.data(), kAndproKvHeads, kAndproDim};
  size_t written = 0;
  for (float x : dk) written += !std::isnan(x);
  CHECK(written == static_cast<size_t>(r.tokens[0] + r.tokens[1]) * kAndproDim);
  for (int g = 0; g < kAndproKvHeads; ++g) {
    int64_t prev = -1;
    for (int64_t j = 0; j < r.tokens[g]; ++j) {
      const int64_t pos = andpro_ragged_source_position(kept, r, g, j, p.n, params);
      CHECK(pos > prev);
      prev = pos;
      const int64_t sl = r.slice[g] + j / kPageSize;
      const int64_t off = dst.offset(dst_table[sl / kAndproKvHeads], static_cast<int>(sl % kAndproKvHeads), j % kPageSize);
      for (int d = 0; d < kAndproDim; ++d) {
        REQUIRE(dk[off + d] == p.k[(pos * kAndproKvHeads + g) * kAndproDim + d]);
        REQUIRE(dv[off + d] == p.v[(pos * kAndproKvHeads + g) * kAndproDim + d]);
      }
    }
  }
}

}  // namespace
}  // namespace servesim::kernels::sparse
