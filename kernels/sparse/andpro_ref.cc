#include "kernels/sparse/andpro_ref.h"
#include "kernels/sparse/sparse_ref_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim::kernels::sparse {

void andpro_token_scores_ref(const float* q_win, const float* y_win, const float* lse_win,
                             const KvCacheF32& kv, std::span<const int32_t> page_table,
                             int64_t n, int window, int num_q_heads, float scale,
                             float* scores) {
  const int d = kv.head_dim;
  const int group = num_q_heads / kv.num_kv_heads;
  const int64_t cand = n - window;
  for (int g = 0; g < kv.num_kv_heads; ++g) {
    for (int64_t i = 0; i < cand; ++i) {
      const int32_t phys = page_table[i / kPageSize];
      const float* ki = kv.k + kv.offset(phys, g, static_cast<int>(i % kPageSize));
      const float* vi = kv.v + kv.offset(phys, g, static_cast<int>(i % kPageSize));
      double s = 0;
      for (int h = g * group; h < (g + 1) * group; ++h) {
        for (int t = 0; t < window; ++t) {
          const int64_t row = static_cast<int64_t>(t) * num_q_heads + h;
          const double a = std::exp(scale * dot(q_win + row * d, ki, d) - lse_win[row]);
          s += a * dot(y_win + row * d, vi, d);
        }
      }
      scores[g * cand + i] = static_cast<float>(s);
    }
  }
}

void andpro_naive_scores_ref(const float* q, const float* k, const float* v, int64_t n,
                             int window, int num_q_heads, int num_kv_heads, int head_dim,
                             float scale, float* scores) {
  const int d = head_dim;
  const int group = num_q_heads / num_kv_heads;
  const int64_t cand = n - window;
  std::vector<double> s(num_kv_heads * cand, 0.0), a(n), y(d);
  for (int h = 0; h < num_q_heads; ++h) {
    const int g = h / group;
    for (int64_t t = cand; t < n; ++t) {
      // a^t: softmax over j <= t; y^t = sum_j a_j^t v_j.
      const float* qt = q + (t * num_q_heads + h) * d;
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j <= t; ++j) {
        a[j] = scale * dot(qt, k + (j * num_kv_heads + g) * d, d);
        mx = std::max(mx, a[j]);
      }
      for (int64_t j = 0; j <= t; ++j) sum += (a[j] = std::exp(a[j] - mx));
      std::fill(y.begin(), y.end(), 0.0);
      for (int64_t j = 0; j <= t; ++j) {
        a[j] /= sum;
        for (int i = 0; i < d; ++i) y[i] += a[j] * v[(j * num_kv_heads + g) * d + i];
      }
      for (int64_t i = 0; i < cand; ++i) {
        double yv = 0;
        for (int c = 0; c < d; ++c) yv += y[c] * v[(i * num_kv_heads + g) * d + c];
        s[g * cand + i] += a[i] * yv;
      }
    }
  }
  for (size_t i = 0; i < s.size(); ++i) scores[i] = static_cast<float>(s[i]);
}

std::vector<float> andpro_merge_blocks_ref(std::span<const float> token_scores, int num_kv_heads,
                                           int64_t n, const AndproParams& p) {
  const int64_t cand = n - p.window;
  const int64_t blocks = andpro_block_region(n, p) / p.block;
  std::vector<float> out(num_kv_heads * blocks);
  for (int g = 0; g < num_kv_heads; ++g) {
    for (int64_t b = 0; b < blocks; ++b) {
      double s = 0;
      for (int j = 0; j < p.block; ++j) s += token_scores[g * cand + b * p.block + j];
      out[g * blocks + b] = static_cast<float>(s);
    }
  }
  return out;
}

std::vector<int32_t> andpro_select_blocks_ref(std::span<const float> block_scores,
                                              int num_kv_heads, int64_t n,
                                              const AndproParams& p) {
  const int64_t blocks = andpro_block_region(n, p) / p.block;
  const int64_t keep = andpro_kept_blocks(n, p);
  std::vector<int32_t> out;
  std::vector<float> row;
  for (int g = 0; g < num_kv_heads; ++g) {
    row.assign(block_scores.begin() + g * blocks, block_scores.begin() + (g + 1) * blocks);
    if (p.keep_first_block && !row.empty()) row[0] = std::numeric_limits<float>::infinity();
    const std::vector<int32_t> sel = topk_indices(row, static_cast<int>(keep));
    out.insert(out.end(), sel.begin(), sel.end());
  }
  return out;
}

