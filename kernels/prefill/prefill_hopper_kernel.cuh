// Device code of prefill variant hopper_wgmma (sm_90a): dense causal prefill over the
// paged KV cache with TMA loads on an mbarrier pipeline, warp specialisation and wgmma.
// The plan (tiles, masks, page copies, shared-memory layout, descriptors) is
// prefill_hopper_plan.h; the launcher (tensor maps, launch) is prefill_hopper.cu. Kept
// in a header so that the CPU warp emulator test compiles this very source.
//
// Block = 3 warpgroups, one per (128-row query tile, query head):
//  - WG 0, producer: drops to 24 registers (setmaxnreg); one thread loads Q once, then for
//    every key tile waits until both consumers released the stage (empty[s]) and issues
//    the K page boxes on k_full[s] and the V boxes on v_full[s] (arrive.expect_tx with
//    the exact byte count, then the copies). Its other threads exit.
//  - WG 1 and 2, consumers (240 registers): rows 64c .. 64c + 63 each. Per key tile:
//    wait k_full; S = Q K^T (8 x wgmma m64n128k16, both operands in shared memory);
//    mask (diagonal / kv_end tiles only) and online softmax in registers
//    (attention_warp.cuh, whose fragment layout wgmma's accumulator shares); wait v_full;
//    on the last tile consumer 0 zeroes V rows past kv_end (fence.proxy.async, then a
//    named barrier of both consumers); O += P V (8 x wgmma with P from registers, V
//    MN-major); wait; every consumer thread arrives on empty[s]. Tiles a consumer's rows
//    cannot see are waited for and released without computing.
// Within a consumer the two products are serial (no intra-warpgroup ping-pong yet); the
// two consumers and the producer overlap.
#pragma once

#include "kernels/common/attention_warp.cuh"
#include "kernels/common/hopper.cuh"
#include "kernels/prefill/prefill_args.h"
#include "kernels/prefill/prefill_hopper_plan.h"

#if defined(SERVESIM_WARP_EMULATION)
#define SERVESIM_GRID_CONSTANT
#else
#define SERVESIM_GRID_CONSTANT __grid_constant__
#endif

namespace servesim::kernels::detail {

struct PrefillHopperParams {
  PrefillArgs a;  // q / k_cache / v_cache are read through the tensor maps
  const int32_t* tile_seq;
  const int32_t* tile_q_begin;
  float scale_log2;
};

inline constexpr int kHopperProducerRegs = 24;
inline constexpr int kHopperConsumerRegs = 240;
inline constexpr int kHopperConsumerBarrier = 1;  // named barrier id (0 is __syncthreads)

__global__ void __launch_bounds__(kHopperThreads, 1)
    prefill_hopper_kernel(const SERVESIM_GRID_CONSTANT hopper::TensorMap map_q,
                          const SERVESIM_GRID_CONSTANT hopper::TensorMap map_k,
                          const SERVESIM_GRID_CONSTANT hopper::TensorMap map_v, const PrefillHopperParams p) {
  constexpr int D = kHopperHeadDim;
  SERVESIM_DYNAMIC_SHARED(unsigned char, smem_raw);
  // Swizzled regions need a 1024-byte aligned shared address.
  unsigned char* smem = smem_raw + ((1024u - hopper::smem_u32(smem_raw) % 1024u) % 1024u);
  unsigned char* q_s = smem + kHopperSmemQ;
  unsigned char* k_s = smem + kHopperSmemK;
  unsigned char* v_s = smem + kHopperSmemV;
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kHopperSmemBar);
  uint64_t* q_full = bars;
  uint64_t* k_full = bars + 1;
  uint64_t* v_full = bars + 1 + kHopperStages;
  uint64_t* empty = bars + 1 + 2 * kHopperStages;

  const int tid = threadIdx.x;
  // Warpgroup index through a shuffle, so the compiler knows it is warp-uniform and keeps
  // wgmma out of divergent paths (where it would serialise them, ptxas C7520).
  const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
  const int head = blockIdx.x, tile = blockIdx.y;
  const int hq = p.a.heads.num_q_heads, hkv = p.a.heads.num_kv_heads;
  const int kv_head = head / (hq / hkv);
  const int seq = p.tile_seq[tile];
  const int q_begin = p.tile_q_begin[tile];
  const int row0 = p.a.q_indptr[seq];
  const int q_len = p.a.q_indptr[seq + 1] - row0;
  const HopperTile T = hopper_tile(q_len, p.a.kv.kv_lens[seq], q_begin);

