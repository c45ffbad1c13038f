#include "kernels/sparse/sparse_ref_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace servesim::kernels::sparse {

std::vector<int32_t> topk_indices(std::span<const float> scores, int k) {
  const int64_t n = static_cast<int64_t>(scores.size());
  const int64_t keep = std::clamp<int64_t>(k, 0, n);
  std::vector<int32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  auto key = [&](int32_t i) {
    const float s = scores[i];
    return std::isnan(s) ? -std::numeric_limits<float>::infinity() : s;
  };
  // Strict weak order: larger score first, then smaller index.
  auto before = [&](int32_t a, int32_t b) {
    const float ka = key(a), kb = key(b);
    return ka != kb ? ka > kb : a < b;
  };
  std::nth_element(idx.begin(), idx.begin() + keep, idx.end(), before);
  idx.resize(keep);
  std::sort(idx.begin(), idx.end());
  return idx;
}

void paged_decode_subset_ref(const float* q, const KvCacheF32& kv,
                             std::span<const int32_t> page_table, int64_t context_len,
                             int num_q_heads, float scale, bool per_query_head,
                             const std::function<std::span<const int32_t>(int row)>& pages_for,
                             float* out) {
  const int d = kv.head_dim;
  const int group = num_q_heads / kv.num_kv_heads;
  std::vector<double> acc(d);
  std::vector<double> logits;
  for (int h = 0; h < num_q_heads; ++h) {
    const int kvh = h / group;
    const std::span<const int32_t> pages = pages_for(per_query_head ? h : kvh);
    const float* qv = q + static_cast<int64_t>(h) * d;
    logits.clear();
    double mx = -std::numeric_limits<double>::infinity();
    for (int32_t p : pages) {
      for (int s = 0; s < kPageSize; ++s) {
        const int64_t pos = static_cast<int64_t>(p) * kPageSize + s;
        if (pos >= context_len) break;
        const float* kr = kv.k + kv.offset(page_table[p], kvh, s);
        double dot = 0;
        for (int i = 0; i < d; ++i) dot += static_cast<double>(qv[i]) * kr[i];
        logits.push_back(dot * scale);
        mx = std::max(mx, logits.back());
      }
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    double sum = 0;
    size_t j = 0;
    for (int32_t p : pages) {
      for (int s = 0; s < kPageSize; ++s) {
        const int64_t pos = static_cast<int64_t>(p) * kPageSize + s;
        if (pos >= context_len) break;
        const double w = std::exp(logits[j++] - mx);
        sum += w;
        const float* vr = kv.v + kv.offset(page_table[p], kvh, s);
        for (int i = 0; i < d; ++i) acc[i] += w * vr[i];
      }
    }
    float* o = out + static_cast<int64_t>(h) * d;
    for (int i = 0; i < d; ++i) o[i] = sum > 0 ? static_cast<float>(acc[i] / sum) : 0.0f;
  }
}

}  // namespace servesim::kernels::sparse
