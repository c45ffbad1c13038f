#include "kernels/decode/decode_ref.h"

#include <algorithm>

#include "kernels/common/attention_ref.h"

namespace servesim::kernels {

void decode_ref(const DecodeRefInput& in, std::vector<float>* out, std::vector<float>* lse) {
  const HostPagedKv& kv = *in.kv;
  const int hq = in.num_q_heads, d = kv.head_dim;
  out->assign(static_cast<size_t>(kv.batch()) * hq * d, 0.0f);
  lse->assign(static_cast<size_t>(kv.batch()) * hq, 0.0f);
  for (int b = 0; b < kv.batch(); ++b) {
    const std::vector<float> k = kv.gather_k(b), v = kv.gather_v(b);
    DenseAttentionArgs a;
    a.q = in.q->data() + static_cast<size_t>(b) * hq * d;
    a.k = k.data();
    a.v = v.data();
    a.num_q = 1;
    a.num_k = kv.kv_lens[b];
    a.num_q_heads = hq;
    a.num_kv_heads = kv.num_kv_heads;
    a.head_dim = d;
    a.scale = in.scale;
    dense_attention_ref(a, full_mask(), out->data() + static_cast<size_t>(b) * hq * d,
                        lse->data() + static_cast<size_t>(b) * hq);
  }
}

void decode_split_kv_ref(const DecodeRefInput& in, const DecodePlan& plan, std::vector<float>* out,
                         std::vector<float>* lse) {
  constexpr int kTile = 16;
  const HostPagedKv& kv = *in.kv;
  const int hq = in.num_q_heads, d = kv.head_dim, group = hq / kv.num_kv_heads;
  out->assign(static_cast<size_t>(kv.batch()) * hq * d, 0.0f);
  lse->assign(static_cast<size_t>(kv.batch()) * hq, 0.0f);
  std::vector<float> scores(kTile), vtile(static_cast<size_t>(kTile) * d);
  for (int b = 0; b < kv.batch(); ++b) {
    for (int h = 0; h < hq; ++h) {
      const int kvh = h / group;
      const float* q = in.q->data() + (static_cast<size_t>(b) * hq + h) * d;
      std::vector<AttentionPartial> parts;
      for (int w = plan.seq_work_indptr[b]; w < plan.seq_work_indptr[b + 1]; ++w) {
        const int begin = plan.work_split[w] * plan.split_tokens;
        const int end = std::min(kv.kv_lens[b], begin + plan.split_tokens);
        OnlineSoftmax state(d);
        for (int t0 = begin; t0 < end; t0 += kTile) {
          const int n = std::min(kTile, end - t0);
          for (int j = 0; j < n; ++j) {
            float s = 0;
            for (int x = 0; x < d; ++x) s += q[x] * kv.k(b, t0 + j, kvh, x);
            scores[j] = s * in.scale;
            for (int x = 0; x < d; ++x) vtile[static_cast<size_t>(j) * d + x] = kv.v(b, t0 + j, kvh, x);
          }
          state.add_tile(scores.data(), n, vtile.data(), d);
        }
        parts.push_back(state.to_partial());
      }
      const AttentionPartial merged = merge_attention_partials(parts);
      std::copy(merged.o.begin(), merged.o.end(), out->begin() + (static_cast<size_t>(b) * hq + h) * d);
      (*lse)[static_cast<size_t>(b) * hq + h] = merged.lse;
    }
  }
}

}  // namespace servesim::kernels
