// Linear-layer GEMM shapes of a Llama-family layer on one GPU of a TP group,
// Y[M][N] = X[M][K] · W[N][K]^T with M = tokens. Megatron split: QKV, gate+up
// and the LM head are column-parallel (divide N); O and down are row-parallel
// (divide K); KV heads are replicated when TP exceeds them. This is the same
// rule as kernels/gemm/linear_shapes.h (which the cost model does not link),
// so profile rows of a measured model match these shapes exactly.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace servesim {

struct GemmShape {
  const char* layer;  // qkv, o, gate_up, down, lm_head
  std::int64_t n = 0, k = 0;
};

struct LinearDims {
  std::int64_t hidden, heads, kv_heads, head_dim, intermediate, vocab;
};

inline std::array<GemmShape, 5> gemm_shapes(const LinearDims& d, std::int64_t tp) {
  const std::int64_t q = d.heads / tp;
  const std::int64_t kv = std::max<std::int64_t>(1, d.kv_heads / tp);
  return {{{"qkv", (q + 2 * kv) * d.head_dim, d.hidden},
           {"o", d.hidden, q * d.head_dim},
           {"gate_up", 2 * d.intermediate / tp, d.hidden},
           {"down", d.hidden, d.intermediate / tp},
           {"lm_head", (d.vocab + tp - 1) / tp, d.hidden}}};
}

}  // namespace servesim
