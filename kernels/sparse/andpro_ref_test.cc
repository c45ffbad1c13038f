#include "kernels/sparse/andpro_ref.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "kernels/common/attention_ref.h"
#include "kernels/sparse/sparse_test_util.h"

namespace servesim::kernels::sparse {
namespace {

using testing::FloatPagedCache;

constexpr int kQHeads = 4, kKvHeads = 2, kDim = 32;

// One prompt in a paged cache, plus the prefill's outputs and LSE of its window rows.
struct PrefilledPrompt {
  int64_t n;
  int window;
  FloatPagedCache cache;
  std::vector<float> q, k, v;        // contiguous [n][heads][d]
  std::vector<float> q_win, y_win, lse_win;
  float scale = 1.0f / std::sqrt(static_cast<float>(kDim));

  PrefilledPrompt(int len, int w, uint64_t seed)
      : n(len), window(w), cache({len}, kKvHeads, kDim, seed),
        q(random_uniform(static_cast<size_t>(len) * kQHeads * kDim, derive_seed(seed, 77), -2.0f, 2.0f)),
        k(cache.host.gather_k(0)), v(cache.host.gather_v(0)) {
    std::vector<float> out(q.size()), lse(static_cast<size_t>(n) * kQHeads);
    dense_attention_ref({q.data(), k.data(), v.data(), len, len, kQHeads, kKvHeads, kDim, scale},
                        causal_mask(0), out.data(), lse.data());
    const size_t row = kQHeads * kDim;
    q_win.assign(q.end() - w * row, q.end());
    y_win.assign(out.end() - w * row, out.end());
    lse_win.assign(lse.end() - w * kQHeads, lse.end());
  }

  std::vector<float> token_scores() const {
    std::vector<float> s(kKvHeads * (n - window));
    andpro_token_scores_ref(q_win.data(), y_win.data(), lse_win.data(), cache.view(), cache.page_table(0),
                            n, window, kQHeads, scale, s.data());
    return s;
  }
};

TEST_CASE("AnDPro scores computed from the prefill's outputs and LSE equal the naive formula") {
  for (int w : {16, 32, 64}) {
    const PrefilledPrompt p(211, w, 3 + w);
    std::vector<float> naive(kKvHeads * (p.n - w));
    andpro_naive_scores_ref(p.q.data(), p.k.data(), p.v.data(), p.n, w, kQHeads, kKvHeads, kDim, p.scale,
                            naive.data());
    CHECK(relative_error(p.token_scores(), naive) < 1e-5);
  }
}

TEST_CASE("AnDPro block merging sums the token scores of each block and drops the remainder") {
  const AndproParams params{.window = 16, .block = 8, .budget = 24, .keep_first_block = false};
  const int64_t n = 16 + 8 * 5 + 3;  // 5 whole blocks, 3 remainder tokens before the window
  std::vector<float> tokens(kKvHeads * (n - 16));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<float>(i % 7) - 2.0f;
  const std::vector<float> blocks = andpro_merge_blocks_ref(tokens, kKvHeads, n, params);
  REQUIRE(blocks.size() == static_cast<size_t>(kKvHeads * 5));
  for (int g = 0; g < kKvHeads; ++g) {
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
    const std::vector<float> blocks = andpro_merge_blocks_ref(p.token_scores(), kKvHeads, p.n, params);
    const std::vector<int32_t> kept = andpro_select_blocks_ref(blocks, kKvHeads, p.n, params);
    const int64_t nb = 12, per_head = andpro_kept_blocks(p.n, params);
    REQUIRE(per_head == 4);
    REQUIRE(kept.size() == static_cast<size_t>(kKvHeads * per_head));
    for (int g = 0; g < kKvHeads; ++g) {
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
  const std::vector<float> blocks = andpro_merge_blocks_ref(p.token_scores(), kKvHeads, p.n, params);
  const std::vector<int32_t> kept = andpro_select_blocks_ref(blocks, kKvHeads, p.n, params);
  const int64_t count = andpro_kept_tokens(p.n, params);
  REQUIRE(count == 32 + 5 + 16);
  const int pages = pages_for_tokens(count);
  std::vector<int32_t> dst_table(pages);
  for (int i = 0; i < pages; ++i) dst_table[i] = pages - 1 - i;  // reversed: page ids are arbitrary
  std::vector<float> dk(static_cast<size_t>(pages) * kKvHeads * kPageSize * kDim, NAN), dv = dk;
  andpro_compact_ref(p.cache.view(), p.cache.page_table(0), kept, p.n, params, dst_table, dk.data(), dv.data());
  const KvCacheF32 dst{dk.data(), dv.data(), kKvHeads, kDim};
  for (int g = 0; g < kKvHeads; ++g) {
    const std::span<const int32_t> mine(kept.data() + g * 2, 2);
    int64_t prev = -1;
    for (int64_t j = 0; j < count; ++j) {
      const int64_t pos = andpro_source_position(mine, j, p.n, params);
      CHECK(pos > prev);
      prev = pos;
      const bool in_block = j < 32 && pos / 16 == mine[j / 16];
      CHECK((in_block || pos >= p.n - 16 - 5));
      for (int d = 0; d < kDim; ++d) {
        REQUIRE(dk[dst.offset(dst_table[j / kPageSize], g, j % kPageSize) + d] == p.k[(pos * kKvHeads + g) * kDim + d]);
        REQUIRE(dv[dst.offset(dst_table[j / kPageSize], g, j % kPageSize) + d] == p.v[(pos * kKvHeads + g) * kDim + d]);
      }
    }
  }
}

}  // namespace
}  // namespace servesim::kernels::sparse
