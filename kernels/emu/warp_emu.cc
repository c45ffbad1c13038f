#include "kernels/emu/warp_emu.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/common/host_util.h"

namespace servesim_emu {

// ---- Cooperative fibers ------------------------------------------------------------------
// The threads of a block are fibers on the launching OS thread. A fiber runs
// until it waits - at a barrier that is not complete, or at an mbarrier phase that has
// not completed - and the scheduler then resumes the next runnable fiber, first in first
// out: the order is deterministic, so every run of a kernel computes the same bits. A
// wait that can never complete (no fiber runnable, some still waiting) is a deadlock,
// reported at once instead of hanging.

namespace {

constexpr size_t kFiberStackBytes = size_t{1} << 20;  // virtual; only touched pages are committed

// Context switching. On x86-64 a few instructions of our own save the callee-saved
// registers and the SSE/x87 control words on the old stack and restore them from the new
// one (swapcontext would also make a sigprocmask system call per switch, half the time of
// an emulated kernel). Elsewhere, and under AddressSanitizer (which must see stack
// switches), ucontext.
#if defined(__SANITIZE_ADDRESS__)
#define SERVESIM_EMU_UCONTEXT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SERVESIM_EMU_UCONTEXT 1
#endif
#endif
#if !defined(SERVESIM_EMU_UCONTEXT) && !defined(__x86_64__)
#define SERVESIM_EMU_UCONTEXT 1
#endif

}  // namespace
}  // namespace servesim_emu