void andpro_compact_ref(const KvCacheF32& src, std::span<const int32_t> src_page_table,
                        std::span<const int32_t> kept_blocks, int64_t n, const AndproParams& p,
                        std::span<const int32_t> dst_page_table, float* dst_k, float* dst_v) {
  const int64_t kept = andpro_kept_tokens(n, p);
  const int64_t per_head = andpro_kept_blocks(n, p);
  const KvCacheF32 dst{dst_k, dst_v, src.num_kv_heads, src.head_dim};
  for (int g = 0; g < src.num_kv_heads; ++g) {
    const std::span<const int32_t> blocks = kept_blocks.subspan(g * per_head, per_head);
    for (int64_t j = 0; j < kept; ++j) {
      const int64_t pos = andpro_source_position(blocks, j, n, p);
      const int64_t from = src.offset(src_page_table[pos / kPageSize], g, static_cast<int>(pos % kPageSize));
      const int64_t to = dst.offset(dst_page_table[j / kPageSize], g, static_cast<int>(j % kPageSize));
      std::copy_n(src.k + from, src.head_dim, dst_k + to);
      std::copy_n(src.v + from, src.head_dim, dst_v + to);
    }
  }
}

std::vector<int32_t> andpro_select_layer_ref(std::span<const float> block_scores, int num_kv_heads,
                                             int64_t n, const AndproParams& p) {
  const int64_t blocks = andpro_block_region(n, p) / p.block;
  std::vector<float> all(block_scores.begin(), block_scores.begin() + num_kv_heads * blocks);
  if (p.keep_first_block && blocks > 0) {
    for (int g = 0; g < num_kv_heads; ++g) all[g * blocks] = std::numeric_limits<float>::infinity();
  }
  return topk_indices(all, static_cast<int>(andpro_layer_kept_blocks(n, p, num_kv_heads)));
}

AndproRagged andpro_ragged(std::span<const int32_t> kept_flat, int num_kv_heads, int64_t n,
                           const AndproParams& p) {
  const int64_t blocks = andpro_block_region(n, p) / p.block;
  const int64_t tail = n - andpro_block_region(n, p);
  AndproRagged r;
  r.begin.assign(num_kv_heads + 1, 0);
  r.tokens.assign(num_kv_heads, 0);
  r.slice.assign(num_kv_heads + 1, 0);
  for (int g = 0; g <= num_kv_heads; ++g) {
    r.begin[g] = std::lower_bound(kept_flat.begin(), kept_flat.end(), static_cast<int32_t>(g * blocks)) -
                 kept_flat.begin();
  }
  r.begin[num_kv_heads] = static_cast<int64_t>(kept_flat.size());
  for (int g = 0; g < num_kv_heads; ++g) {
    r.tokens[g] = (r.begin[g + 1] - r.begin[g]) * p.block + tail;
    r.slice[g + 1] = r.slice[g] + pages_for_tokens(static_cast<int>(r.tokens[g]));
  }
  r.pages = (r.slice[num_kv_heads] + num_kv_heads - 1) / num_kv_heads;
  return r;
}

int64_t andpro_ragged_pages_bound(int64_t n, const AndproParams& p) {
  const int64_t avg = andpro_kept_tokens(n, p);
  const int64_t region = andpro_block_region(n, p);
  if (andpro_kept_blocks(n, p) == 0) return pages_for_tokens(static_cast<int>(avg));
  auto pad = [](int64_t x) { return (kPageSize - x % kPageSize) % kPageSize; };
  int64_t worst = 0;
  for (int64_t m = 0; m <= std::min<int64_t>(kPageSize - 1, region / p.block); ++m) {
    worst = std::max(worst, pad(m * p.block + (n - region)));
  }
  return (avg + worst + kPageSize - 1) / kPageSize;
}

void andpro_compact_ragged_ref(const KvCacheF32& src, std::span<const int32_t> src_page_table,
                               std::span<const int32_t> kept_flat, int64_t n, const AndproParams& p,
                               std::span<const int32_t> dst_page_table, float* dst_k, float* dst_v) {
  const int G = src.num_kv_heads;
  const AndproRagged r = andpro_ragged(kept_flat, G, n, p);
  const KvCacheF32 dst{dst_k, dst_v, G, src.head_dim};
  for (int g = 0; g < G; ++g) {
    for (int64_t j = 0; j < r.tokens[g]; ++j) {
      const int64_t pos = andpro_ragged_source_position(kept_flat, r, g, j, n, p);
      const int64_t s = r.slice[g] + j / kPageSize;
      const int64_t from = src.offset(src_page_table[pos / kPageSize], g, static_cast<int>(pos % kPageSize));
      const int64_t to = dst.offset(dst_page_table[s / G], static_cast<int>(s % G), static_cast<int>(j % kPageSize));
      std::copy_n(src.k + from, src.head_dim, dst_k + to);
      std::copy_n(src.v + from, src.head_dim, dst_v + to);
    }
  }
}

}  // namespace servesim::kernels::sparse
