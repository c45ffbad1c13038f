// Replay weights and the CPU reference forward pass; see tiny_model.h.
#include "kernels/replay/tiny_model.h"

#include <cmath>
#include <stdexcept>

#include "kernels/common/attention_ref.h"
#include "kernels/common/host_util.h"
#include "kernels/gemm/gemm_ref.h"

namespace servesim::kernels {
namespace {

constexpr double kRopeTheta = 500000.0;
constexpr double kEps = 1e-5;

std::vector<float> uniform(size_t n, uint64_t seed, uint64_t stream, double scale, double center = 0) {
  SplitMix64 r(derive_seed(seed, stream));
  std::vector<float> v(n);
  for (auto& x : v) x = round_to_bf16(static_cast<float>(center + r.uniform(-scale, scale)));
  return v;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void round_all(std::vector<float>* v) {
  for (auto& x : *v) x = round_to_bf16(x);
}

}  // namespace

ReplayWeights make_replay_weights(const ReplayModel& m, uint64_t seed) {
  ReplayWeights w;
  w.model = m;
  const size_t h = static_cast<size_t>(m.hidden), d = static_cast<size_t>(m.head_dim);
  const size_t qkv_n = static_cast<size_t>(m.q_heads + 2 * m.kv_heads) * d, inter = static_cast<size_t>(m.intermediate);
  const size_t vocab = static_cast<size_t>(m.vocab);
  w.embedding = uniform(vocab * h, seed, 1, 1.0);
  for (int64_t l = 0; l < m.layers; ++l) {
    const uint64_t s = 100 + 10 * static_cast<uint64_t>(l);
    ReplayLayerWeights L;
    L.attn_norm = uniform(h, seed, s + 0, 0.1, 1.0);
    L.qkv = uniform(qkv_n * h, seed, s + 1, 1.0 / std::sqrt(static_cast<double>(h)));
    L.o = uniform(h * static_cast<size_t>(m.q_heads) * d, seed, s + 2, 1.0 / std::sqrt(static_cast<double>(m.q_heads * m.head_dim)));
    L.mlp_norm = uniform(h, seed, s + 3, 0.1, 1.0);
    L.gate_up = uniform(2 * inter * h, seed, s + 4, 1.0 / std::sqrt(static_cast<double>(h)));
    L.down = uniform(h * inter, seed, s + 5, 1.0 / std::sqrt(static_cast<double>(inter)));
    w.layers.push_back(std::move(L));
  }
  w.final_norm = uniform(h, seed, 2, 0.1, 1.0);
  w.lm_head = uniform(vocab * h, seed, 3, 1.0 / std::sqrt(static_cast<double>(h)));
  return w;
}

float context_kv(uint64_t seed, int layer, int64_t seq, int64_t pos, int head, int dim, bool is_v) {
  uint64_t x = mix(seed ^ 0x6b76ull);
  x = mix(x ^ static_cast<uint64_t>(layer));
  x = mix(x ^ static_cast<uint64_t>(seq));
  x = mix(x ^ static_cast<uint64_t>(pos));
  x = mix(x ^ (static_cast<uint64_t>(head) << 20 | static_cast<uint64_t>(dim) << 1 | (is_v ? 1u : 0u)));
  const double u = static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
  return round_to_bf16(static_cast<float>(2 * u - 1));
}

int32_t replay_token(uint64_t seed, int64_t seq, int64_t pos, int64_t vocab) {
  const uint64_t x = mix(mix(seed ^ 0x746f6bull) ^ static_cast<uint64_t>(seq) << 32 ^ static_cast<uint64_t>(pos));
  return static_cast<int32_t>(x % static_cast<uint64_t>(vocab));
}

void rms_norm_ref(const std::vector<float>& x, const std::vector<float>& w, int64_t rows, int64_t h, std::vector<float>* y) {
  y->assign(x.size(), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < h; ++i) ss += static_cast<double>(x[r * h + i]) * x[r * h + i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(h) + kEps);
    for (int64_t i = 0; i < h; ++i) (*y)[r * h + i] = round_to_bf16(static_cast<float>(x[r * h + i] * inv * w[i]));
  }
}

void rope_ref(float* row, int heads, int head_dim, int64_t pos) {
  const int half = head_dim / 2;
  for (int hd = 0; hd < heads; ++hd) {
    float* x = row + static_cast<size_t>(hd) * head_dim;
    for (int i = 0; i < half; ++i) {
      const double freq = std::pow(kRopeTheta, -2.0 * i / head_dim);
      const double a = static_cast<double>(pos) * freq;
      const double x1 = x[i], x2 = x[i + half];
      x[i] = round_to_bf16(static_cast<float>(x1 * std::cos(a) - x2 * std::sin(a)));
      x[i + half] = round_to_bf16(static_cast<float>(x2 * std::cos(a) + x1 * std::sin(a)));
    }
  }
}

float silu_ref(float x) { return static_cast<float>(x / (1.0 + std::exp(-static_cast<double>(x)))); }

int64_t ReplayReference::length(int64_t seq) const {
  auto it = kv_.find(seq);
  return it == kv_.end() ? 0 : it->second.len;
}

void ReplayReference::add_random_context(int64_t seq, int64_t len) {
  const ReplayModel& m = w_.model;
  Kv& kv = kv_[seq];
  if (kv.len != 0) throw std::invalid_argument("add_random_context: the sequence already has tokens");
  kv.k.assign(static_cast<size_t>(m.layers), {});
  kv.v.assign(static_cast<size_t>(m.layers), {});
  for (int l = 0; l < m.layers; ++l)
    for (int64_t p = 0; p < len; ++p)
      for (int hd = 0; hd < m.kv_heads; ++hd)
        for (int i = 0; i < m.head_dim; ++i) {
          kv.k[l].push_back(context_kv(seed_, l, seq, p, hd, i, false));
          kv.v[l].push_back(context_kv(seed_, l, seq, p, hd, i, true));
        }
  kv.len = len;
}

ForwardOutput ReplayReference::run(const std::vector<SequenceStep>& steps) {
  const ReplayModel& m = w_.model;
  const int64_t h = m.hidden, d = m.head_dim, hq = m.q_heads, hk = m.kv_heads, inter = m.intermediate;
  const int64_t qkv_n = (hq + 2 * hk) * d;
  int64_t T = 0;
  for (const auto& s : steps) T += static_cast<int64_t>(s.tokens.size());
  // Embedding; the residual stream starts at zero so that every layer's norm is "add, then norm".
  std::vector<float> x(static_cast<size_t>(T * h)), residual(static_cast<size_t>(T * h), 0.0f), y, tmp;
  {
    int64_t r = 0;
    for (const auto& s : steps)
      for (int32_t tok : s.tokens) {
        if (tok < 0 || tok >= m.vocab) throw std::invalid_argument("token id out of range");
        std::copy_n(w_.embedding.begin() + tok * h, h, x.begin() + r * h);
        ++r;
      }
  }
  std::vector<int64_t> start_len;
  for (const auto& s : steps) {
    Kv& kv = kv_[s.seq];
    if (kv.k.empty()) {
      kv.k.assign(static_cast<size_t>(m.layers), {});
      kv.v.assign(static_cast<size_t>(m.layers), {});
    }
    start_len.push_back(kv.len);
  }
  auto add_norm = [&](const std::vector<float>& w) {  // residual += x; x = RMSNorm(residual)
    for (size_t i = 0; i < x.size(); ++i) residual[i] = round_to_bf16(residual[i] + x[i]);
    rms_norm_ref(residual, w, T, h, &x);
  };
  for (int l = 0; l < m.layers; ++l) {
    const ReplayLayerWeights& L = w_.layers[l];
    add_norm(L.attn_norm);
    gemm_ref(x, L.qkv, T, qkv_n, h, &y);
    round_all(&y);
    std::vector<float> attn(static_cast<size_t>(T * hq * d));
    int64_t r0 = 0;
    for (size_t si = 0; si < steps.size(); ++si) {
      const auto& s = steps[si];
      const int64_t n = static_cast<int64_t>(s.tokens.size()), ctx = start_len[si];
      Kv& kv = kv_[s.seq];
      std::vector<float> q(static_cast<size_t>(n * hq * d));
      for (int64_t i = 0; i < n; ++i) {
        float* row = y.data() + (r0 + i) * qkv_n;
        rope_ref(row, static_cast<int>(hq), static_cast<int>(d), ctx + i);
        rope_ref(row + hq * d, static_cast<int>(hk), static_cast<int>(d), ctx + i);
        std::copy_n(row, hq * d, q.begin() + i * hq * d);
        kv.k[l].insert(kv.k[l].end(), row + hq * d, row + (hq + hk) * d);
        kv.v[l].insert(kv.v[l].end(), row + (hq + hk) * d, row + qkv_n);
      }
      DenseAttentionArgs a;
      a.q = q.data();
      a.k = kv.k[l].data();
      a.v = kv.v[l].data();
      a.num_q = static_cast<int>(n);
      a.num_k = static_cast<int>(ctx + n);
      a.num_q_heads = static_cast<int>(hq);
      a.num_kv_heads = static_cast<int>(hk);
      a.head_dim = static_cast<int>(d);
      a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
      dense_attention_ref(a, causal_mask(static_cast<int>(ctx)), attn.data() + r0 * hq * d, nullptr);
      r0 += n;
    }
    round_all(&attn);
    gemm_ref(attn, L.o, T, h, hq * d, &x);
    round_all(&x);
    add_norm(L.mlp_norm);
    gemm_ref(x, L.gate_up, T, 2 * inter, h, &y);
    tmp.assign(static_cast<size_t>(T * inter), 0.0f);
    for (int64_t r = 0; r < T; ++r)
      for (int64_t i = 0; i < inter; ++i)
        tmp[r * inter + i] = round_to_bf16(round_to_bf16(silu_ref(round_to_bf16(y[r * 2 * inter + i]))) *
                                           round_to_bf16(y[r * 2 * inter + inter + i]));
    gemm_ref(tmp, L.down, T, h, inter, &x);
    round_all(&x);
  }
  add_norm(w_.final_norm);
  ForwardOutput out;
  std::vector<float> rows;
  int64_t r0 = 0, nrows = 0;
  for (const auto& s : steps) {
    r0 += static_cast<int64_t>(s.tokens.size());
    if (s.logits) {
      rows.insert(rows.end(), x.begin() + (r0 - 1) * h, x.begin() + r0 * h);
      ++nrows;
    }
  }
  for (size_t si = 0; si < steps.size(); ++si) kv_[steps[si].seq].len = start_len[si] + static_cast<int64_t>(steps[si].tokens.size());
  if (nrows == 0) return out;
  gemm_ref(rows, w_.lm_head, nrows, m.vocab, h, &out.logits);  // fp32 logits
  for (int64_t r = 0; r < nrows; ++r) {
    int32_t best = 0;
    for (int32_t v = 1; v < m.vocab; ++v)
      if (out.logits[r * m.vocab + v] > out.logits[r * m.vocab + best]) best = v;
    out.sampled.push_back(best);
  }
  return out;
}

std::vector<SequenceStep> replay_steps(const RecordedIteration& it, uint64_t seed, int64_t vocab, ReplayReference* ref) {
  std::vector<SequenceStep> steps;
  int64_t seq = 0;
  for (const auto& c : it.prefills) {
    SequenceStep s{seq, {}, c.completes};
    for (int64_t p = 0; p < c.new_tokens; ++p) s.tokens.push_back(replay_token(seed, seq, c.context + p, vocab));
    if (ref) ref->add_random_context(seq, c.context);
    steps.push_back(std::move(s));
    ++seq;
  }
  for (int64_t ctx : it.decodes) {
    steps.push_back(SequenceStep{seq, {replay_token(seed, seq, ctx, vocab)}, true});
    if (ref) ref->add_random_context(seq, ctx);
    ++seq;
  }
  return steps;
}

}  // namespace servesim::kernels
