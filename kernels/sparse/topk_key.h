// The order-preserving float -> uint32 key behind the GPU top-k (sparse_device.cuh
// block_topk): key(a) > key(b) iff a > b as floats, with NaN ordered as -inf and -0 equal
// to +0, so a radix select on keys implements the topk_indices contract
// (sparse_ref_util.h). Host and device; CPU tests check the radix select logic with it.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SERVESIM_SPARSE_HD __host__ __device__
#else
#define SERVESIM_SPARSE_HD
#endif

namespace servesim::kernels::sparse {

SERVESIM_SPARSE_HD inline uint32_t topk_order_key(float x) {
  if (x != x) x = -__builtin_huge_valf();  // NaN ranks with -inf
  if (x == 0.0f) x = 0.0f;                 // -0 -> +0
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

}  // namespace servesim::kernels::sparse
