#include "kernels/gemm/linear_shapes.h"

#include <algorithm>

namespace servesim::kernels {

ModelDims llama3_8b() { return {"llama3-8b", 4096, 32, 8, 128, 14336, 128256}; }
ModelDims llama3_70b() { return {"llama3-70b", 8192, 64, 8, 128, 28672, 128256}; }
ModelDims llama2_7b() { return {"llama2-7b", 4096, 32, 32, 128, 11008, 32000}; }
std::vector<ModelDims> shipped_models() { return {llama3_8b(), llama3_70b(), llama2_7b()}; }

std::vector<LinearShape> linear_layer_shapes(const ModelDims& m, int tp) {
  const int64_t q_heads = m.num_q_heads / tp;
  const int64_t kv_heads = std::max<int64_t>(1, m.num_kv_heads / tp);
  const int64_t vocab = (m.vocab + tp - 1) / tp;  // vocab-parallel LM head, last shard padded
  return {
      {m.name, "qkv", tp, (q_heads + 2 * kv_heads) * m.head_dim, m.hidden},
      {m.name, "o", tp, m.hidden, q_heads * m.head_dim},
      {m.name, "gate_up", tp, 2 * m.intermediate / tp, m.hidden},
      {m.name, "down", tp, m.hidden, m.intermediate / tp},
      {m.name, "lm_head", tp, vocab, m.hidden},
  };
}

std::vector<LinearShape> gemm_bench_shapes(bool quick) {
  if (quick) return linear_layer_shapes(llama3_8b(), 1);
  std::vector<LinearShape> all;
  for (const ModelDims& m : shipped_models())
    for (int tp : kGemmBenchTps)
      for (const LinearShape& s : linear_layer_shapes(m, tp)) all.push_back(s);
  return all;
}

}  // namespace servesim::kernels
