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

}  // namespace servesim::kernels::sparse
