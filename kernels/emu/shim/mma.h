// Stand-in for CUDA's <mma.h> (nvcuda::wmma) in the CPU warp emulator build: the bf16
// m16n16k16 tiles with fp32 accumulation that kernels/sparse/sparse_wmma.cuh uses.
//
// Fragment layouts are opaque in CUDA, so the emulation picks one: A and B fragments hold
// the whole 16 x 16 tile in every lane (a load reads the tile; values are bf16, exact in
// float), and lane L owns accumulator elements e = 16 r + c with e % 32 == L: mma_sync
// computes only those, and store_matrix_sync writes only those. A kernel that reads other
// lanes' stored elements without a __syncwarp (or __syncthreads) in between may then see
// stale values here, as it could on a GPU. Loads and stores are not barriers.
// Only the operations the kernels use are provided.
#pragma once

#ifndef SERVESIM_WARP_EMULATION
#error "kernels/emu/shim is only for the CPU warp emulator build"
#endif

#include <cuda_bf16.h>

#include <type_traits>

#include "kernels/emu/warp_emu.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulator implements m16n16k16 only");
  float v[16][16];  // A: [row][k]; B: [k][col]; accumulator: [row][col] (own elements only)
};

namespace detail {
inline int lane() { return ::servesim_emu::current().lane; }
inline bool owns(int r, int c) { return (r * 16 + c) % 32 == lane(); }
}  // namespace detail

template <typename Layout>
inline void load_matrix_sync(fragment<matrix_a, 16, 16, 16, __nv_bfloat16, Layout>& f, const __nv_bfloat16* p, unsigned ld) {
  static_assert(std::is_same_v<Layout, row_major>, "the emulator implements row-major A only");
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) f.v[r][k] = __bfloat162float(p[r * ld + k]);
}

template <typename Layout>
inline void load_matrix_sync(fragment<matrix_b, 16, 16, 16, __nv_bfloat16, Layout>& f, const __nv_bfloat16* p, unsigned ld) {
  for (int k = 0; k < 16; ++k)
    for (int c = 0; c < 16; ++c)
      f.v[k][c] = __bfloat162float(std::is_same_v<Layout, col_major> ? p[c * ld + k] : p[k * ld + c]);
}

inline void fill_fragment(fragment<accumulator, 16, 16, 16, float>& f, float value) {
  for (auto& row : f.v)
    for (float& x : row) x = value;
}

template <typename LayoutA, typename LayoutB>
inline void mma_sync(fragment<accumulator, 16, 16, 16, float>& d,
                     const fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LayoutA>& a,
                     const fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LayoutB>& b,
                     const fragment<accumulator, 16, 16, 16, float>& c) {
  for (int r = 0; r < 16; ++r)
    for (int col = 0; col < 16; ++col) {
      if (!detail::owns(r, col)) continue;
      float acc = c.v[r][col];
      for (int k = 0; k < 16; ++k) acc += a.v[r][k] * b.v[k][col];
      d.v[r][col] = acc;
    }
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 16, float>& f, unsigned ld, layout_t layout) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      if (detail::owns(r, c)) p[layout == mem_row_major ? r * ld + c : c * ld + r] = f.v[r][c];
}

}  // namespace nvcuda::wmma