  if (tid == 0) {
    hopper::mbar_init(q_full, 1);
    for (int s = 0; s < kHopperStages; ++s) {
      hopper::mbar_init(&k_full[s], 1);
      hopper::mbar_init(&v_full[s], 1);
      hopper::mbar_init(&empty[s], 128 * kHopperConsumers);
    }
    hopper::mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // ---- producer -------------------------------------------------------
    hopper::setmaxnreg_dec<kHopperProducerRegs>();
    if (tid != 0) return;
    hopper::prefetch_tensor_map(&map_q);
    hopper::prefetch_tensor_map(&map_k);
    hopper::prefetch_tensor_map(&map_v);
    hopper::mbar_arrive_expect_tx(q_full, kHopperQBytes);
    for (int h = 0; h < 2; ++h)
      hopper::tma_load_3d(q_s + h * kHopperHalfBytes, &map_q, q_full, h * kHopperBoxCols, head, row0 + q_begin);
    const int32_t* seq_pages = p.a.kv.page_indices + p.a.kv.page_indptr[seq];
    for (int i = 0; i < T.num_kv_tiles; ++i) {
      const int s = i % kHopperStages, n = i / kHopperStages;
      if (n > 0) hopper::mbar_wait(&empty[s], (n - 1) & 1);  // both consumers released round n - 1
      const int pages = hopper_tile_pages(T, i);
      const uint32_t bytes = hopper_tile_tx_bytes(T, i);
      hopper::mbar_arrive_expect_tx(&k_full[s], bytes);
      for (int slot = 0; slot < pages; ++slot) {
        const int page = seq_pages[i * kHopperPagesPerTile + slot];
        for (int h = 0; h < 2; ++h) {
          const HopperCoord4 c = hopper_page_coord(page, kv_head, h);
          hopper::tma_load_4d(k_s + s * kHopperStageBytes + hopper_page_box_offset(slot, h), &map_k, &k_full[s], c.c0,
                              c.c1, c.c2, c.c3);
        }
      }
      hopper::mbar_arrive_expect_tx(&v_full[s], bytes);
      for (int slot = 0; slot < pages; ++slot) {
        const int page = seq_pages[i * kHopperPagesPerTile + slot];
        for (int h = 0; h < 2; ++h) {
          const HopperCoord4 c = hopper_page_coord(page, kv_head, h);
          hopper::tma_load_4d(v_s + s * kHopperStageBytes + hopper_page_box_offset(slot, h), &map_v, &v_full[s], c.c0,
                              c.c1, c.c2, c.c3);
        }
      }
    }
    return;
  }

  // ---- consumers --------------------------------------------------------------------------
  hopper::setmaxnreg_inc<kHopperConsumerRegs>();
  const int c = wg - 1;
  const int ctid = tid - 128 * (1 + c);  // 0 .. 127 within the consumer
  const int cwarp = ctid / 32, lane = ctid & 31;
  const int my_tiles = hopper_consumer_kv_tiles(T, c);
  const int warp_row0 = c * kHopperConsumerRows + cwarp * 16;  // first tile row of this warp
  const uint32_t q_addr = hopper::smem_u32(q_s) + c * kHopperConsumerRows * 128;