#ifdef SERVESIM_EMU_UCONTEXT
#include <ucontext.h>
namespace servesim_emu {
namespace {
struct Context {
  ucontext_t uc;
};
void switch_context(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
void prepare_context(Context& c, void* stack, size_t bytes, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;  // entry never returns
  makecontext(&c.uc, entry, 0);
}
}  // namespace
}  // namespace servesim_emu
#else
// servesim_emu_switch(save, load): pushes rbp rbx r12-r15 and MXCSR + x87 control word,
// stores rsp in *save, loads rsp = load, pops the same and returns on the new stack.
extern "C" void servesim_emu_switch(void** save, void* load);
asm(R"(
  .text
  .p2align 4
  .globl servesim_emu_switch
  .hidden servesim_emu_switch
  .type servesim_emu_switch, @function
servesim_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size servesim_emu_switch, .-servesim_emu_switch
)");
namespace servesim_emu {
namespace {
struct Context {
  void* sp = nullptr;
};
void switch_context(Context& from, Context& to) { servesim_emu_switch(&from.sp, to.sp); }
// A fresh stack as servesim_emu_switch leaves one: control words, six registers (zero),
// and `entry` as the return address, at a 16-byte aligned slot so that `entry` starts
// with the stack alignment of a called function. `entry` never returns.
void prepare_context(Context& c, void* stack, size_t bytes, void (*entry)()) {
  auto top = reinterpret_cast<uintptr_t>(stack) + bytes;
  top &= ~uintptr_t{15};
  auto* slot = reinterpret_cast<uint64_t*>(top) - 2;  // 16-byte aligned; slot[1]: a zero "return address" of entry
  slot[1] = 0;
  slot[0] = reinterpret_cast<uint64_t>(entry);
  uint64_t* sp = slot - 7;
  for (int i = 1; i < 7; ++i) sp[i] = 0;  // r15 r14 r13 r12 rbx rbp
  uint32_t mxcsr;
  uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  std::memcpy(reinterpret_cast<char*>(sp), &mxcsr, 4);
  std::memcpy(reinterpret_cast<char*>(sp) + 4, &fpucw, 2);
  c.sp = sp;
}
}  // namespace
}  // namespace servesim_emu
#endif

namespace servesim_emu {
namespace {

struct Fiber {
  Context ctx;
  ThreadState ts;
  void* stack = nullptr;
  enum class State { kRunnable, kWaiting, kDone } state = State::kRunnable;
};

// One scheduler per running block (blocks run one after another on the launching thread).
struct Scheduler {
  Context main_ctx;
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<int> run_queue;  // FIFO: run_queue[head..] are runnable
  size_t head = 0;
  int running = -1;
  std::exception_ptr exception;  // the first exception a kernel thread let escape
  const std::function<void()>* body = nullptr;
};

thread_local Scheduler* t_sched = nullptr;
thread_local ThreadState* tls = nullptr;

// Stacks are kept for the next block and launch (mmap'ed with a guard page below each).
struct StackPool {
  std::vector<void*> free;
  ~StackPool() {
    for (void* p : free) munmap(static_cast<char*>(p) - page(), kFiberStackBytes + page());
  }
  static size_t page() { return size_t(sysconf(_SC_PAGESIZE)); }
  void* take() {
    if (!free.empty()) {
      void* p = free.back();
      free.pop_back();
      return p;
    }
    void* m = mmap(nullptr, kFiberStackBytes + page(), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    mprotect(m, page(), PROT_NONE);  // guard: a stack overflow faults instead of corrupting
    return static_cast<char*>(m) + page();
  }
  void give(void* p) { free.push_back(p); }
};
thread_local StackPool t_stacks;

// A list of fibers waiting for something to change (a barrier phase, an mbarrier).
struct WaitList {
  std::vector<int> ids;
};

void make_runnable(Scheduler& s, int id) {
  Fiber& f = *s.fibers[size_t(id)];
  if (f.state != Fiber::State::kWaiting) return;
  f.state = Fiber::State::kRunnable;
  s.run_queue.push_back(id);
}

void wake_all(WaitList& w) {
  Scheduler& s = *t_sched;
  for (int id : w.ids) make_runnable(s, id);
  w.ids.clear();
}

// Suspends the calling fiber on `w` until wake_all(w) (or a deadlock) resumes it. Callers
// re-check their condition in a loop.
void park(WaitList& w) {
  Scheduler& s = *t_sched;
  const int me = s.running;
  Fiber& f = *s.fibers[size_t(me)];
  w.ids.push_back(me);
  f.state = Fiber::State::kWaiting;
  switch_context(f.ctx, s.main_ctx);
  tls = &f.ts;
}

}  // namespace

// std::barrier's rules (arrive_and_wait, arrive_and_drop) for fibers.
struct EmuBarrier {
  explicit EmuBarrier(int n) : pending(n), reset(n) {}
  int pending, reset;
  uint64_t phase = 0;
  WaitList waiters;
  void complete_if_done() {
    if (pending > 0) return;
    ++phase;
    pending = reset;
    wake_all(waiters);
  }
  void arrive_and_wait(const bool& dead) {
    const uint64_t my_phase = phase;
    --pending;
    complete_if_done();
    while (phase == my_phase && !dead) park(waiters);
  }
  void arrive_and_drop() {
    --reset;
    --pending;
    complete_if_done();
  }
};

struct WarpExchange {
  EmuBarrier bar{32};
  float f[32];
  uint32_t u[32];
  const void* addr[32];
  uint32_t a[32][4];
  uint32_t b[32][2];
  float A[16][16], B[16][8];          // mma operands, decoded from a and b
  uint64_t mma_decoded_phase = 0;     // bar.phase after the barrier whose operands A, B hold
  unsigned exited = 0;  // lanes that returned from the kernel
};

struct WarpgroupExchange {
  EmuBarrier bar{128};
  uint32_t a[128][4];
  uint64_t desc_a[128], desc_b[128];
};

struct EmuMbarrier {
  uint32_t expected = 0, pending = 0;
  int64_t tx = 0;
  uint32_t phase = 0;  // completed phases
  std::vector<std::function<void()>> copies;  // TMA copies landing at phase completion
};

struct BlockState {
  explicit BlockState(int threads) : bar(threads) {}
  EmuBarrier bar;
  std::unique_ptr<unsigned char[]> smem_storage;
  unsigned char* smem = nullptr;  // 1024-byte aligned inside smem_storage
  size_t smem_bytes = 0;
  std::vector<std::unique_ptr<WarpExchange>> warps;
  std::vector<std::unique_ptr<WarpgroupExchange>> warpgroups;  // when the block has whole warpgroups
  WaitList mbar_waiters;  // fibers in mbar_wait
  std::map<const void*, EmuMbarrier> mbars;
  std::map<int, std::unique_ptr<EmuBarrier>> named;
  bool dead = false;  // a deadlock was found: later waits return at once
  std::string error;  // first broken rule, reported by launch()
};

namespace {

float bf16_bits_to_float_emu(uint16_t v) { return servesim::kernels::bf16_bits_to_float(v); }
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
  if (b.error.empty()) b.error = what;
}

// Called by every lane of a collective after its first warp barrier.
void require_full_warp(ThreadState& t, const char* collective) {
  if (t.warp->exited != 0)
    report(*t.block, std::string(collective) + " with a full mask after lanes of the warp returned (undefined on a GPU)");
}

}  // namespace

void sync_block() {
  ThreadState& t = current();
  t.block->bar.arrive_and_wait(t.block->dead);
}

void sync_warp() {
  ThreadState& t = current();
  t.warp->bar.arrive_and_wait(t.block->dead);
}

unsigned char* dynamic_smem() { return current().block->smem; }

uint32_t shfl_xor_bits(uint32_t v, int lane_mask) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.u[t.lane] = v;
  w.bar.arrive_and_wait(t.block->dead);
  require_full_warp(t, "__shfl_xor_sync");
  const uint32_t r = w.u[(t.lane ^ lane_mask) & 31];
  w.bar.arrive_and_wait(t.block->dead);
  return r;
}

uint32_t shfl_down_bits(uint32_t v, unsigned delta) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.u[t.lane] = v;
  w.bar.arrive_and_wait(t.block->dead);
  require_full_warp(t, "__shfl_down_sync");
  const unsigned src = unsigned(t.lane) + delta;
  const uint32_t r = src < 32 ? w.u[src] : v;
  w.bar.arrive_and_wait(t.block->dead);
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
  w.bar.arrive_and_wait(t.block->dead);
  require_full_warp(t, "__ballot_sync");
  uint32_t mask = 0;
  for (int l = 0; l < 32; ++l) mask |= w.u[l] << l;
  w.bar.arrive_and_wait(t.block->dead);
  return mask;
}

