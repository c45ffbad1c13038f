#include "kernels/prefill/prefill_hopper_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/common/host_util.h"
#include "kernels/prefill/prefill_hopper_plan.h"
#include "kernels/prefill/prefill_plan.h"

namespace servesim::kernels {

void prefill_hopper_schedule_ref(const PrefillRefInput& in, std::vector<float>* out, std::vector<float>* lse,
                                 HopperScheduleStats* stats) {
  const HostPagedKv& kv = *in.kv;
  const std::vector<int32_t>& qi = *in.q_indptr;
  const int hq = in.num_q_heads, hkv = kv.num_kv_heads, d = kv.head_dim, group = hq / hkv;
  if (d != kHopperHeadDim) throw std::invalid_argument("prefill_hopper_schedule_ref: head_dim must be 128");
  const float nan = std::numeric_limits<float>::quiet_NaN(), neg_inf = -std::numeric_limits<float>::infinity();
  out->assign(static_cast<size_t>(qi.back()) * hq * d, nan);
  lse->assign(static_cast<size_t>(qi.back()) * hq, nan);
  HopperScheduleStats local;
  HopperScheduleStats& st = stats ? *stats : local;
  st = {};
  const PrefillPlan plan = plan_prefill(qi, kv.kv_lens, kHopperRows);
  const size_t stage_elems = size_t{kHopperKeys} * d;
  for (int tile = 0; tile < plan.num_tiles(); ++tile) {
    const int seq = plan.tile_seq[tile], q_begin = plan.tile_q_begin[tile];
    const int q_len = qi[seq + 1] - qi[seq];
    const HopperTile T = hopper_tile(q_len, kv.kv_lens[seq], q_begin);
    const int owned = kv.page_indptr[seq + 1] - kv.page_indptr[seq];
    for (int head = 0; head < hq; ++head) {
      ++st.blocks;
      const int kvh = head / group;
      // Two stages of K and V as the block's shared memory holds them (uninitialised: NaN).
      std::vector<float> k_st(kHopperStages * stage_elems, nan), v_st(kHopperStages * stage_elems, nan);
      struct Row {
        float m = -std::numeric_limits<float>::infinity(), l = 0;
        std::vector<float> acc;
      };
      std::vector<Row> rows(kHopperRows);
      for (Row& r : rows) r.acc.assign(d, 0.0f);
      for (int i = 0; i < T.num_kv_tiles; ++i) {
        const int s = i % kHopperStages;
        float* ks = k_st.data() + s * stage_elems;
        float* vs = v_st.data() + s * stage_elems;
        // Producer: the page boxes of tile i.
        const int pages = hopper_tile_pages(T, i);
        ++st.key_tiles;
        int64_t bytes = 0;
        for (int slot = 0; slot < pages; ++slot) {
          const int entry = i * kHopperPagesPerTile + slot;
          if (entry >= owned)
            throw std::logic_error("hopper plan reads page-table entry " + std::to_string(entry) + " of a sequence owning " +
                                   std::to_string(owned));
          const int page = kv.page_indices[kv.page_indptr[seq] + entry];
          for (int half = 0; half < 2; ++half) {
            const HopperCoord4 c = hopper_page_coord(page, kvh, half);
            for (int slot_row = 0; slot_row < kPageSize; ++slot_row)
              for (int x = 0; x < kHopperBoxCols; ++x) {
                const int64_t off = kv_cache_offset(c.c3, c.c2, c.c1 + slot_row, c.c0 + x, hkv, d);
                const size_t dst = size_t(slot * kPageSize + slot_row) * d + half * kHopperBoxCols + x;
                ks[dst] = bf16_bits_to_float(kv.k_bits[off]);
                vs[dst] = bf16_bits_to_float(kv.v_bits[off]);
              }
            st.page_boxes += 2;
            bytes += 2 * kHopperPageBoxBytes;
          }
        }
        if (bytes != 2 * int64_t{hopper_tile_tx_bytes(T, i)})
          throw std::logic_error("hopper plan: expected tx bytes differ from the boxes issued");
        st.tx_bytes += bytes;
        // Consumer 0 on the last tile: V rows past kv_end zeroed.
        if (i == T.num_kv_tiles - 1) {
          for (int r = hopper_tile_first_dead_row(T, i); r < kHopperKeys; ++r) {
            std::fill(vs + size_t(r) * d, vs + size_t(r + 1) * d, 0.0f);
            ++st.zeroed_v_rows;
          }
        }
        for (int c = 0; c < kHopperConsumers; ++c) {
          if (i >= hopper_consumer_kv_tiles(T, c)) continue;
          ++st.computed_tiles;
          const bool masked = hopper_tile_needs_mask(T, c, i);
          st.masked_tiles += masked;
          for (int r = c * kHopperConsumerRows; r < (c + 1) * kHopperConsumerRows; ++r) {
            if (r >= T.rows) continue;  // the kernel computes these rows too but never stores them
            const float* q = in.q->data() + (size_t(qi[seq] + q_begin + r) * hq + head) * d;
            float sc[kHopperKeys];
            float mx = neg_inf;
            for (int j = 0; j < kHopperKeys; ++j) {
              float acc = 0;
              for (int x = 0; x < d; ++x) acc += q[x] * ks[size_t(j) * d + x];
              float v = acc * in.scale;
              if (masked && !hopper_visible(T, r, i * kHopperKeys + j)) v = neg_inf;
              sc[j] = v;
              mx = std::max(mx, v);
            }
            Row& row = rows[r];
            const float m_new = std::max(row.m, mx);
            const float base = m_new == neg_inf ? 0.0f : m_new;
            const float corr = std::exp(row.m - base);
            row.l *= corr;
            for (float& a : row.acc) a *= corr;
            for (int j = 0; j < kHopperKeys; ++j) {
              const float p = std::exp(sc[j] - base);  // 0 for masked keys, multiplied anyway
              row.l += p;
              for (int x = 0; x < d; ++x) row.acc[x] += p * vs[size_t(j) * d + x];
            }
            row.m = m_new;
          }
        }
      }
      for (int r = 0; r < T.rows; ++r) {
        const size_t token = size_t(qi[seq] + q_begin + r);
        for (int x = 0; x < d; ++x) (*out)[(token * hq + head) * d + x] = rows[r].acc[x] / rows[r].l;
        (*lse)[token * hq + head] = rows[r].m + std::log(rows[r].l);
      }
    }
  }
}

}  // namespace servesim::kernels
