// Sparse prefill attention of the MInference CPU reference (see minference_ref.h): the
// same traversal as the GPU kernel (ranges in 64-key steps, then columns in groups of
// 64, online softmax), so the property tests exercise the kernel's algorithm.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/sparse/minference_ref.h"

namespace servesim::kernels::sparse {

namespace {

// A-shape keys of a row block: the sink [0, sink) and the band reachable from its rows.
RowBlockIndex ashape_row_block(int64_t sink, int64_t window, int64_t q0, int64_t q1) {
  RowBlockIndex row;
  const int64_t sink_end = std::min(sink, q1);
  if (sink_end > 0) row.ranges.emplace_back(0, sink_end);
  const int64_t band_lo = std::max(sink_end, q0 - window + 1);
  if (band_lo < q1) row.ranges.emplace_back(band_lo, q1);
  return row;
}

struct OnlineSoftmax {
  double m = -std::numeric_limits<double>::infinity();
  double l = 0;
  std::vector<double> acc;

  void add_chunk(const std::vector<double>& logits, const std::vector<const float*>& values,
                 int d) {
    double mx = m;
    for (double x : logits) mx = std::max(mx, x);
    if (mx == -std::numeric_limits<double>::infinity()) return;  // everything masked so far
    const double alpha = std::exp(m - mx);
    l *= alpha;
    for (double& a : acc) a *= alpha;
    for (size_t j = 0; j < logits.size(); ++j) {
      if (logits[j] == -std::numeric_limits<double>::infinity()) continue;
      const double p = std::exp(logits[j] - mx);
      l += p;
      for (int i = 0; i < d; ++i) acc[i] += p * values[j][i];
    }
    m = mx;
  }
};

}  // namespace

bool minference_visible(const MInfHeadIndex& head, int64_t row, int64_t col) {
  if (col > row) return false;
  if (head.pattern.type == MInfPattern::kAShape) {
    return ashape_visible(head.pattern.a, head.pattern.b, row, col);
  }
  const RowBlockIndex& rb = head.rows[row / kMInfBlock];
  for (const auto& [lo, hi] : rb.ranges) {
    if (lo <= col && col < hi) return true;
  }
  return std::binary_search(rb.columns.begin(), rb.columns.end(), col);
}

void minference_attention_ref(const float* q, const float* k, const float* v, int64_t n,
                              int num_q_heads, int num_kv_heads, int head_dim, float scale,
                              std::span<const MInfHeadIndex> heads, float* out, float* lse) {
  const int group = num_q_heads / num_kv_heads;
  const int d = head_dim;
  std::vector<double> logits;
  std::vector<const float*> values;
  for (int h = 0; h < num_q_heads; ++h) {
    const MInfHeadIndex& head = heads[h];
    const bool ashape = head.pattern.type == MInfPattern::kAShape;
    const int kvh = h / group;
    for (int64_t r = 0; r < n; ++r) {
      const int64_t rb = r / kMInfBlock;
      const int64_t q0 = rb * kMInfBlock, q1 = std::min(n, q0 + kMInfBlock);
      const RowBlockIndex row =
          ashape ? ashape_row_block(head.pattern.a, head.pattern.b, q0, q1) : head.rows[rb];
      const float* qr = q + (r * num_q_heads + h) * d;
      OnlineSoftmax sm;
      sm.acc.assign(d, 0.0);
      auto visit = [&](std::span<const int64_t> cols) {
        logits.clear();
        values.clear();
        for (int64_t c : cols) {
          const bool ok = c >= 0 && c < n && c <= r &&
                          (!ashape || ashape_visible(head.pattern.a, head.pattern.b, r, c));
          double s = -std::numeric_limits<double>::infinity();
          if (ok) {
            const float* kc = k + (c * num_kv_heads + kvh) * d;
            s = 0;
            for (int i = 0; i < d; ++i) s += static_cast<double>(qr[i]) * kc[i];
            s *= scale;
          }
          logits.push_back(s);
          values.push_back(ok ? v + (c * num_kv_heads + kvh) * d : nullptr);
        }
        sm.add_chunk(logits, values, d);
      };
      std::vector<int64_t> chunk;
      for (const auto& [lo, hi] : row.ranges) {
        for (int64_t s = lo; s < hi; s += kMInfBlock) {
          chunk.clear();
          for (int64_t c = s; c < std::min(hi, s + kMInfBlock); ++c) chunk.push_back(c);
          visit(chunk);
        }
      }
      for (size_t j = 0; j < row.columns.size(); j += kMInfBlock) {
        const size_t e = std::min(row.columns.size(), j + kMInfBlock);
        visit(std::span<const int64_t>(row.columns.data() + j, e - j));
      }
      float* o = out + (r * num_q_heads + h) * d;
      for (int i = 0; i < d; ++i) o[i] = sm.l > 0 ? static_cast<float>(sm.acc[i] / sm.l) : 0.0f;
      if (lse) {
        lse[r * num_q_heads + h] = sm.l > 0 ? static_cast<float>(sm.m + std::log(sm.l))
                                            : -std::numeric_limits<float>::infinity();
      }
    }
  }
}

}  // namespace servesim::kernels::sparse
