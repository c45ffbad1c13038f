// The hopper:: wrappers of kernels/common/hopper.cuh implemented on the CPU warp emulator
// (warp_emu.h, "Hopper primitives"): mbarriers with phases and transaction counts, TMA
// tensor copies with zero fill and the 128-byte swizzle, wgmma m64n128k16 as a warpgroup
// collective decoding the shared-memory descriptors, named barriers. Register-allocation
// hints (setmaxnreg, operand fences), proxy fences and wgmma fence / commit / wait are
// no-ops here: wgmma computes at issue. What this cannot check: the hardware's reading of
// the descriptors and swizzle (the emulator implements this project's reading of the PTX
// ISA, the same one the kernel was written from), asynchrony of wgmma, the async-proxy
// memory model, timing.
#pragma once

#include <cstdint>

#include "kernels/emu/warp_emu.h"

namespace servesim::kernels::hopper {

using TensorMap = servesim_emu::EmuTensorMap;

inline uint32_t smem_u32(const void* p) { return servesim_emu::smem_offset(p); }
inline void mbar_init(uint64_t* bar, uint32_t count) { servesim_emu::mbar_init(bar, count); }
inline void mbar_init_fence() {}
inline void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) { servesim_emu::mbar_arrive(bar, bytes); }
inline void mbar_arrive(uint64_t* bar) { servesim_emu::mbar_arrive(bar, 0); }
inline void mbar_wait(uint64_t* bar, uint32_t parity) { servesim_emu::mbar_wait(bar, parity); }
inline void tma_load_4d(void* dst, const TensorMap* map, uint64_t* bar, int c0, int c1, int c2, int c3) {
  const int c[4] = {c0, c1, c2, c3};
  servesim_emu::tma_load(dst, *map, bar, c);
}
inline void tma_load_3d(void* dst, const TensorMap* map, uint64_t* bar, int c0, int c1, int c2) {
  const int c[3] = {c0, c1, c2};
  servesim_emu::tma_load(dst, *map, bar, c);
}
inline void prefetch_tensor_map(const TensorMap*) {}
inline void fence_proxy_async() {}
inline void named_barrier_sync(int id, int threads) { servesim_emu::named_barrier(id, threads); }
template <int REGS>
inline void setmaxnreg_inc() {}
template <int REGS>
inline void setmaxnreg_dec() {}
inline void wgmma_fence() {}
inline void wgmma_commit() {}
template <int N>
inline void wgmma_wait() {}
inline void fence_operands(float (&)[16][4]) {}
inline void wgmma_m64n128k16_ss(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  servesim_emu::wgmma_bf16(&d[0][0], 128, nullptr, desc_a, desc_b, false, accumulate);
}
inline void wgmma_m64n128k16_rs_tb(float (&d)[16][4], const uint32_t (&a)[4], uint64_t desc_b) {
  servesim_emu::wgmma_bf16(&d[0][0], 128, a, 0, desc_b, true, true);
}

}  // namespace servesim::kernels::hopper
