// CPU tests of prefill variant hopper_wgmma's plan (prefill_hopper_plan.h): tile geometry,
// causal key-tile skipping and masking against brute force, page copies and their byte
// counts, the swizzle and descriptor encodings, and the whole schedule
// (prefill_hopper_schedule_ref) against prefill_ref on NaN-poisoned paged caches.
#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_host.h"
#include "kernels/prefill/prefill_hopper_plan.h"
#include "kernels/prefill/prefill_hopper_ref.h"
#include "kernels/prefill/prefill_plan.h"
#include "kernels/prefill/prefill_ref.h"

using namespace servesim::kernels;

TEST_CASE("hopper plan: key tiles computed and masked per consumer agree with brute-force causal visibility") {
  int cases = 0;
  for (int q_len : {1, 63, 64, 65, 127, 128, 129, 300, 1000})
    for (int prefix : {0, 1, 15, 16, 100, 128, 223, 4096})
      for (int q_begin = 0; q_begin < q_len; q_begin += kHopperRows) {
        const HopperTile T = hopper_tile(q_len, prefix + q_len, q_begin);
        REQUIRE(T.rows == std::min(kHopperRows, q_len - q_begin));
        CHECK(T.kv_end == prefix + q_begin + T.rows);
        CHECK(T.num_kv_tiles * kHopperKeys >= T.kv_end);
        CHECK((T.num_kv_tiles - 1) * kHopperKeys < T.kv_end);
        for (int c = 0; c < kHopperConsumers; ++c) {
          // Brute force: tiles holding a key some valid row of consumer c sees; tiles with
          // a key some of its rows (valid or not) must not see.
          std::set<int> needed, needs_mask;
          for (int r = c * kHopperConsumerRows; r < (c + 1) * kHopperConsumerRows; ++r)
            for (int key = 0; key < T.num_kv_tiles * kHopperKeys; ++key) {
              const bool vis = key <= prefix + q_begin + r && key < prefix + q_begin + T.rows;
              if (vis && r < T.rows) needed.insert(key / kHopperKeys);
              if (!vis) needs_mask.insert(key / kHopperKeys);
            }
          const int tiles = hopper_consumer_kv_tiles(T, c);
          CHECK(tiles == static_cast<int>(needed.size()));
          if (!needed.empty()) CHECK(*needed.rbegin() == tiles - 1);  // a prefix of the tiles
          for (int i = 0; i < tiles; ++i) {
            CHECK(hopper_tile_needs_mask(T, c, i) == (needs_mask.count(i) > 0));
            int wrong = 0;
            for (int r = c * kHopperConsumerRows; r < (c + 1) * kHopperConsumerRows; ++r)
              for (int k = 0; k < kHopperKeys; ++k)
                wrong += hopper_visible(T, r, i * kHopperKeys + k) !=
                         (i * kHopperKeys + k <= prefix + q_begin + r && i * kHopperKeys + k < T.kv_end);
            CHECK(wrong == 0);
          }
        }
        ++cases;
      }
  CHECK(cases > 50);
}

TEST_CASE("hopper plan: page copies load exactly the pages holding keys below kv_end, with matching byte counts") {
  for (int kv_end : {1, 15, 16, 17, 127, 128, 129, 255, 256, 1000}) {
    HopperTile T;
    T.rows = 1;
    T.pos0 = kv_end - 1;
    T.kv_end = kv_end;
    T.num_kv_tiles = (kv_end + kHopperKeys - 1) / kHopperKeys;
    int pages = 0;
    for (int i = 0; i < T.num_kv_tiles; ++i) {
      const int n = hopper_tile_pages(T, i);
      CHECK(n >= 1);
      CHECK(n <= kHopperPagesPerTile);
      // The last copied page holds a key below kv_end; the next slot would not.
      CHECK(i * kHopperKeys + (n - 1) * kPageSize < kv_end);
      if (n < kHopperPagesPerTile) CHECK(i * kHopperKeys + n * kPageSize >= kv_end);
      CHECK(hopper_tile_tx_bytes(T, i) == uint32_t(n) * 2 * 2048);
      const int dead = hopper_tile_first_dead_row(T, i);
      CHECK(dead == std::min(kHopperKeys, kv_end - i * kHopperKeys));
      pages += n;
    }
    CHECK(pages == pages_for_tokens(kv_end));  // never past the pages the sequence owns
  }
  // Boxes of a stage tile it without overlap: slot x half -> distinct 2 KiB blocks.
  std::set<int> offsets;
  for (int slot = 0; slot < kHopperPagesPerTile; ++slot)
    for (int half = 0; half < 2; ++half) {
      const int off = hopper_page_box_offset(slot, half);
      CHECK(off % 1024 == 0);
      offsets.insert(off / kHopperPageBoxBytes);
    }
  CHECK(offsets.size() == 16);
  CHECK(*offsets.rbegin() == 15);
  const HopperCoord4 c = hopper_page_coord(7, 3, 1);
  CHECK((c.c0 == 64 && c.c1 == 0 && c.c2 == 3 && c.c3 == 7));
}

