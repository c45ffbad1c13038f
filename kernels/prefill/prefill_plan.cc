#include "kernels/prefill/prefill_plan.h"

#include <algorithm>
#include <numeric>

namespace servesim::kernels {

PrefillPlan plan_prefill(const std::vector<int32_t>& q_indptr, const std::vector<int32_t>& kv_lens,
                         int rows_per_tile) {
  struct Tile {
    int32_t seq, q_begin;
    int64_t keys;
  };
  std::vector<Tile> tiles;
  for (size_t b = 0; b + 1 < q_indptr.size(); ++b) {
    const int32_t q_len = q_indptr[b + 1] - q_indptr[b];
    const int32_t prefix = kv_lens[b] - q_len;
    for (int32_t r = 0; r < q_len; r += rows_per_tile) {
      const int32_t last_row = std::min(q_len, r + rows_per_tile) - 1;
      tiles.push_back({static_cast<int32_t>(b), r, int64_t{prefix} + last_row + 1});
    }
  }
  std::stable_sort(tiles.begin(), tiles.end(), [](const Tile& a, const Tile& b) { return a.keys > b.keys; });
  PrefillPlan plan;
  plan.rows_per_tile = rows_per_tile;
  for (const Tile& t : tiles) {
    plan.tile_seq.push_back(t.seq);
    plan.tile_q_begin.push_back(t.q_begin);
    plan.tile_keys.push_back(t.keys);
  }
  return plan;
}

int choose_prefill_rows_per_tile(const std::vector<int32_t>& q_indptr, int num_q_heads, int num_sms) {
  int64_t blocks128 = 0;
  for (size_t b = 0; b + 1 < q_indptr.size(); ++b) blocks128 += (q_indptr[b + 1] - q_indptr[b] + 127) / 128;
  blocks128 *= num_q_heads;
  return blocks128 >= int64_t{4} * num_sms ? 128 : 64;
}

double prefill_flops(const std::vector<int32_t>& q_indptr, const std::vector<int32_t>& kv_lens, int num_q_heads,
                     int head_dim) {
  double visible = 0;  // sum over rows of (prefix + i + 1)
  for (size_t b = 0; b + 1 < q_indptr.size(); ++b) {
    const double q_len = q_indptr[b + 1] - q_indptr[b];
    const double prefix = kv_lens[b] - q_len;
    visible += q_len * prefix + q_len * (q_len + 1) / 2;
  }
  return 4.0 * head_dim * num_q_heads * visible;
}

}  // namespace servesim::kernels
