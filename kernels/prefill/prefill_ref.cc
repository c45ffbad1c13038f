#include "kernels/prefill/prefill_ref.h"

#include <algorithm>
#include <limits>

#include "kernels/common/attention_ref.h"

namespace servesim::kernels {

void prefill_ref(const PrefillRefInput& in, std::vector<float>* out, std::vector<float>* lse) {
  const HostPagedKv& kv = *in.kv;
  const std::vector<int32_t>& qi = *in.q_indptr;
  const int hq = in.num_q_heads, d = kv.head_dim;
  out->assign(static_cast<size_t>(qi.back()) * hq * d, 0.0f);
  lse->assign(static_cast<size_t>(qi.back()) * hq, 0.0f);
  for (int b = 0; b < kv.batch(); ++b) {
    const int q_len = qi[b + 1] - qi[b];
    if (q_len == 0) continue;
    const std::vector<float> k = kv.gather_k(b), v = kv.gather_v(b);
    DenseAttentionArgs a;
    a.q = in.q->data() + static_cast<size_t>(qi[b]) * hq * d;
    a.k = k.data();
    a.v = v.data();
    a.num_q = q_len;
    a.num_k = kv.kv_lens[b];
    a.num_q_heads = hq;
    a.num_kv_heads = kv.num_kv_heads;
    a.head_dim = d;
    a.scale = in.scale;
    dense_attention_ref(a, causal_mask(kv.kv_lens[b] - q_len), out->data() + static_cast<size_t>(qi[b]) * hq * d,
                        lse->data() + static_cast<size_t>(qi[b]) * hq);
  }
}

void prefill_tiled_ref(const PrefillRefInput& in, int k_tile, std::vector<float>* out, std::vector<float>* lse) {
  const HostPagedKv& kv = *in.kv;
  const std::vector<int32_t>& qi = *in.q_indptr;
  const int hq = in.num_q_heads, d = kv.head_dim, group = hq / kv.num_kv_heads;
  out->assign(static_cast<size_t>(qi.back()) * hq * d, 0.0f);
  lse->assign(static_cast<size_t>(qi.back()) * hq, 0.0f);
  std::vector<float> scores(k_tile), vtile(static_cast<size_t>(k_tile) * d);
  for (int b = 0; b < kv.batch(); ++b) {
    const int q_len = qi[b + 1] - qi[b];
    const int prefix = kv.kv_lens[b] - q_len;
    const std::vector<float> k = kv.gather_k(b), v = kv.gather_v(b);
    for (int i = 0; i < q_len; ++i) {
      const int row = qi[b] + i;
      const int visible = prefix + i + 1;  // keys 0 .. prefix + i
      for (int h = 0; h < hq; ++h) {
        const int kvh = h / group;
        const float* q = in.q->data() + (static_cast<size_t>(row) * hq + h) * d;
        OnlineSoftmax state(d);
        // Whole tiles, as the kernel visits them; keys past the diagonal are masked.
        for (int t0 = 0; t0 < visible; t0 += k_tile) {
          for (int j = 0; j < k_tile; ++j) {
            const int key = t0 + j;
            const bool ok = key < visible;
            float s = -std::numeric_limits<float>::infinity();
            if (ok) {
              const float* kr = k.data() + (static_cast<size_t>(key) * kv.num_kv_heads + kvh) * d;
              float acc = 0;
              for (int x = 0; x < d; ++x) acc += q[x] * kr[x];
              s = acc * in.scale;
            }
            scores[j] = s;
            for (int x = 0; x < d; ++x)
              vtile[static_cast<size_t>(j) * d + x] =
                  ok ? v[(static_cast<size_t>(key) * kv.num_kv_heads + kvh) * d + x] : 0.0f;
          }
          state.add_tile(scores.data(), k_tile, vtile.data(), d);
        }
        const AttentionPartial p = state.to_partial();
        std::copy(p.o.begin(), p.o.end(), out->begin() + (static_cast<size_t>(row) * hq + h) * d);
        (*lse)[static_cast<size_t>(row) * hq + h] = p.lse;
      }
    }
  }
}

}  // namespace servesim::kernels
