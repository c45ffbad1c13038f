#include "kernels/emu/warp_emu.h"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "kernels/common/host_util.h"

namespace servesim_emu {

struct WarpExchange {
  std::barrier<> bar{32};
  float f[32];
  uint32_t u[32];
  const void* addr[32];
  uint32_t a[32][4];
  uint32_t b[32][2];
  std::atomic<unsigned> exited{0};  // lanes that returned from the kernel
};

struct BlockState {
  explicit BlockState(int threads) : bar(threads) {}
  std::barrier<> bar;
  std::unique_ptr<unsigned char[]> smem_storage;
  unsigned char* smem = nullptr;  // 128-byte aligned inside smem_storage
  std::vector<std::unique_ptr<WarpExchange>> warps;
  std::mutex error_mutex;
  std::string error;  // first broken rule, reported by launch()
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

namespace {

void report(BlockState& b, const std::string& what) {
  std::lock_guard<std::mutex> lock(b.error_mutex);
  if (b.error.empty()) b.error = what;
}

// Called by every lane of a collective after its first warp barrier.
void require_full_warp(ThreadState& t, const char* collective) {
  if (t.warp->exited.load() != 0)
    report(*t.block, std::string(collective) + " with a full mask after lanes of the warp returned (undefined on a GPU)");
}

}  // namespace

void sync_block() { current().block->bar.arrive_and_wait(); }

void sync_warp() { current().warp->bar.arrive_and_wait(); }

unsigned char* dynamic_smem() { return current().block->smem; }

uint32_t shfl_xor_bits(uint32_t v, int lane_mask) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.u[t.lane] = v;
  w.bar.arrive_and_wait();
  require_full_warp(t, "__shfl_xor_sync");
  const uint32_t r = w.u[(t.lane ^ lane_mask) & 31];
  w.bar.arrive_and_wait();
  return r;
}

uint32_t shfl_down_bits(uint32_t v, unsigned delta) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.u[t.lane] = v;
  w.bar.arrive_and_wait();
  require_full_warp(t, "__shfl_down_sync");
  const unsigned src = unsigned(t.lane) + delta;
  const uint32_t r = src < 32 ? w.u[src] : v;
  w.bar.arrive_and_wait();
  return r;
}

float shfl_xor(float v, int lane_mask) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits = shfl_xor_bits(bits, lane_mask);
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

uint32_t ballot(bool predicate) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.u[t.lane] = predicate ? 1u : 0u;
  w.bar.arrive_and_wait();
  require_full_warp(t, "__ballot_sync");
  uint32_t mask = 0;
  for (int l = 0; l < 32; ++l) mask |= w.u[l] << l;
  w.bar.arrive_and_wait();
  return mask;
}

// ldmatrix.m8n8.x4.b16: lanes 8i..8i+7 hold the row addresses of matrix i; lane L gets
// in register i the elements (row L/4, cols 2(L%4), 2(L%4)+1) of matrix i, or with
// .trans the elements (rows 2(L%4), 2(L%4)+1; col L/4).
void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row, bool trans) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.addr[t.lane] = smem_row;
  w.bar.arrive_and_wait();
  require_full_warp(t, "ldmatrix");
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
  require_full_warp(t, "mma.sync");
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
        state.smem_storage.reset(new unsigned char[dynamic_smem_bytes + 128]());
        const auto base = reinterpret_cast<uintptr_t>(state.smem_storage.get());
        state.smem = state.smem_storage.get() + ((128 - base % 128) % 128);
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
            // A returned thread no longer holds back __syncthreads or warp barriers.
            ts.warp->exited.fetch_or(1u << ts.lane);
            state.bar.arrive_and_drop();
            ts.warp->bar.arrive_and_drop();
          });
        }
        for (auto& th : pool) th.join();
        if (!state.error.empty())
          throw std::logic_error("servesim_emu: block (" + std::to_string(bx) + "," + std::to_string(by) + "," +
                                 std::to_string(bz) + "): " + state.error);
      }
}

namespace {

constexpr int kErrorInvalidValue = 1;          // cudaErrorInvalidValue
constexpr int kErrorInvalidConfiguration = 9;  // cudaErrorInvalidConfiguration
constexpr size_t kDefaultDynamicSmem = 48 * 1024;
constexpr int kMaxDynamicSmemOptIn = 227 * 1024;  // sm_90

std::mutex g_launch_mutex;
std::map<const void*, int> g_max_dynamic_smem;  // cudaFuncSetAttribute values
int g_last_error = 0;

}  // namespace

int set_max_dynamic_smem(const void* kernel, int bytes) {
  if (bytes < 0 || bytes > kMaxDynamicSmemOptIn) return kErrorInvalidValue;
  std::lock_guard<std::mutex> lock(g_launch_mutex);
  g_max_dynamic_smem[kernel] = bytes;
  return 0;
}

int take_last_error() {
  std::lock_guard<std::mutex> lock(g_launch_mutex);
  return std::exchange(g_last_error, 0);
}

void launch_kernel(const void* kernel, Dim3 grid, Dim3 block, size_t dynamic_smem_bytes,
                   const std::function<void()>& body) {
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  bool ok = threads >= 1 && threads <= 1024 && block.z <= 64 && grid.x >= 1 && grid.y >= 1 && grid.z >= 1 &&
            grid.x <= 0x7fffffffu && grid.y <= 65535 && grid.z <= 65535;
  {
    std::lock_guard<std::mutex> lock(g_launch_mutex);
    const auto it = g_max_dynamic_smem.find(kernel);
    const size_t limit = it == g_max_dynamic_smem.end() ? kDefaultDynamicSmem : size_t(it->second);
    ok = ok && dynamic_smem_bytes <= limit;
    if (!ok) {
      g_last_error = kErrorInvalidConfiguration;
      return;
    }
  }
  launch(grid, block, dynamic_smem_bytes, body);
}

}  // namespace servesim_emu
