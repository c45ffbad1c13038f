// A CPU emulator of CUDA thread blocks, precise enough to run this project's kernels
// unchanged - the dense attention kernels (decode_kernel.cuh, prefill_kernel.cuh) and the
// sparse ones (kernels/sparse/*.cu: Quest, MInference, AnDPro, block top-k) - so CI checks
// their index arithmetic, fragment layouts, masking, pipelining, selections and merges
// without a GPU.
//
// Every CUDA thread of a block is a std::thread; __syncthreads is a block-wide barrier;
// warp collectives (shuffles, ballots, ldmatrix, mma.sync, __syncwarp) exchange values
// through a per-warp buffer between warp barriers. cp.async copies are deferred until the
// matching cp.async.wait_group, so a kernel that reads a stage before waiting for it sees
// stale data. WMMA (shim/mma.h) gives each lane its own share of the accumulator, so a
// missing __syncwarp between a store_matrix_sync and reads of other lanes' elements can
// show. Atomics are real atomics (threads run concurrently). A thread that returns is
// dropped from its block's and warp's barriers, as on sm_70+; a full-mask warp collective
// after some lanes of the warp returned is undefined on a GPU and a launch error here.
// Blocks run one after another. Only what the kernels use is implemented.
//
// launch_kernel() also checks the launch configuration the way the CUDA runtime does
// (block size, grid limits, dynamic shared memory above 48 KiB needs
// cudaFuncSetAttribute, at most 227 KiB) and reports failures through cudaGetLastError
// (shim/cuda_runtime.h), so SERVESIM_CUDA_CHECK_LAUNCH() throws as it would on a GPU.
//
// REQUIRES of emulated kernels: warp collectives are executed by all 32 lanes of a warp
// (warp-uniform control flow).
#pragma once

#include <barrier>
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