// ldmatrix.m8n8.x4.b16: lanes 8i..8i+7 hold the row addresses of matrix i; lane L gets
// in register i the elements (row L/4, cols 2(L%4), 2(L%4)+1) of matrix i, or with
// .trans the elements (rows 2(L%4), 2(L%4)+1; col L/4).
void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row, bool trans) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.addr[t.lane] = smem_row;
  w.bar.arrive_and_wait(t.block->dead);
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
  w.bar.arrive_and_wait(t.block->dead);
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
  const uint64_t phase = w.bar.phase;
  w.bar.arrive_and_wait(t.block->dead);
  require_full_warp(t, "mma.sync");
  // The warp's operands are decoded once, by the first lane past the barrier (fibers of a
  // warp run one at a time, and none reaches the next mma's barrier before all left this one).
  if (w.mma_decoded_phase != phase + 1) {
    w.mma_decoded_phase = phase + 1;
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, tt = l % 4;
      const int rows[4] = {g, g + 8, g, g + 8}, cols[4] = {2 * tt, 2 * tt, 2 * tt + 8, 2 * tt + 8};
      for (int i = 0; i < 4; ++i) {
        w.A[rows[i]][cols[i]] = bf16_lo(w.a[l][i]);
        w.A[rows[i]][cols[i] + 1] = bf16_hi(w.a[l][i]);
      }
      w.B[2 * tt][g] = bf16_lo(w.b[l][0]);
      w.B[2 * tt + 1][g] = bf16_hi(w.b[l][0]);
      w.B[2 * tt + 8][g] = bf16_lo(w.b[l][1]);
      w.B[2 * tt + 9][g] = bf16_hi(w.b[l][1]);
    }
  }
  const int g = t.lane / 4, tt = t.lane % 4;
  const int out_rows[4] = {g, g, g + 8, g + 8}, out_cols[4] = {2 * tt, 2 * tt + 1, 2 * tt, 2 * tt + 1};
  for (int i = 0; i < 4; ++i) {
    float acc = d[i];
    for (int k = 0; k < 16; ++k) acc += w.A[out_rows[i]][k] * w.B[k][out_cols[i]];
    d[i] = acc;
  }
  w.bar.arrive_and_wait(t.block->dead);  // no lane writes the next operands before all read these
}

uint32_t shfl_idx_bits(uint32_t v, int src_lane) {
  ThreadState& t = current();
  WarpExchange& w = *t.warp;
  w.u[t.lane] = v;
  w.bar.arrive_and_wait(t.block->dead);
  require_full_warp(t, "__shfl_sync");
  const uint32_t r = w.u[src_lane & 31];
  w.bar.arrive_and_wait(t.block->dead);
  return r;
}

// ---- Hopper primitives ------------------------------------------------------------------

