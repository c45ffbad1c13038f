#include "kernels/common/attention_ref.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "kernels/common/host_util.h"

using namespace servesim::kernels;

namespace {

// Textbook attention for one head: explicit score vector, softmax, weighted sum.
std::vector<double> textbook_attention(const float* q, const std::vector<const float*>& keys,
                                       const std::vector<const float*>& values, int d, double scale) {
  std::vector<double> s;
  for (const float* k : keys) {
    double dot = 0;
    for (int x = 0; x < d; ++x) dot += double(q[x]) * k[x];
    s.push_back(dot * scale);
  }
  double mx = -1e300, sum = 0;
  for (double v : s) mx = std::max(mx, v);
  for (double& v : s) sum += (v = std::exp(v - mx));
  std::vector<double> o(d, 0.0);
  for (size_t j = 0; j < s.size(); ++j)
    for (int x = 0; x < d; ++x) o[x] += s[j] / sum * values[j][x];
  return o;
}

struct Problem {
  int nq = 5, nk = 9, hq = 4, hkv = 2, d = 16;
  std::vector<float> q, k, v;
  explicit Problem(uint64_t seed) {
    q = random_uniform(size_t(nq) * hq * d, seed);
    k = random_uniform(size_t(nk) * hkv * d, seed + 1);
    v = random_uniform(size_t(nk) * hkv * d, seed + 2);
  }
  DenseAttentionArgs args() const {
    return {q.data(), k.data(), v.data(), nq, nk, hq, hkv, d, 1.0f / std::sqrt(float(d))};
  }
};

}  // namespace

TEST_CASE("dense reference attention equals textbook softmax attention under a causal mask") {
  Problem p(11);
  std::vector<float> out(size_t(p.nq) * p.hq * p.d), lse(size_t(p.nq) * p.hq);
  const int offset = p.nk - p.nq;
  dense_attention_ref(p.args(), causal_mask(offset), out.data(), lse.data());
  for (int i = 0; i < p.nq; ++i) {
    for (int h = 0; h < p.hq; ++h) {
      const int kvh = h / (p.hq / p.hkv);
      std::vector<const float*> keys, values;
      for (int j = 0; j <= offset + i; ++j) {
        keys.push_back(&p.k[(size_t(j) * p.hkv + kvh) * p.d]);
        values.push_back(&p.v[(size_t(j) * p.hkv + kvh) * p.d]);
      }
      const auto expect = textbook_attention(&p.q[(size_t(i) * p.hq + h) * p.d], keys, values, p.d,
                                             1.0 / std::sqrt(double(p.d)));
      for (int x = 0; x < p.d; ++x) CHECK(out[(size_t(i) * p.hq + h) * p.d + x] == doctest::Approx(expect[x]).epsilon(1e-5));
    }
  }
}

TEST_CASE("a query with every key masked gets a zero output and an lse of minus infinity") {
  Problem p(12);
  std::vector<float> out(size_t(p.nq) * p.hq * p.d, 7.0f), lse(size_t(p.nq) * p.hq);
  dense_attention_ref(p.args(), [](int qi, int, int) { return qi != 2; }, out.data(), lse.data());
  for (int h = 0; h < p.hq; ++h) {
    CHECK(std::isinf(lse[2 * p.hq + h]));
    for (int x = 0; x < p.d; ++x) CHECK(out[(2 * size_t(p.hq) + h) * p.d + x] == 0.0f);
  }
}

TEST_CASE("GQA attention equals MHA attention with each KV head repeated for its group") {
  Problem p(13);
  const int group = p.hq / p.hkv;
  std::vector<float> k_rep, v_rep;
  for (int j = 0; j < p.nk; ++j)
    for (int h = 0; h < p.hq; ++h)
      for (int x = 0; x < p.d; ++x) {
        k_rep.push_back(p.k[(size_t(j) * p.hkv + h / group) * p.d + x]);
        v_rep.push_back(p.v[(size_t(j) * p.hkv + h / group) * p.d + x]);
      }
  DenseAttentionArgs mha = p.args();
  mha.k = k_rep.data();
  mha.v = v_rep.data();
  mha.num_kv_heads = p.hq;
  std::vector<float> a(size_t(p.nq) * p.hq * p.d), b(a.size()), la(size_t(p.nq) * p.hq), lb(la.size());
  dense_attention_ref(p.args(), causal_mask(4), a.data(), la.data());
  dense_attention_ref(mha, causal_mask(4), b.data(), lb.data());
  CHECK(a == b);
  CHECK(la == lb);
}

TEST_CASE("merging partial attentions over disjoint key sets equals attention over their union") {
  Problem p(14);
  p.nq = 1;
  std::vector<float> full(size_t(p.hq) * p.d), full_lse(p.hq);
  dense_attention_ref(p.args(), full_mask(), full.data(), full_lse.data());
  // Split the keys into three disjoint (non-contiguous) sets by j % 3.
  std::vector<std::vector<AttentionPartial>> parts(p.hq);
  for (int r = 0; r < 3; ++r) {
    std::vector<float> o(size_t(p.hq) * p.d), lse(p.hq);
    dense_attention_ref(p.args(), [r](int, int kj, int) { return kj % 3 == r; }, o.data(), lse.data());
    for (int h = 0; h < p.hq; ++h)
      parts[h].push_back({std::vector<float>(o.begin() + h * p.d, o.begin() + (h + 1) * p.d), lse[h]});
  }
  for (int h = 0; h < p.hq; ++h) {
    parts[h].push_back({std::vector<float>(p.d, 123.0f), -std::numeric_limits<float>::infinity()});  // empty split
    const AttentionPartial m = merge_attention_partials(parts[h]);
    CHECK(m.lse == doctest::Approx(full_lse[h]).epsilon(1e-6));
    for (int x = 0; x < p.d; ++x) CHECK(m.o[x] == doctest::Approx(full[h * p.d + x]).epsilon(1e-5));
  }
}

TEST_CASE("online softmax over tiles equals the exact softmax for any tile size") {
  const int n = 37, d = 8;
  auto s = random_uniform(n, 5, -4.0f, 4.0f, false);
  auto v = random_uniform(size_t(n) * d, 6);
  double mx = -1e300, sum = 0;
  for (float x : s) mx = std::max(mx, double(x));
  std::vector<double> o(d, 0.0);
  for (int j = 0; j < n; ++j) {
    const double p = std::exp(s[j] - mx);
    sum += p;
    for (int x = 0; x < d; ++x) o[x] += p * v[size_t(j) * d + x];
  }
  for (int tile : {1, 5, 16, 64}) {
    OnlineSoftmax st(d);
    for (int t0 = 0; t0 < n; t0 += tile) st.add_tile(&s[t0], std::min(tile, n - t0), &v[size_t(t0) * d], d);
    const AttentionPartial p = st.to_partial();
    CHECK(p.lse == doctest::Approx(mx + std::log(sum)).epsilon(1e-6));
    for (int x = 0; x < d; ++x) CHECK(p.o[x] == doctest::Approx(o[x] / sum).epsilon(1e-5));
  }
}
