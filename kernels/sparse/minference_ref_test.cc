#include "kernels/sparse/minference_ref.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/common/attention_ref.h"
#include "kernels/common/host_util.h"
#include "kernels/sparse/minference_plan.h"
#include "kernels/sparse/sparse_ref_util.h"

namespace servesim::kernels::sparse {
namespace {

constexpr int kMinfQHeads = 4, kMinfKvHeads = 2, kMinfDim = 32;

struct Prompt {
  int64_t n;
  std::vector<float> q, k, v;
  float scale = 1.0f / std::sqrt(static_cast<float>(kMinfDim));
  explicit Prompt(int64_t len, uint64_t seed)
      : n(len),
        q(random_uniform(len * kMinfQHeads * kMinfDim, derive_seed(seed, 1))),
        k(random_uniform(len * kMinfKvHeads * kMinfDim, derive_seed(seed, 2))),
        v(random_uniform(len * kMinfKvHeads * kMinfDim, derive_seed(seed, 3))) {}

  std::vector<float> dense(const AttentionMask& mask) const {
    std::vector<float> out(q.size());
    dense_attention_ref({q.data(), k.data(), v.data(), static_cast<int>(n), static_cast<int>(n),
                         kMinfQHeads, kMinfKvHeads, kMinfDim, scale},
                        mask, out.data(), nullptr);
    return out;
  }
  std::vector<float> sparse(const std::vector<MInfHeadIndex>& heads) const {
    std::vector<float> out(q.size());
    minference_attention_ref(q.data(), k.data(), v.data(), n, kMinfQHeads, kMinfKvHeads, kMinfDim, scale,
                             heads, out.data());
    return out;
  }
};

VsLines random_lines(int64_t n, int kv, int ks, uint64_t seed) {
  std::vector<float> vert = random_uniform(n, derive_seed(seed, 10), 0.0f, 1.0f, false);
  std::vector<float> sl = random_uniform(n, derive_seed(seed, 11), 0.0f, 1.0f, false);
  return vs_select_lines_ref(vert, sl, kv, ks, 0, 0);
}

TEST_CASE("the vertical-slash index covers exactly the brute-force mask") {
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const int64_t n = 64 * 9 + static_cast<int64_t>(seed) * 13;  // partial last blocks too
    const VsLines lines = random_lines(n, 1 + static_cast<int>(seed) * 7, 1 + static_cast<int>(seed % 5) * 9, seed);
    const std::vector<RowBlockIndex> index = vs_build_index_ref(lines, n);
    REQUIRE(static_cast<int64_t>(index.size()) == (n + 63) / 64);
    for (int64_t b = 0; b < static_cast<int64_t>(index.size()); ++b) {
      const RowBlockIndex& row = index[b];
      std::vector<int64_t> covered;
      for (size_t r = 0; r < row.ranges.size(); ++r) {
        const auto [lo, hi] = row.ranges[r];
        REQUIRE(0 <= lo);
        REQUIRE(lo < hi);
        if (r > 0) REQUIRE(row.ranges[r - 1].second < lo);  // sorted, disjoint, merged
        for (int64_t c = lo; c < hi; ++c) covered.push_back(c);
      }
      REQUIRE(std::is_sorted(row.columns.begin(), row.columns.end()));
      covered.insert(covered.end(), row.columns.begin(), row.columns.end());
      std::sort(covered.begin(), covered.end());
      REQUIRE(std::adjacent_find(covered.begin(), covered.end()) == covered.end());  // no key twice
      REQUIRE(covered == vs_bruteforce_keys(lines, n, b));
    }
  }
}

TEST_CASE("the vertical-slash estimate sums the last 64 queries' causal softmax along columns and diagonals") {
  const Prompt p(150, 4);
  std::vector<float> vert(p.n), sl(p.n);
  vs_estimate_ref(p.q.data(), p.k.data(), p.n, kMinfQHeads, kMinfKvHeads, kMinfDim, p.scale, 3, vert.data(), sl.data());
  // Each of the 64 softmax rows sums to one.
  CHECK(std::accumulate(vert.begin(), vert.end(), 0.0) == doctest::Approx(64.0).epsilon(1e-5));
  CHECK(std::accumulate(sl.begin(), sl.end(), 0.0) == doctest::Approx(64.0).epsilon(1e-5));
  // Row 149 sees every column and every offset, so no line scores zero.
  for (int64_t c = 0; c < p.n; ++c) CHECK(vert[c] > 0.0f);
  for (int64_t o = 0; o < p.n; ++o) CHECK(sl[o] > 0.0f);
  // The forced lines are kept whatever their score.
  const VsLines lines = vs_select_lines_ref(vert, sl, 40, 120);
  CHECK(lines.verticals.size() == 40);
  CHECK(lines.slashes.size() == 120);
  for (int i = 0; i < kMInfForcedColumns; ++i) CHECK(std::binary_search(lines.verticals.begin(), lines.verticals.end(), i));
  for (int i = 0; i < kMInfForcedSlashes; ++i) CHECK(std::binary_search(lines.slashes.begin(), lines.slashes.end(), i));
}

TEST_CASE("vertical-slash sparse attention equals dense attention under the vertical-slash mask") {
  const Prompt p(64 * 5 + 17, 8);
  std::vector<MInfHeadIndex> heads;
  for (int h = 0; h < kMinfQHeads; ++h) {
    const VsLines lines = random_lines(p.n, 3 + 20 * h, 2 + 3 * h, 50 + h);
    heads.push_back({{MInfPattern::kVerticalSlash, 0, 0}, vs_build_index_ref(lines, p.n)});
  }
  const std::vector<float> want = p.dense([&](int r, int c, int h) {
    if (c > r) return false;
    const auto& row = heads[h].rows[r / kMInfBlock];
    for (auto [lo, hi] : row.ranges) if (lo <= c && c < hi) return true;
    return std::binary_search(row.columns.begin(), row.columns.end(), int64_t{c});
  });
  CHECK(relative_error(p.sparse(heads), want) < 1e-6);
}

TEST_CASE("block-sparse with all blocks equals dense causal attention") {
  const Prompt p(64 * 6 + 5, 9);
  std::vector<MInfHeadIndex> heads;
  for (int h = 0; h < kMinfQHeads; ++h) {
    const MInfHeadPattern all{MInfPattern::kBlockSparse, 7, 0};  // 7 blocks = every block
    heads.push_back(minference_head_index_ref(p.q.data(), p.k.data(), p.n, kMinfQHeads, kMinfKvHeads, kMinfDim, p.scale, h, all));
  }
  CHECK(relative_error(p.sparse(heads), p.dense(causal_mask(0))) < 1e-6);
}

TEST_CASE("block-sparse keeps the top-k blocks of the mean-pooled estimate and attends to exactly those") {
  const Prompt p(64 * 8 - 10, 10);  // last block partial: its mean is over 54 tokens
  const int kb = 3, nb = 8, h = 1, kvh = h / (kMinfQHeads / kMinfKvHeads);
  const MInfHeadIndex head = minference_head_index_ref(p.q.data(), p.k.data(), p.n, kMinfQHeads, kMinfKvHeads, kMinfDim,
                                                       p.scale, h, {MInfPattern::kBlockSparse, kb, 0});
  std::vector<float> logits(nb * nb);
  bs_estimate_ref(p.q.data(), p.k.data(), p.n, kMinfQHeads, kMinfKvHeads, kMinfDim, p.scale, h, logits.data());
  auto pooled = [&](const std::vector<float>& x, int heads, int hh, int b) {
    std::vector<double> m(kMinfDim, 0.0);
    const int64_t t1 = std::min<int64_t>(p.n, (b + 1) * 64);
    for (int64_t t = b * 64; t < t1; ++t)
      for (int d = 0; d < kMinfDim; ++d) m[d] += x[(t * heads + hh) * kMinfDim + d] / static_cast<double>(t1 - b * 64);
    return m;
  };
  for (int i = 0; i < nb; ++i) {
    const std::vector<double> qi = pooled(p.q, kMinfQHeads, h, i);
    for (int j = 0; j < nb; ++j) {
      if (j > i) {
        CHECK(std::isinf(logits[i * nb + j]));
        continue;
      }
      const std::vector<double> kj = pooled(p.k, kMinfKvHeads, kvh, j);
      double dot = 0;
      for (int d = 0; d < kMinfDim; ++d) dot += qi[d] * kj[d];
      CHECK(logits[i * nb + j] == doctest::Approx(dot * p.scale).epsilon(1e-5));
    }
    const auto& ranges = head.rows[i].ranges;
    CHECK(static_cast<int>(ranges.size()) == std::min(kb, i + 1));
    for (auto [lo, hi] : ranges) {
      const int j = static_cast<int>(lo / kMInfBlock);
      CHECK(hi - lo == std::min<int64_t>(kMInfBlock, p.n - lo));
      for (int other = 0; other <= i; ++other) {
        const bool kept = std::any_of(ranges.begin(), ranges.end(), [&](auto r) { return r.first == other * kMInfBlock; });
        if (!kept) CHECK(logits[i * nb + j] >= logits[i * nb + other]);
      }
    }
  }
}

TEST_CASE("A-shape equals dense attention with the sink-plus-band mask") {
  const Prompt p(64 * 7 + 30, 11);
  const std::vector<MInfHeadPattern> patterns = {{MInfPattern::kAShape, 64, 128}, {MInfPattern::kAShape, 10, 100},
                                                 {MInfPattern::kAShape, 0, 1}, {MInfPattern::kAShape, 1000, 4096}};
  std::vector<MInfHeadIndex> heads;
  for (const auto& pat : patterns) heads.push_back({pat, {}});
  const std::vector<float> want = p.dense([&](int r, int c, int h) {
    return ashape_visible(patterns[h].a, patterns[h].b, r, c);
  });
  CHECK(relative_error(p.sparse(heads), want) < 1e-6);
}

TEST_CASE("per-head patterns in one launch equal each pattern computed alone") {
  const Prompt p(64 * 5, 12);
  const std::vector<MInfHeadPattern> patterns = {{MInfPattern::kAShape, 32, 64}, {MInfPattern::kVerticalSlash, 40, 20},
                                                 {MInfPattern::kBlockSparse, 2, 0}, {MInfPattern::kVerticalSlash, 10, 130}};
  std::vector<MInfHeadIndex> heads;
  for (int h = 0; h < kMinfQHeads; ++h) {
    heads.push_back(minference_head_index_ref(p.q.data(), p.k.data(), p.n, kMinfQHeads, kMinfKvHeads, kMinfDim, p.scale, h, patterns[h]));
  }
  const std::vector<float> mixed = p.sparse(heads);
  const std::vector<float> want = p.dense([&](int r, int c, int h) { return minference_visible(heads[h], r, c); });
  CHECK(relative_error(mixed, want) < 1e-6);
}

TEST_CASE("the MInference search space is the paper's Table 7") {
  CHECK(kMInfAShape.a == 1024);
  CHECK(kMInfAShape.b == 4096);
  CHECK(kMInfVerticalSlash[0].a == 30);
  CHECK(kMInfVerticalSlash[3].b == 200);
  CHECK(kMInfBlockSparse.a == 100);
}

TEST_CASE("the MInference plan gives every head disjoint index storage sized by its pattern") {
  const std::vector<MInfHeadPattern> patterns = {kMInfAShape, kMInfVerticalSlash[0], kMInfBlockSparse,
                                                 kMInfVerticalSlash[3], {MInfPattern::kVerticalSlash, 5000, 5000}};
  const int n = 64 * 40 + 3;
  const MInfPlan plan = plan_minference(patterns, n);
  CHECK(plan.nb == 41);
  CHECK(plan.vs_heads == std::vector<int32_t>{1, 3, 4});
  CHECK(plan.bs_heads == std::vector<int32_t>{2});
  CHECK(plan.heads[0].range_cap == 0);
  CHECK(plan.heads[1].range_cap == 2048);
  CHECK(plan.heads[1].col_cap == 30);
  CHECK(plan.heads[2].range_cap == 41);  // k_b = 100 > 41 blocks
  CHECK(plan.heads[4].range_cap == n);   // clamped to the prompt
  CHECK(plan.max_ks == n);
  CHECK(plan.max_kv == n);
  int64_t ranges = 0, cols = 0;
  for (const MInfHeadDesc& d : plan.heads) {
    CHECK(d.range_base == ranges);
    CHECK(d.col_base == cols);
    ranges += int64_t{d.range_cap} * plan.nb;
    cols += int64_t{d.col_cap} * plan.nb;
  }
  CHECK(plan.total_ranges == ranges);
  CHECK(plan.total_cols == cols);
}

}  // namespace
}  // namespace servesim::kernels::sparse
