// Reference attention on the CPU, the ground truth every attention kernel (dense and
// sparse) is checked against.
//
// dense_attention_ref(): one sequence, all heads, any mask, GQA; double accumulation,
// exact two-pass softmax. Sparse kernels express their pattern as a mask (per query
// head, since MInference patterns are per head) and compare with it.
//
// AttentionPartial / merge_attention_partials(): the split-KV algebra. A partial is the
// attention of one query over a subset of the keys, stored normalised (o) with its
// log-sum-exp; partials over disjoint key sets merge exactly into the attention over the
// union: lse = log sum_s exp(lse_s), o = sum_s exp(lse_s - lse) * o_s.
#pragma once

#include <functional>
#include <limits>
#include <vector>

namespace servesim::kernels {

// mask(q_index, k_index, q_head) == true when the query may attend the key.
using AttentionMask = std::function<bool(int, int, int)>;

AttentionMask full_mask();
// Query i at absolute position q_offset + i sees keys 0 .. q_offset + i (causal with a
// cached prefix of q_offset tokens).
AttentionMask causal_mask(int q_offset);

struct DenseAttentionArgs {
  const float* q = nullptr;  // [num_q][num_q_heads][head_dim]
  const float* k = nullptr;  // [num_k][num_kv_heads][head_dim]
  const float* v = nullptr;  // [num_k][num_kv_heads][head_dim]
  int num_q = 0, num_k = 0;
  int num_q_heads = 0, num_kv_heads = 0, head_dim = 0;
  float scale = 0;           // softmax scale (usually 1/sqrt(head_dim))
};

// out: [num_q][num_q_heads][head_dim]; lse (may be null): [num_q][num_q_heads], natural
// log. A query with no allowed key gets out = 0 and lse = -inf.
void dense_attention_ref(const DenseAttentionArgs& args, const AttentionMask& mask, float* out, float* lse);

struct AttentionPartial {
  std::vector<float> o;  // [head_dim], normalised by its own softmax denominator
  float lse = 0;         // -inf for an empty key set (o is then ignored)
};

// Exact merge of partials over disjoint key sets. An all-empty input gives zeros, -inf.
AttentionPartial merge_attention_partials(const std::vector<AttentionPartial>& parts);

// Online-softmax accumulator (seed 004): running max m, running denominator l and
// unnormalised output acc, updated one key (or one tile of keys) at a time, in float like
// the GPU kernels. to_partial() normalises.
class OnlineSoftmax {
 public:
  explicit OnlineSoftmax(int head_dim) : acc_(head_dim, 0.0f) {}
  // Adds keys with scores s[j] (already scaled) and value rows v + j * v_stride; the
  // whole tile rescales the accumulator once, as a tiled kernel does.
  void add_tile(const float* scores, int count, const float* v, int v_stride);
  void merge(const OnlineSoftmax& other);
  AttentionPartial to_partial() const;

 private:
  float m_ = -std::numeric_limits<float>::infinity();
  float l_ = 0.0f;
  std::vector<float> acc_;
};

}  // namespace servesim::kernels
