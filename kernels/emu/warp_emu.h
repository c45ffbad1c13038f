// A CPU emulator of CUDA thread blocks, precise enough to run this project's attention
// kernels (decode_kernel.cuh, prefill_kernel.cuh) unchanged, so CI checks their index
// arithmetic, fragment layouts, masking, pipelining and merges without a GPU.
//
// Every CUDA thread of a block is a std::thread; __syncthreads is a block-wide barrier;
// warp collectives (shuffles, ldmatrix, mma.sync) exchange values through a per-warp
// buffer between two warp barriers. cp.async copies are deferred until the matching
// cp.async.wait_group, so a kernel that reads a stage before waiting for it sees stale
// data. Blocks run one after another. Only what the kernels use is implemented.
//
// REQUIRES of emulated kernels: collectives are executed by all 32 lanes of a warp
// (warp-uniform control flow), and no thread exits before a later __syncthreads.
#pragma once

#include <barrier>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace servesim_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
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
float shfl_xor(float v, int lane_mask);
unsigned char* dynamic_smem();

// Warp-collective primitives with PTX semantics (see kernels/common/mma.cuh).
void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row, bool trans);
void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
void cp_async_16(void* dst, const void* src, bool valid);
void cp_async_commit();
void cp_async_wait(int n);

// Runs `body` (one call per CUDA thread) for every block of the grid.
// REQUIRES: block.x * block.y * block.z a multiple of 32.
void launch(Dim3 grid, Dim3 block, size_t dynamic_smem_bytes, const std::function<void()>& body);

}  // namespace servesim_emu