TEST_CASE("hopper plan: shared-memory layout, 128-byte swizzle and wgmma descriptors") {
  CHECK(kHopperSmemQ % 1024 == 0);
  CHECK(kHopperSmemK % 1024 == 0);
  CHECK(kHopperSmemV % 1024 == 0);
  CHECK(kHopperSmemBar % 8 == 0);
  CHECK(kHopperSmemBytes <= 227 * 1024);
  CHECK(kHopperQBytes == 2 * kHopperHalfBytes);  // Q halves have the K/V halves' stride
  // The swizzle permutes 16-byte chunks within each 128-byte row and is an involution.
  std::set<uint32_t> seen;
  for (uint32_t off = 0; off < 2048; off += 16) {
    const uint32_t sw = hopper_swizzle128(off);
    CHECK(sw / 128 == off / 128);
    CHECK(hopper_swizzle128(sw) == off);
    seen.insert(sw);
  }
  CHECK(seen.size() == 128);
  CHECK(hopper_swizzle128(0x80) == 0x90);    // row 1, chunk 0 -> chunk 1
  CHECK(hopper_swizzle128(0x3F0) == 0x380);  // row 7, chunk 7 -> chunk 0
  // Descriptor fields: address >> 4 in bits 0-13, LBO in 16-29, SBO in 32-45, 128B swizzle = 1 in 62-63.
  const uint64_t d = hopper_wgmma_desc(0x8000 + 96, kHopperMnmajorLbo, kHopperSbo);
  CHECK((d & 0x3FFF) == (0x8000 + 96) >> 4);
  CHECK(((d >> 16) & 0x3FFF) == kHopperHalfBytes >> 4);
  CHECK(((d >> 32) & 0x3FFF) == 1024 >> 4);
  CHECK((d >> 62) == 1);
  CHECK(((d >> 49) & 7) == 0);
  // K-major k-steps: 32 bytes apart within a row, the second column half after 4 steps.
  CHECK(hopper_kmajor_addr(0, 3) == 96);
  CHECK(hopper_kmajor_addr(0, 4) == uint32_t(kHopperHalfBytes));
  CHECK(hopper_mnmajor_addr(0, 7) == 7 * 2048);
}

namespace {

void check_schedule(const std::vector<int>& kv_lens, const std::vector<int>& q_lens, AttentionHeads h, uint64_t seed,
                    HopperScheduleStats* stats = nullptr) {
  const HostPagedKv kv = make_random_paged_kv(kv_lens, h.num_kv_heads, h.head_dim, seed);
  std::vector<int32_t> q_indptr(1, 0);
  for (int l : q_lens) q_indptr.push_back(q_indptr.back() + l);
  const std::vector<float> q = random_uniform(size_t(q_indptr.back()) * h.num_q_heads * h.head_dim, seed + 1);
  const PrefillRefInput in{&kv, &q_indptr, &q, h.num_q_heads, h.default_scale()};
  std::vector<float> ref, ref_lse, got, got_lse;
  prefill_ref(in, &ref, &ref_lse);
  prefill_hopper_schedule_ref(in, &got, &got_lse, stats);
  CHECK_FALSE(has_non_finite(got));
  CHECK_FALSE(has_non_finite(got_lse));
  CHECK(relative_error(got, ref) < 1e-5);
  CHECK(relative_error(got_lse, ref_lse) < 1e-5);
}

}  // namespace

TEST_CASE("hopper schedule model equals prefill_ref on prompts, chunks over a prefix and varlen batches") {
  HopperScheduleStats st;
  check_schedule({300}, {300}, {2, 1, 128}, 61, &st);  // 3 tiles: stage 0 reused, partial last page
  CHECK(st.blocks == 3 * 2);
  CHECK(st.zeroed_v_rows > 0);
  CHECK(st.masked_tiles > 0);
  CHECK(st.computed_tiles < 2 * st.key_tiles);  // consumers skip tiles above their rows
  check_schedule({500, 1, 77, 16}, {77, 1, 77, 16}, {4, 2, 128}, 62);  // chunk over 423, single token, page-exact
  check_schedule({1030}, {260}, {2, 2, 128}, 63);                      // prefix 770: diagonal across two key tiles
}