namespace {

int flat_thread(const ThreadState& t) {
  return int(t.thread_idx.x + t.block_dim.x * (t.thread_idx.y + t.block_dim.y * t.thread_idx.z));
}

uint32_t swizzle128(uint32_t off) { return off ^ (((off >> 7) & 7u) << 4); }

// Completes the phase when every arrival came and the transaction count balances. A
// phase with TMA copies completes lazily - its data lands at the first wait on it (or the
// barrier's next use) - so that a thread reading the stage without waiting sees stale
// data even when the producer ran ahead.
void try_complete(BlockState& b, EmuMbarrier& m, bool land_copies = false) {
  if (m.pending != 0 || m.tx != 0) return;
  if (!m.copies.empty() && !land_copies) {
    wake_all(b.mbar_waiters);  // ready: a thread already waiting on it lands the copies
    return;
  }
  for (auto& copy : m.copies) copy();
  m.copies.clear();
  ++m.phase;
  m.pending = m.expected;
  wake_all(b.mbar_waiters);
}

EmuMbarrier* find_mbar(BlockState& b, const void* bar) {
  const auto it = b.mbars.find(bar);
  if (it == b.mbars.end()) {
    report(b, "mbarrier used before mbarrier.init");
    return nullptr;
  }
  return &it->second;
}

}  // namespace

uint32_t smem_offset(const void* p) {
  BlockState& b = *current().block;
  const auto* c = static_cast<const unsigned char*>(p);
  if (c < b.smem || c > b.smem + b.smem_bytes) {
    report(b, "shared-memory address outside the block's dynamic shared memory");
    return 0;
  }
  return static_cast<uint32_t>(c - b.smem);
}

void mbar_init(void* bar, uint32_t count) {
  BlockState& b = *current().block;
  EmuMbarrier& m = b.mbars[bar];
  m = EmuMbarrier{};
  m.expected = m.pending = count;
}

void mbar_arrive(void* bar, uint32_t expect_tx_bytes) {
  BlockState& b = *current().block;
  EmuMbarrier* m = find_mbar(b, bar);
  if (!m) return;
  try_complete(b, *m, true);  // a phase left ready by lazy landing completes before the next one starts
  if (m->pending == 0) {
    report(b, "mbarrier: more arrivals than its count in one phase");
    return;
  }
  m->tx += expect_tx_bytes;
  --m->pending;
  try_complete(b, *m);
}

void mbar_wait(void* bar, uint32_t parity) {
  BlockState& b = *current().block;
  EmuMbarrier* m = find_mbar(b, bar);
  if (!m) return;
  // The phase with this parity has completed once the count of completed phases has the
  // other parity (the phase before the first counts as complete, as on the GPU). A wait
  // that can never complete is found by the scheduler (launch()) and reported there.
  for (;;) {
    try_complete(b, *m, true);
    if (b.dead || (m->phase & 1u) != (parity & 1u)) return;
    park(b.mbar_waiters);
  }
}

void tma_load(void* smem_dst, const EmuTensorMap& map, void* bar, const int* coords) {
  BlockState& b = *current().block;
  const uint32_t dst = smem_offset(smem_dst);
  if (map.swizzle128 && (map.box[0] * 2 != 128 || dst % 1024 != 0)) {
    report(b, "TMA with 128-byte swizzle needs 128-byte box rows and a 1024-byte aligned destination");
    return;
  }
  if (!map.swizzle128 && dst % 128 != 0) {
    report(b, "TMA destination not 128-byte aligned");
    return;
  }
  uint64_t elems = 1;
  for (int i = 0; i < map.rank; ++i) elems *= map.box[i];
  const uint64_t bytes = elems * 2;
  if (dst + bytes > b.smem_bytes) {
    report(b, "TMA box past the end of dynamic shared memory");
    return;
  }
  std::vector<int> c(coords, coords + map.rank);
  unsigned char* smem = b.smem;
  auto copy = [map, c, dst, elems, smem] {
    for (uint64_t e = 0; e < elems; ++e) {
      uint64_t rest = e, src = 0;
      bool inside = true;
      for (int i = 0; i < map.rank; ++i) {
        const int64_t x = int64_t(c[i]) + int64_t(rest % map.box[i]);
        rest /= map.box[i];
        if (x < 0 || uint64_t(x) >= map.dims[i]) inside = false;
        src += uint64_t(x) * (i == 0 ? 2 : map.strides[i]);
      }
      uint16_t v = 0;  // out of bounds: zero fill
      if (inside) std::memcpy(&v, static_cast<const unsigned char*>(map.base) + src, 2);
      const uint32_t off = dst + uint32_t(e * 2);
      std::memcpy(smem + (map.swizzle128 ? swizzle128(off) : off), &v, 2);
    }
  };
  EmuMbarrier* m = find_mbar(b, bar);
  if (!m) return;
  m->copies.push_back(copy);
  m->tx -= int64_t(bytes);
  try_complete(b, *m);
}

