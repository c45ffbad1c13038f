// Estimates and index building of the MInference CPU reference (see minference_ref.h).
#include "kernels/sparse/minference_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/sparse/sparse_ref_util.h"

namespace servesim::kernels::sparse {

void vs_estimate_ref(const float* q, const float* k, int64_t n, int num_q_heads,
                     int num_kv_heads, int head_dim, float scale, int head, float* vertical,
                     float* slash) {
  const int kvh = head / (num_q_heads / num_kv_heads);
  std::vector<double> vsum(n, 0.0), ssum(n, 0.0), logits(n);
  for (int64_t r = std::max<int64_t>(0, n - kMInfLastQ); r < n; ++r) {
    const float* qr = q + (r * num_q_heads + head) * head_dim;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c <= r; ++c) {
      logits[c] = scale * dot(qr, k + (c * num_kv_heads + kvh) * head_dim, head_dim);
      mx = std::max(mx, logits[c]);
    }
    double sum = 0;
    for (int64_t c = 0; c <= r; ++c) sum += std::exp(logits[c] - mx);
    for (int64_t c = 0; c <= r; ++c) {
      const double p = std::exp(logits[c] - mx) / sum;
      vsum[c] += p;
      ssum[r - c] += p;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    vertical[i] = static_cast<float>(vsum[i]);
    slash[i] = static_cast<float>(ssum[i]);
  }
}

VsLines vs_select_lines_ref(std::span<const float> vertical, std::span<const float> slash,
                            int k_v, int k_s, int forced_columns, int forced_slashes) {
  std::vector<float> v(vertical.begin(), vertical.end()), s(slash.begin(), slash.end());
  const float inf = std::numeric_limits<float>::infinity();
  for (int i = 0; i < std::min<int64_t>(forced_columns, v.size()); ++i) v[i] = inf;
  for (int i = 0; i < std::min<int64_t>(forced_slashes, s.size()); ++i) s[i] = inf;
  return {topk_indices(v, k_v), topk_indices(s, k_s)};
}

std::vector<RowBlockIndex> vs_build_index_ref(const VsLines& lines, int64_t n) {
  const int64_t blocks = (n + kMInfBlock - 1) / kMInfBlock;
  std::vector<RowBlockIndex> index(blocks);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t q0 = b * kMInfBlock, q1 = std::min(n, q0 + kMInfBlock);
    RowBlockIndex& row = index[b];
    // Largest offset first = ranges by ascending start.
    for (auto it = lines.slashes.rbegin(); it != lines.slashes.rend(); ++it) {
      const int64_t o = *it;
      if (q1 - o <= 0) continue;
      const int64_t lo = std::max<int64_t>(0, q0 - o), hi = q1 - o;
      if (!row.ranges.empty() && lo <= row.ranges.back().second) {
        row.ranges.back().second = std::max(row.ranges.back().second, hi);
      } else {
        row.ranges.emplace_back(lo, hi);
      }
    }
    size_t r = 0;
    for (int64_t c : lines.verticals) {
      if (c >= q1) break;
      while (r < row.ranges.size() && row.ranges[r].second <= c) ++r;
      if (r < row.ranges.size() && row.ranges[r].first <= c) continue;  // inside a range
      row.columns.push_back(c);
    }
  }
  return index;
}

std::vector<int64_t> vs_bruteforce_keys(const VsLines& lines, int64_t n, int64_t row_block) {
  const int64_t q0 = row_block * kMInfBlock, q1 = std::min(n, q0 + kMInfBlock);
  std::vector<int64_t> keys;
  for (int64_t c = 0; c < q1; ++c) {
    bool hit = std::find(lines.verticals.begin(), lines.verticals.end(), c) != lines.verticals.end();
    for (size_t i = 0; !hit && i < lines.slashes.size(); ++i) {
      const int64_t o = lines.slashes[i];
      hit = q0 - o <= c && c < q1 - o;
    }
    if (hit) keys.push_back(c);
  }
  return keys;
}

void bs_estimate_ref(const float* q, const float* k, int64_t n, int num_q_heads,
                     int num_kv_heads, int head_dim, float scale, int head, float* logits) {
  const int kvh = head / (num_q_heads / num_kv_heads);
  const int64_t nb = (n + kMInfBlock - 1) / kMInfBlock;
  std::vector<double> qp(nb * head_dim, 0.0), kp(nb * head_dim, 0.0);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t t0 = b * kMInfBlock, t1 = std::min(n, t0 + kMInfBlock);
    for (int64_t t = t0; t < t1; ++t) {
      for (int i = 0; i < head_dim; ++i) {
        qp[b * head_dim + i] += q[(t * num_q_heads + head) * head_dim + i];
        kp[b * head_dim + i] += k[(t * num_kv_heads + kvh) * head_dim + i];
      }
    }
    for (int i = 0; i < head_dim; ++i) {
      qp[b * head_dim + i] /= static_cast<double>(t1 - t0);
      kp[b * head_dim + i] /= static_cast<double>(t1 - t0);
    }
  }
  for (int64_t i = 0; i < nb; ++i) {
    for (int64_t j = 0; j < nb; ++j) {
      double s = 0;
      for (int d = 0; d < head_dim; ++d) s += qp[i * head_dim + d] * kp[j * head_dim + d];
      logits[i * nb + j] = j <= i ? static_cast<float>(s * scale) : -std::numeric_limits<float>::infinity();
    }
  }
}

std::vector<RowBlockIndex> bs_build_index_ref(std::span<const float> logits, int64_t n, int k_b) {
  const int64_t nb = (n + kMInfBlock - 1) / kMInfBlock;
  std::vector<RowBlockIndex> index(nb);
  for (int64_t i = 0; i < nb; ++i) {
    for (int32_t j : topk_indices(logits.subspan(i * nb, i + 1), k_b)) {
      index[i].ranges.emplace_back(int64_t{j} * kMInfBlock, std::min(n, (int64_t{j} + 1) * kMInfBlock));
    }
  }
  return index;
}

MInfHeadIndex minference_head_index_ref(const float* q, const float* k, int64_t n,
                                        int num_q_heads, int num_kv_heads, int head_dim,
                                        float scale, int head, MInfHeadPattern pattern) {
  MInfHeadIndex out{pattern, {}};
  if (pattern.type == MInfPattern::kVerticalSlash) {
    std::vector<float> vertical(n), slash(n);
    vs_estimate_ref(q, k, n, num_q_heads, num_kv_heads, head_dim, scale, head, vertical.data(),
                    slash.data());
    out.rows = vs_build_index_ref(vs_select_lines_ref(vertical, slash, pattern.a, pattern.b), n);
  } else if (pattern.type == MInfPattern::kBlockSparse) {
    const int64_t nb = (n + kMInfBlock - 1) / kMInfBlock;
    std::vector<float> logits(nb * nb);
    bs_estimate_ref(q, k, n, num_q_heads, num_kv_heads, head_dim, scale, head, logits.data());
    out.rows = bs_build_index_ref(logits, n, pattern.a);
  }
  return out;
}

}  // namespace servesim::kernels::sparse
