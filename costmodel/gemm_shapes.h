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
#include <vector>

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

// M values (tokens) of the bench's GEMM grid, up to max_m: powers of two to
// 64 (decode batches; small-M kernels), every 64 to 1,024 and every 256 to
// 4,096 (prefill chunks: one point per output-tile row of 64 or 256, so a tile
// or wave step never falls between two measured M the cost model interpolates
// across; gemm_guide.h), then powers of two (steps are a few % of the time
// there). kernels/gemm (the bench) and the synthetic profile both use it.
inline std::vector<std::int64_t> gemm_token_grid(std::int64_t max_m) {
  std::vector<std::int64_t> ms;
  for (std::int64_t m = 1; m <= 64; m *= 2) ms.push_back(m);
  for (std::int64_t m = 128; m <= 1024; m += 64) ms.push_back(m);
  for (std::int64_t m = 1280; m <= 4096; m += 256) ms.push_back(m);
  for (std::int64_t m = 8192; m <= max_m; m *= 2) ms.push_back(m);
  std::erase_if(ms, [&](std::int64_t m) { return m > max_m; });
  return ms;
}

// Off-grid M values ("probes") the bench also measures, marked probe=1 in
// the row's params: token counts a simulation asks for that fall between grid
// points. `servesim calibrate validate` holds out exactly these GEMM rows, so
// its GEMM error is the error of interpolating between grid points -- what a
// simulation does -- and not of a grid with a point missing.
inline constexpr std::array<std::int64_t, 14> kGemmProbeTokens = {3,   24,   48,   100,  200,  333,  520,
                                                                   777, 1000, 1500, 2222, 3333, 6000, 12000};
inline bool is_gemm_probe_token(std::int64_t m) {
  return std::find(kGemmProbeTokens.begin(), kGemmProbeTokens.end(), m) != kGemmProbeTokens.end();
}

// What the full bench measures per weight shape: the grid and the probes up to
// max_m, ascending.
inline std::vector<std::int64_t> gemm_bench_tokens(std::int64_t max_m) {
  std::vector<std::int64_t> ms = gemm_token_grid(max_m);
  for (std::int64_t m : kGemmProbeTokens)
    if (m <= max_m) ms.push_back(m);
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace servesim