void named_barrier(int id, int threads) {
  BlockState& b = *current().block;
  auto& slot = b.named[id];
  if (!slot) slot = std::make_unique<EmuBarrier>(threads);
  slot->arrive_and_wait(b.dead);
}

void wgmma_bf16(float* d, int n, const uint32_t* a_regs, uint64_t desc_a, uint64_t desc_b, bool trans_b, bool accumulate) {
  ThreadState& t = current();
  BlockState& b = *t.block;
  const int flat = flat_thread(t);
  const int wg_index = flat / 128, i = flat % 128;
  if (wg_index >= int(b.warpgroups.size())) {
    report(b, "wgmma in a block without whole warpgroups");
    return;
  }
  WarpgroupExchange& x = *b.warpgroups[wg_index];
  if (a_regs)
    for (int r = 0; r < 4; ++r) x.a[i][r] = a_regs[r];
  x.desc_a[i] = desc_a;
  x.desc_b[i] = desc_b;
  x.bar.arrive_and_wait(b.dead);
  if (x.desc_a[i] != x.desc_a[0] || x.desc_b[i] != x.desc_b[0]) report(b, "wgmma: descriptors differ across the warpgroup");
  auto field = [&](uint64_t desc, int shift) { return uint32_t((desc >> shift) & 0x3FFFu) << 4; };
  auto check_desc = [&](uint64_t desc) {
    if ((desc >> 62) != 1 || ((desc >> 49) & 7u) != 0) report(b, "wgmma: only 128-byte swizzle descriptors with base offset 0");
  };
  auto load = [&](uint32_t addr) {
    const uint32_t phys = swizzle128(addr);
    if (phys + 2 > b.smem_bytes) {
      report(b, "wgmma operand outside dynamic shared memory");
      return 0.0f;
    }
    uint16_t v;
    std::memcpy(&v, b.smem + phys, 2);
    return bf16_bits_to_float_emu(v);
  };
  // K-major (128-byte swizzle): row r (of M or N), k 0..15 at start + (r/8) SBO + (r%8) 128 + 2k.
  auto kmajor = [&](uint64_t desc, int r, int k) {
    return load(field(desc, 0) + uint32_t(r / 8) * field(desc, 32) + uint32_t(r % 8) * 128 + 2 * k);
  };
  // MN-major B: (k, col) at start + (col/64) LBO + 2 (col%64) + (k%8) 128 + (k/8) SBO.
  auto mnmajor = [&](uint64_t desc, int k, int col) {
    return load(field(desc, 0) + uint32_t(col / 64) * field(desc, 16) + 2 * uint32_t(col % 64) + uint32_t(k % 8) * 128 +
                uint32_t(k / 8) * field(desc, 32));
  };
  check_desc(desc_b);
  if (!a_regs) check_desc(desc_a);
  const int w = i / 32, lane = i % 32, g = lane / 4, tt = lane % 4;
  float A[2][16];
  for (int h = 0; h < 2; ++h) {
    const int row = 16 * w + g + 8 * h;
    for (int k = 0; k < 16; ++k) {
      if (a_regs) {  // mma.m16n8k16 A fragment of the lane owning (row, k) in warp w
        const int owner = 32 * w + 4 * g + (k % 8) / 2;
        const int reg = h + 2 * (k / 8);
        const uint32_t bits = x.a[owner][reg];
        A[h][k] = bf16_bits_to_float_emu(uint16_t(k % 2 ? bits >> 16 : bits & 0xFFFFu));
      } else {
        A[h][k] = kmajor(desc_a, row, k);
      }
    }
  }
  for (int j = 0; j < n / 8; ++j)
    for (int e = 0; e < 4; ++e) {
      const int h = e / 2, col = 8 * j + 2 * tt + (e % 2);
      float acc = accumulate ? d[4 * j + e] : 0.0f;
      for (int k = 0; k < 16; ++k) acc += A[h][k] * (trans_b ? mnmajor(desc_b, k, col) : kmajor(desc_b, col, k));
      d[4 * j + e] = acc;
    }
  x.bar.arrive_and_wait(b.dead);
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

namespace {

void fiber_main() {
  Scheduler& s = *t_sched;
  Fiber& f = *s.fibers[size_t(s.running)];
  try {
    (*s.body)();
  } catch (...) {
    if (!s.exception) s.exception = std::current_exception();
  }
  ThreadState& ts = f.ts;
  BlockState& state = *ts.block;
  // A returned thread no longer holds back __syncthreads or warp barriers.
  ts.warp->exited |= 1u << ts.lane;
  state.bar.arrive_and_drop();
  ts.warp->bar.arrive_and_drop();
  if (!state.warpgroups.empty()) state.warpgroups[size_t(s.running) / 128]->bar.arrive_and_drop();
  f.state = Fiber::State::kDone;
  switch_context(f.ctx, s.main_ctx);  // never resumed
  std::abort();
}

// Runs the block's threads to completion. Returns when every fiber is done.
void run_block(Scheduler& s, BlockState& state) {
  size_t done = 0;
  const size_t n = s.fibers.size();
  while (done < n) {
    if (s.head == s.run_queue.size()) {
      // Nothing runnable, someone waiting: nobody can ever release them.
      report(state, "barrier or mbarrier wait never completed (deadlock or missing transaction bytes)");
      state.dead = true;
      for (size_t i = 0; i < n; ++i) make_runnable(s, int(i));
      continue;
    }
    const int id = s.run_queue[s.head++];
    if (s.head == s.run_queue.size()) {  // drained: reuse the storage
      s.run_queue.clear();
      s.head = 0;
    }
    Fiber& f = *s.fibers[size_t(id)];
    s.running = id;
    tls = &f.ts;
    switch_context(s.main_ctx, f.ctx);
    tls = nullptr;
    s.running = -1;
    if (f.state == Fiber::State::kDone) ++done;
  }
}

}  // namespace

void launch(Dim3 grid, Dim3 block, size_t dynamic_smem_bytes, const std::function<void()>& body) {
  const int threads = static_cast<int>(block.x * block.y * block.z);
  if (threads % 32 != 0) throw std::invalid_argument("servesim_emu: block size must be a multiple of 32");
  if (t_sched) throw std::logic_error("servesim_emu: launch from inside an emulated kernel");
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        BlockState state(threads);
        state.smem_storage.reset(new unsigned char[dynamic_smem_bytes + 1024]());
        const auto base = reinterpret_cast<uintptr_t>(state.smem_storage.get());
        state.smem = state.smem_storage.get() + ((1024 - base % 1024) % 1024);
        state.smem_bytes = dynamic_smem_bytes;
        for (int w = 0; w < threads / 32; ++w) state.warps.push_back(std::make_unique<WarpExchange>());
        if (threads % 128 == 0)
          for (int g = 0; g < threads / 128; ++g) state.warpgroups.push_back(std::make_unique<WarpgroupExchange>());
        Scheduler s;
        s.body = &body;
        struct Release {  // stacks go back to the pool, the scheduler is unset, on every path
          Scheduler& s;
          ~Release() {
            for (auto& f : s.fibers)
              if (f->stack) t_stacks.give(f->stack);
            t_sched = nullptr;
            tls = nullptr;
          }
        } release{s};
        for (int i = 0; i < threads; ++i) {
          auto f = std::make_unique<Fiber>();
          ThreadState& ts = f->ts;
          ts.thread_idx = {unsigned(i) % block.x, (unsigned(i) / block.x) % block.y, unsigned(i) / (block.x * block.y)};
          ts.block_idx = {bx, by, bz};
          ts.block_dim = block;
          ts.grid_dim = grid;
          ts.lane = i % 32;
          ts.block = &state;
          ts.warp = state.warps[size_t(i) / 32].get();
          f->stack = t_stacks.take();
          prepare_context(f->ctx, f->stack, kFiberStackBytes, fiber_main);
          s.fibers.push_back(std::move(f));
          s.run_queue.push_back(i);
        }
        t_sched = &s;
        run_block(s, state);
        if (s.exception) std::rethrow_exception(s.exception);
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
