// Tiling and scheduling plan of prefill variant hopper_wgmma (prefill_hopper_kernel.cuh),
// as plain host/device functions: the kernel calls exactly these, and the CPU tests
// (prefill_hopper_plan_test.cc) check them against brute force and, through
// prefill_hopper_schedule_ref(), the whole schedule against prefill_ref.
//
// Block: one (query tile of kHopperRows = 128 rows, query head). Three warpgroups: WG 0 is
// the producer (one thread issues every TMA copy), WGs 1 and 2 are consumers, each owning
// 64 consecutive rows of the tile (consumer c = WG c + 1, rows 64c .. 64c + 63). Keys go
// through shared memory in tiles of kHopperKeys = 128 (8 pages of 16), kHopperStages = 2
// stages deep, K and V of a tile on separate mbarriers.
//
// Geometry of a tile (sequence chunk of q_len rows over kv_len = prefix + q_len keys,
// tile starting at chunk row q_begin): rows = min(128, q_len - q_begin) valid rows,
// absolute positions pos0 .. pos0 + rows - 1 with pos0 = prefix + q_begin;
// kv_end = pos0 + rows keys are visible to at least one row; the producer streams key
// tiles 0 .. ceil(kv_end / 128) - 1 in order. Consumer c computes only the key tiles its
// rows can see (hopper_consumer_kv_tiles) and masks a tile (hopper_tile_needs_mask) when
// some key of it lies right of the diagonal of its first row or at/after kv_end; it still
// waits for and releases every tile, so that the barrier phases stay in step.
//
// Paged copies: page slot p (0..7) of key tile t holds tokens t*128 + 16p .. +15 of the
// sequence, page seq_pages[8t + p]. The producer copies the slots whose first token is
// below kv_end (whole pages, two 64-column boxes each: TMA's 128-byte swizzle limits a box
// row to 128 bytes) and never reads page_indices past them. Rows of the tile at or after
// kv_end are zeroed in the V stage by consumer 0 before P V (the cache holds garbage
// there, possibly NaN, and 0 * NaN = NaN on the tensor cores); their K rows are masked
// out of S by selection, which NaN cannot survive.
//
// Shared memory (1024-byte aligned regions, 128-byte swizzle, rows of 64 bf16):
//   Q: [2 column halves][128 rows][64]   32 KiB
//   K: [2 stages][2 halves][128 keys][64] 64 KiB,  V: the same, 64 KiB
//   mbarriers: q_full, k_full[2], v_full[2], empty[2]
// hopper_swizzle128() is the byte permutation the TMA writes and wgmma reads.
#pragma once

#include <cstdint>

#include "kernels/common/layout.h"