  WarpAttnState<D, 1> st;
  st.init();
  hopper::mbar_wait(q_full, 0);
  for (int i = 0; i < T.num_kv_tiles; ++i) {
    const int s = i % kHopperStages, n = i / kHopperStages;
    const uint32_t k_addr = hopper::smem_u32(k_s + s * kHopperStageBytes);
    const uint32_t v_addr = hopper::smem_u32(v_s + s * kHopperStageBytes);
    const bool active = i < my_tiles;
    float sc[1][kHopperKeys / 8][4];
    hopper::mbar_wait(&k_full[s], n & 1);
    if (active) {
      hopper::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        hopper::wgmma_m64n128k16_ss(sc[0],
                                    hopper_wgmma_desc(hopper_kmajor_addr(q_addr, kk), kHopperKmajorLbo, kHopperSbo),
                                    hopper_wgmma_desc(hopper_kmajor_addr(k_addr, kk), kHopperKmajorLbo, kHopperSbo),
                                    kk > 0);
      hopper::wgmma_commit();
      hopper::wgmma_wait<0>();
      hopper::fence_operands(sc[0]);
      const int k0 = i * kHopperKeys;
      warp_online_softmax<D, 1, kHopperKeys>(
          st, sc, p.scale_log2, hopper_tile_needs_mask(T, c, i),
          [&](int r, int key) { return hopper_visible(T, warp_row0 + r, k0 + key); }, lane);
    }
    hopper::mbar_wait(&v_full[s], n & 1);
    if (i == T.num_kv_tiles - 1) {
      const int dead = hopper_tile_first_dead_row(T, i);
      if (dead < kHopperKeys) {  // garbage (maybe NaN) past kv_end: P = 0 there, but 0 * NaN = NaN
        if (c == 0) {
          // (kHopperKeys - dead) rows x 2 halves x 8 chunks of 16 bytes; a row stays a row
          // under the swizzle, so whole rows are zeroed without it.
          const int chunks = (kHopperKeys - dead) * 16;
          for (int x = ctid; x < chunks; x += 128) {
            const int row = dead + x / 16, half = (x / 8) & 1, chunk = x & 7;
            *reinterpret_cast<uint4*>(v_s + s * kHopperStageBytes + half * kHopperHalfBytes + row * 128 + chunk * 16) =
                make_uint4(0, 0, 0, 0);
          }
          hopper::fence_proxy_async();
        }
        hopper::named_barrier_sync(kHopperConsumerBarrier, 128 * kHopperConsumers);
      }
    }
    if (active) {
      // P as bf16 A fragments, all of them before the fence: no register of a wgmma operand
      // is written between the eight issues.
      uint32_t pa[kHopperKeys / 16][4];
#pragma unroll
      for (int kk = 0; kk < kHopperKeys / 16; ++kk) {
        pa[kk][0] = ptx::pack_bf16x2(sc[0][2 * kk][0], sc[0][2 * kk][1]);
        pa[kk][1] = ptx::pack_bf16x2(sc[0][2 * kk][2], sc[0][2 * kk][3]);
        pa[kk][2] = ptx::pack_bf16x2(sc[0][2 * kk + 1][0], sc[0][2 * kk + 1][1]);
        pa[kk][3] = ptx::pack_bf16x2(sc[0][2 * kk + 1][2], sc[0][2 * kk + 1][3]);
      }
      hopper::wgmma_fence();
      hopper::fence_operands(st.o[0]);
#pragma unroll
      for (int kk = 0; kk < kHopperKeys / 16; ++kk)
        hopper::wgmma_m64n128k16_rs_tb(st.o[0], pa[kk],
                                       hopper_wgmma_desc(hopper_mnmajor_addr(v_addr, kk), kHopperMnmajorLbo, kHopperSbo));
      hopper::wgmma_commit();
      hopper::wgmma_wait<0>();
      hopper::fence_operands(st.o[0]);
    }
    hopper::mbar_arrive(&empty[s]);  // this thread is done with stage s (round n)
  }

  const int warp_rows = T.rows - warp_row0;
  if (warp_rows <= 0) return;
  st.finalize_row_sums();
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = g + 8 * h;
    if (r >= warp_rows) continue;
    const int64_t token = row0 + q_begin + warp_row0 + r;
    const float inv = 1.0f / st.l[0][h];  // > 0: key 0 is visible to every row
    __nv_bfloat16* out = p.a.out + (token * hq + head) * D;
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<__nv_bfloat162*>(out + j * 8 + 2 * t) =
          __floats2bfloat162_rn(st.o[0][j][2 * h] * inv, st.o[0][j][2 * h + 1] * inv);
    if (p.a.lse != nullptr && t == 0) p.a.lse[token * hq + head] = (st.m[0][h] + log2f(st.l[0][h])) * kLn2;
  }
}

}  // namespace servesim::kernels::detail
