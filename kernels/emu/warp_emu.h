// A CPU emulator of CUDA thread blocks, precise enough to run this project's kernels
// unchanged - the dense attention kernels (decode_kernel.cuh, prefill_kernel.cuh, the Hopper
// prefill_hopper_kernel.cuh with its mbarriers, TMA and wgmma) and the
// sparse ones (kernels/sparse/*.cu: Quest, MInference, AnDPro, block top-k) - so CI checks
// their index arithmetic, fragment layouts, masking, pipelining, selections and merges
// without a GPU.
//
// Every CUDA thread of a block is a cooperative fiber on the launching OS thread (its own
// 1 MiB stack; it runs until it waits, then the next runnable thread of the block runs,
// first in first out, so a launch computes the same bits every time and float atomics
// add in thread order); __syncthreads is a block-wide barrier;
// warp collectives (shuffles, ballots, ldmatrix, mma.sync, __syncwarp) exchange values
// through a per-warp buffer between warp barriers. cp.async copies are deferred until the
// matching cp.async.wait_group, so a kernel that reads a stage before waiting for it sees
// stale data. WMMA (shim/mma.h) gives each lane its own share of the accumulator, so a
// missing __syncwarp between a store_matrix_sync and reads of other lanes' elements can
// show. Atomics are trivially atomic (one thread runs at a time). A thread that returns is
// dropped from its block's and warp's barriers, as on sm_70+; a full-mask warp collective
// after some lanes of the warp returned is undefined on a GPU and a launch error here.
// A wait that can never complete (no thread of the block can run, some wait) is reported
// as a deadlock at once. An exception a kernel thread lets escape is rethrown by launch()
// once the block's other threads finished. Blocks run one after another. Only what the
// kernels use is implemented.
//
// launch_kernel() also checks the launch configuration the way the CUDA runtime does
// (block size, grid limits, dynamic shared memory above 48 KiB needs
// cudaFuncSetAttribute, at most 227 KiB) and reports failures through cudaGetLastError
// (shim/cuda_runtime.h), so SERVESIM_CUDA_CHECK_LAUNCH() throws as it would on a GPU.
//
// REQUIRES of emulated kernels: warp collectives are executed by all 32 lanes of a warp
// (warp-uniform control flow).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace servesim_emu {

struct Dim3 {
  Dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  unsigned x, y, z;
};

struct WarpExchange;
struct BlockState;

struct ThreadState {
  Dim3 thread_idx, block_idx, block_dim, grid_dim;
  int lane = 0;
  BlockState* block = nullptr;
  WarpExchange* warp = nullptr;
  struct PendingCopy {
    void* dst;
    const void* src;
    bool valid;
    int group;
  };
  std::vector<PendingCopy> pending;  // cp.async not yet completed
  int committed_groups = 0;
};

ThreadState& current();

void sync_block();
void sync_warp();
float shfl_xor(float v, int lane_mask);
uint32_t shfl_xor_bits(uint32_t v, int lane_mask);
uint32_t shfl_down_bits(uint32_t v, unsigned delta);  // out-of-range source: own value
uint32_t ballot(bool predicate);
unsigned char* dynamic_smem();  // 128-byte aligned

// Warp-collective primitives with PTX semantics (see kernels/common/mma.cuh).
void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row, bool trans);
void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
void cp_async_16(void* dst, const void* src, bool valid);
void cp_async_commit();
void cp_async_wait(int n);

uint32_t shfl_idx_bits(uint32_t v, int src_lane);  // __shfl_sync

// ---- Hopper (sm_90a) primitives, behind kernels/emu/hopper_emu.h --------------------------
// Shared memory is addressed by its offset from the block's dynamic shared memory, whose
// base is 1024-byte aligned (the 128-byte swizzle atom). mbarriers live in a side table
// keyed by address: a phase completes when its pending arrivals reach zero and its
// transaction count balances; TMA copies are queued on their barrier and land in shared
// memory exactly when the phase completes, so a reader that did not wait sees old data.
// wgmma is a
// warpgroup collective (the 128 threads of warps 4i .. 4i+3) computed at issue time.
struct EmuTensorMap {            // what cuTensorMapEncodeTiled would encode (bf16 only)
  const void* base = nullptr;
  int rank = 0;
  uint64_t dims[5] = {};         // elements, innermost first
  uint64_t strides[5] = {};      // bytes of dims 1 .. rank-1 (strides[0] unused: 2)
  uint32_t box[5] = {};          // box extent per dim
  bool swizzle128 = false;       // CU_TENSOR_MAP_SWIZZLE_128B (box[0] * 2 must be 128)
};
uint32_t smem_offset(const void* p);
void mbar_init(void* bar, uint32_t count);
void mbar_arrive(void* bar, uint32_t expect_tx_bytes);  // arrive, after adding expect_tx_bytes
void mbar_wait(void* bar, uint32_t parity);
void tma_load(void* smem_dst, const EmuTensorMap& map, void* bar, const int* coords);
void named_barrier(int id, int threads);
// wgmma.mma_async m64nNk16 .f32.bf16.bf16 of the calling warpgroup: d (this thread's
// [N/8][4] accumulator) (+)= A * B. A from a_regs (this thread's mma.m16n8k16 A fragment)
// or, when a_regs is null, from desc_a (K-major); B from desc_b, K-major or, with
// trans_b, MN-major. Descriptors: 128-byte swizzle only.
void wgmma_bf16(float* d, int n, const uint32_t* a_regs, uint64_t desc_a, uint64_t desc_b, bool trans_b, bool accumulate);

// Runs `body` (one call per CUDA thread) for every block of the grid.
// REQUIRES: block.x * block.y * block.z a multiple of 32. Throws std::logic_error when a
// kernel broke an emulated rule (a collective after lanes exited).
void launch(Dim3 grid, Dim3 block, size_t dynamic_smem_bytes, const std::function<void()>& body);

// The `kernel<<<grid, block, smem, stream>>>(...)` of SERVESIM_LAUNCH (kernels/common/
// cuda_util.cuh): validates the configuration as the CUDA runtime would (on failure the
// kernel does not run and the error is left for cudaGetLastError), then launch().
void launch_kernel(const void* kernel, Dim3 grid, Dim3 block, size_t dynamic_smem_bytes,
                   const std::function<void()>& body);
// cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes).
int set_max_dynamic_smem(const void* kernel, int bytes);  // returns a cudaError_t value
// cudaGetLastError(): the last launch error (0 = none), cleared by the call.
int take_last_error();

}  // namespace servesim_emu