namespace servesim::kernels {

inline constexpr int kHopperHeadDim = 128;
inline constexpr int kHopperRows = 128;           // query rows per block
inline constexpr int kHopperConsumerRows = 64;    // rows per consumer warpgroup (wgmma M)
inline constexpr int kHopperConsumers = 2;        // consumer warpgroups
inline constexpr int kHopperKeys = 128;           // keys per stage (wgmma N of S)
inline constexpr int kHopperStages = 2;
inline constexpr int kHopperThreads = 128 * (1 + kHopperConsumers);
inline constexpr int kHopperPagesPerTile = kHopperKeys / kPageSize;
inline constexpr int kHopperBoxCols = 64;                               // bf16 per 128-byte row
inline constexpr int kHopperHalfBytes = kHopperKeys * kHopperBoxCols * 2;  // one column half of a stage: 16 KiB
inline constexpr int kHopperStageBytes = 2 * kHopperHalfBytes;            // K or V tile: 32 KiB
inline constexpr int kHopperQBytes = kHopperRows * kHopperHeadDim * 2;    // 32 KiB
inline constexpr int kHopperPageBoxBytes = kPageSize * kHopperBoxCols * 2;  // one TMA box: 2 KiB

// Byte offsets of the regions in dynamic shared memory.
inline constexpr int kHopperSmemQ = 0;
inline constexpr int kHopperSmemK = kHopperSmemQ + kHopperQBytes;
inline constexpr int kHopperSmemV = kHopperSmemK + kHopperStages * kHopperStageBytes;
inline constexpr int kHopperSmemBar = kHopperSmemV + kHopperStages * kHopperStageBytes;
inline constexpr int kHopperNumBarriers = 1 + 3 * kHopperStages;
// + 1024 so that the kernel can align the base to the swizzle atom.
inline constexpr int kHopperSmemBytes = kHopperSmemBar + 8 * kHopperNumBarriers + 1024;

struct HopperTile {
  int rows = 0;          // valid query rows of the tile (1 .. 128)
  int pos0 = 0;          // absolute position of row 0
  int kv_end = 0;        // keys 0 .. kv_end - 1 are visible to some row
  int num_kv_tiles = 0;  // key tiles the producer streams
};

SERVESIM_HOST_DEVICE constexpr HopperTile hopper_tile(int q_len, int kv_len, int q_begin) {
  HopperTile t;
  const int left = q_len - q_begin;
  t.rows = left < kHopperRows ? left : kHopperRows;
  t.pos0 = kv_len - q_len + q_begin;
  t.kv_end = t.pos0 + t.rows;
  t.num_kv_tiles = (t.kv_end + kHopperKeys - 1) / kHopperKeys;
  return t;
}

// Key tiles consumer c (0 or 1) computes: those holding a key visible to one of its rows;
// 0 when it owns no valid row.
SERVESIM_HOST_DEVICE constexpr int hopper_consumer_kv_tiles(const HopperTile& t, int c) {
  const int first_row = c * kHopperConsumerRows;
  if (first_row >= t.rows) return 0;
  const int last_row = (first_row + kHopperConsumerRows < t.rows ? first_row + kHopperConsumerRows : t.rows) - 1;
  return (t.pos0 + last_row) / kHopperKeys + 1;
}

// Whether consumer c must mask key tile i: a key right of its first row's diagonal, or at
// or after kv_end.
SERVESIM_HOST_DEVICE constexpr bool hopper_tile_needs_mask(const HopperTile& t, int c, int i) {
  const int k_last = i * kHopperKeys + kHopperKeys - 1;
  return k_last > t.pos0 + c * kHopperConsumerRows || k_last >= t.kv_end;
}

// Whether row r of the tile (0 .. 127) sees key `key`.
SERVESIM_HOST_DEVICE constexpr bool hopper_visible(const HopperTile& t, int r, int key) {
  return key <= t.pos0 + r && key < t.kv_end;
}

// Pages of key tile i that the producer copies (slots 0 .. n-1).
SERVESIM_HOST_DEVICE constexpr int hopper_tile_pages(const HopperTile& t, int i) {
  const int keys = t.kv_end - i * kHopperKeys;
  const int pages = (keys + kPageSize - 1) / kPageSize;
  return pages < kHopperPagesPerTile ? pages : kHopperPagesPerTile;
}

// Bytes the TMA copies for the K (or V) half of key tile i: what the mbarrier expects.
SERVESIM_HOST_DEVICE constexpr uint32_t hopper_tile_tx_bytes(const HopperTile& t, int i) {
  return static_cast<uint32_t>(hopper_tile_pages(t, i)) * 2u * kHopperPageBoxBytes;
}

// First row of key tile i that is not a visible key (kHopperKeys: none); consumer 0 zeroes
// the V rows from here on.
SERVESIM_HOST_DEVICE constexpr int hopper_tile_first_dead_row(const HopperTile& t, int i) {
  const int valid = t.kv_end - i * kHopperKeys;
  return valid < kHopperKeys ? valid : kHopperKeys;
}

// TMA coordinates (innermost first) of one page box of the cache, whose tensor map is
// {head_dim, kPageSize, num_kv_heads, num_pages}: column half h of (page, kv_head).
struct HopperCoord4 {
  int c0, c1, c2, c3;
};
SERVESIM_HOST_DEVICE constexpr HopperCoord4 hopper_page_coord(int page, int kv_head, int half) {
  return {half * kHopperBoxCols, 0, kv_head, page};
}
// Byte offset, within a K/V stage, where the box of page slot p, column half h lands.
SERVESIM_HOST_DEVICE constexpr int hopper_page_box_offset(int slot, int half) {
  return half * kHopperHalfBytes + slot * kHopperPageBoxBytes;
}

// 128-byte swizzle (TMA CU_TENSOR_MAP_SWIZZLE_128B, wgmma layout type 1): within each
// 1024-byte atom of 8 rows of 128 bytes, the 16-byte chunk j of row r is stored at chunk
// j ^ (r % 8). `offset` is relative to a 1024-byte aligned base.
SERVESIM_HOST_DEVICE constexpr uint32_t hopper_swizzle128(uint32_t offset) {
  return offset ^ (((offset >> 7) & 7u) << 4);
}

// wgmma shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start
// address, leading and stride byte offsets (all >> 4, 14 bits each), base offset 0,
// layout type 1 = 128-byte swizzle in bits 62-63.
SERVESIM_HOST_DEVICE constexpr uint64_t hopper_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return uint64_t((smem_addr >> 4) & 0x3FFFu) | (uint64_t((lbo_bytes >> 4) & 0x3FFFu) << 16) |
         (uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32) | (uint64_t{1} << 62);
}

// Operand descriptors of the kernel's two products (byte addresses in the shared window):
//  S = Q K^T, k-step kk (0..7, 16 columns of head_dim each): A = Q rows of consumer c,
//  B = K of the stage; both K-major with 128-byte swizzle: 8-row groups 1024 bytes apart
//  (SBO), LBO unused (1 by convention); a k-step moves 32 bytes inside the 128-byte row,
//  k-steps 4..7 read the second column half.
SERVESIM_HOST_DEVICE constexpr uint32_t hopper_kmajor_addr(uint32_t base, int kk) {
  return base + (kk / 4) * kHopperHalfBytes + (kk % 4) * 32;
}
//  O += P V, k-step kk (16 keys): B = V of the stage, MN-major (head_dim contiguous,
//  wgmma's transposed B): 8-key groups 1024 bytes apart (SBO), the two 64-column halves
//  kHopperHalfBytes apart (LBO); a k-step moves 16 rows = 2048 bytes.
SERVESIM_HOST_DEVICE constexpr uint32_t hopper_mnmajor_addr(uint32_t base, int kk) { return base + kk * 16 * 128; }
inline constexpr uint32_t kHopperSbo = 1024;
inline constexpr uint32_t kHopperKmajorLbo = 16;  // "1" after >> 4: unused for swizzled K-major
inline constexpr uint32_t kHopperMnmajorLbo = kHopperHalfBytes;

}  // namespace servesim::kernels
