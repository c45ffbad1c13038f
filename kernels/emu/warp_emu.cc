#include "kernels/emu/warp_emu.h"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

#include "kernels/common/host_util.h"

namespace servesim_emu {

struct WarpExchange {
  std::barrier<> bar{32};
  float f[32];
  const void* addr[32];
  uint32_t a[32][4];
  uint32_t b[32][2];
};

struct BlockState {
  explicit BlockState(int threads) : bar(threads) {}
  std::barrier<> bar;
  std::unique_ptr<unsigned char[]> smem;
  std::vector<std::unique_ptr<WarpExchange>> warps;
};

namespace {
thread_local ThreadState* tls = nullptr;

float bf16_lo(uint32_t r) { return servesim::kernels::bf16_bits_to_float(static_cast<uint16_t>(r & 0xFFFFu)); }
float bf16_hi(uint32_t r) { return servesim::kernels::bf16_bits_to_float(static_cast<uint16_t>(r >> 16)); }

void complete(ThreadState::PendingCopy& c) {
  if (c.valid)
    std::memcpy(c.dst, c.src, 16);
  else
    std::memset(c.dst, 0, 16);
}
}  // namespace

ThreadState& current() {
  if (!tls) throw std::logic_error("servesim_emu: called outside an emulated kernel");
  return *tls;
}

void sync_block() { current().block->bar.arrive_and_wait(); }

unsigned char* dynamic_smem() { return current().block->smem.get(); }

float shfl_xor(float v, int lane_mask) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.f[t.lane] = v;
  w.bar.arrive_and_wait();
  const float r = w.f[t.lane ^ lane_mask];
  w.bar.arrive_and_wait();
  return r;
}

// ldmatrix.m8n8.x4.b16: lanes 8i..8i+7 hold the row addresses of matrix i; lane L gets
// in register i the elements (row L/4, cols 2(L%4), 2(L%4)+1) of matrix i, or with
// .trans the elements (rows 2(L%4), 2(L%4)+1; col L/4).
void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row, bool trans) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.addr[t.lane] = smem_row;
  w.bar.arrive_and_wait();
  const int L = t.lane;
  auto element = [&](int matrix, int row, int col) {
    uint16_t v;
    std::memcpy(&v, static_cast<const unsigned char*>(w.addr[matrix * 8 + row]) + 2 * col, 2);
    return uint32_t{v};
  };
  for (int i = 0; i < 4; ++i) {
    uint32_t lo, hi;
    if (!trans) {
      lo = element(i, L / 4, 2 * (L % 4));
      hi = element(i, L / 4, 2 * (L % 4) + 1);
    } else {
      lo = element(i, 2 * (L % 4), L / 4);
      hi = element(i, 2 * (L % 4) + 1, L / 4);
    }
    r[i] = lo | (hi << 16);
  }
  w.bar.arrive_and_wait();
}

// mma.m16n8k16.row.col.f32.bf16.bf16.f32 with the PTX fragment layouts: lane L (g = L/4,
// t = L%4) holds A[g][2t..], A[g+8][2t..], A[g][2t+8..], A[g+8][2t+8..] in a0..a3,
// B[2t..][g], B[2t+8..][g] in b0, b1 and D[g][2t..], D[g+8][2t..] in d0..d3.
void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  for (int i = 0; i < 4; ++i) w.a[t.lane][i] = a[i];
  w.b[t.lane][0] = b0;
  w.b[t.lane][1] = b1;
  w.bar.arrive_and_wait();
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, tt = l % 4;
    const int rows[4] = {g, g + 8, g, g + 8}, cols[4] = {2 * tt, 2 * tt, 2 * tt + 8, 2 * tt + 8};
    for (int i = 0; i < 4; ++i) {
      A[rows[i]][cols[i]] = bf16_lo(w.a[l][i]);
      A[rows[i]][cols[i] + 1] = bf16_hi(w.a[l][i]);
    }
    B[2 * tt][g] = bf16_lo(w.b[l][0]);
    B[2 * tt + 1][g] = bf16_hi(w.b[l][0]);
    B[2 * tt + 8][g] = bf16_lo(w.b[l][1]);
    B[2 * tt + 9][g] = bf16_hi(w.b[l][1]);
  }
  w.bar.arrive_and_wait();
  const int g = t.lane / 4, tt = t.lane % 4;
  const int out_rows[4] = {g, g, g + 8, g + 8}, out_cols[4] = {2 * tt, 2 * tt + 1, 2 * tt, 2 * tt + 1};
  for (int i = 0; i < 4; ++i) {
    float acc = d[i];
    for (int k = 0; k < 16; ++k) acc += A[out_rows[i]][k] * B[k][out_cols[i]];
    d[i] = acc;
  }
}

void cp_async_16(void* dst, const void* src, bool valid) {
  ThreadState& t = current();
  t.pending.push_back({dst, src, valid, t.committed_groups});
}

void cp_async_commit() { ++current().committed_groups; }

void cp_async_wait(int n) {
  ThreadState& t = current();
  // Complete every copy of groups older than the n most recent committed ones.
  const int limit = t.committed_groups - n;
  std::vector<ThreadState::PendingCopy> keep;
  for (auto& c : t.pending) {
    if (c.group < limit)
      complete(c);
    else
      keep.push_back(c);
  }
  t.pending.swap(keep);
}

void launch(Dim3 grid, Dim3 block, size_t dynamic_smem_bytes, const std::function<void()>& body) {
  const int threads = static_cast<int>(block.x * block.y * block.z);
  if (threads % 32 != 0) throw std::invalid_argument("servesim_emu: block size must be a multiple of 32");
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        BlockState state(threads);
        state.smem.reset(new unsigned char[dynamic_smem_bytes + 16]());
        for (int w = 0; w < threads / 32; ++w) state.warps.push_back(std::make_unique<WarpExchange>());
        std::vector<std::thread> pool;
        for (int i = 0; i < threads; ++i) {
          pool.emplace_back([&, i] {
            ThreadState ts;
            ts.thread_idx = {unsigned(i) % block.x, (unsigned(i) / block.x) % block.y, unsigned(i) / (block.x * block.y)};
            ts.block_idx = {bx, by, bz};
            ts.block_dim = block;
            ts.grid_dim = grid;
            ts.lane = i % 32;
            ts.block = &state;
            ts.warp = state.warps[i / 32].get();
            tls = &ts;
            body();
            tls = nullptr;
          });
        }
        for (auto& th : pool) th.join();
      }
}

}  // namespace servesim_emu
