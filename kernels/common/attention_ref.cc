#include "kernels/common/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim::kernels {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

AttentionMask full_mask() {
  return [](int, int, int) { return true; };
}

AttentionMask causal_mask(int q_offset) {
  return [q_offset](int qi, int kj, int) { return kj <= q_offset + qi; };
}

void dense_attention_ref(const DenseAttentionArgs& a, const AttentionMask& mask, float* out, float* lse) {
  const int group = a.num_q_heads / a.num_kv_heads;
  const int d = a.head_dim;
  std::vector<double> scores(a.num_k);
  std::vector<double> acc(d);
  for (int i = 0; i < a.num_q; ++i) {
    for (int h = 0; h < a.num_q_heads; ++h) {
      const int kvh = h / group;
      const float* q = a.q + (static_cast<size_t>(i) * a.num_q_heads + h) * d;
      double m = -std::numeric_limits<double>::infinity();
      for (int j = 0; j < a.num_k; ++j) {
        if (!mask(i, j, h)) {
          scores[j] = -std::numeric_limits<double>::infinity();
          continue;
        }
        const float* k = a.k + (static_cast<size_t>(j) * a.num_kv_heads + kvh) * d;
        double s = 0;
        for (int x = 0; x < d; ++x) s += static_cast<double>(q[x]) * k[x];
        scores[j] = s * a.scale;
        m = std::max(m, scores[j]);
      }
      float* o = out + (static_cast<size_t>(i) * a.num_q_heads + h) * d;
      float* row_lse = lse ? lse + static_cast<size_t>(i) * a.num_q_heads + h : nullptr;
      if (m == -std::numeric_limits<double>::infinity()) {
        std::fill(o, o + d, 0.0f);
        if (row_lse) *row_lse = kNegInf;
        continue;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double l = 0;
      for (int j = 0; j < a.num_k; ++j) {
        if (scores[j] == -std::numeric_limits<double>::infinity()) continue;
        const double p = std::exp(scores[j] - m);
        l += p;
        const float* v = a.v + (static_cast<size_t>(j) * a.num_kv_heads + kvh) * d;
        for (int x = 0; x < d; ++x) acc[x] += p * v[x];
      }
      for (int x = 0; x < d; ++x) o[x] = static_cast<float>(acc[x] / l);
      if (row_lse) *row_lse = static_cast<float>(m + std::log(l));
    }
  }
}

AttentionPartial merge_attention_partials(const std::vector<AttentionPartial>& parts) {
  AttentionPartial merged;
  const size_t d = parts.empty() ? 0 : parts.front().o.size();
  merged.o.assign(d, 0.0f);
  double m = -std::numeric_limits<double>::infinity();
  for (const auto& p : parts) m = std::max(m, static_cast<double>(p.lse));
  if (m == -std::numeric_limits<double>::infinity()) {
    merged.lse = kNegInf;
    return merged;
  }
  double total = 0;
  std::vector<double> acc(d, 0.0);
  for (const auto& p : parts) {
    if (p.lse == kNegInf) continue;
    const double w = std::exp(static_cast<double>(p.lse) - m);
    total += w;
    for (size_t x = 0; x < d; ++x) acc[x] += w * p.o[x];
  }
  for (size_t x = 0; x < d; ++x) merged.o[x] = static_cast<float>(acc[x] / total);
  merged.lse = static_cast<float>(m + std::log(total));
  return merged;
}

void OnlineSoftmax::add_tile(const float* scores, int count, const float* v, int v_stride) {
  float tile_max = kNegInf;
  for (int j = 0; j < count; ++j) tile_max = std::max(tile_max, scores[j]);
  const float m_new = std::max(m_, tile_max);
  if (m_new == kNegInf) return;  // every key so far masked: nothing to add
  // exp(-inf - m_new) = 0 handles the first tile; m_new is finite here.
  const float correction = std::exp(m_ - m_new);
  l_ *= correction;
  for (auto& x : acc_) x *= correction;
  for (int j = 0; j < count; ++j) {
    if (scores[j] == kNegInf) continue;
    const float p = std::exp(scores[j] - m_new);
    l_ += p;
    const float* row = v + static_cast<size_t>(j) * v_stride;
    for (size_t x = 0; x < acc_.size(); ++x) acc_[x] += p * row[x];
  }
  m_ = m_new;
}

void OnlineSoftmax::merge(const OnlineSoftmax& other) {
  const float m_new = std::max(m_, other.m_);
  if (m_new == kNegInf) return;
  const float a = std::exp(m_ - m_new), b = std::exp(other.m_ - m_new);
  for (size_t x = 0; x < acc_.size(); ++x) acc_[x] = acc_[x] * a + other.acc_[x] * b;
  l_ = l_ * a + other.l_ * b;
  m_ = m_new;
}

AttentionPartial OnlineSoftmax::to_partial() const {
  AttentionPartial p;
  p.o.assign(acc_.size(), 0.0f);
  if (l_ == 0.0f) {
    p.lse = kNegInf;
    return p;
  }
  for (size_t x = 0; x < acc_.size(); ++x) p.o[x] = acc_[x] / l_;
  p.lse = m_ + std::log(l_);
  return p;
}

}  // namespace servesim::kernels
