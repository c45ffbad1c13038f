#include "kernels/sparse/quest_ref.h"

#include <algorithm>

namespace servesim::kernels::sparse {

void quest_append_metadata_ref(const KvCacheF32& kv, std::span<const int32_t> page_table,
                               int64_t old_len, int64_t num_new, float* meta) {
  const int d = kv.head_dim;
  for (int64_t pos = old_len; pos < old_len + num_new; ++pos) {
    const int64_t logical = pos / kPageSize;
    const int slot = static_cast<int>(pos % kPageSize);
    const int32_t phys = page_table[logical];
    for (int h = 0; h < kv.num_kv_heads; ++h) {
      const float* key = kv.k + kv.offset(phys, h, slot);
      float* mx = meta + quest_meta_offset(phys, h, kv.num_kv_heads, d);
      float* mn = mx + d;
      // Slot 0 is the first token the page ever holds: its key initialises the bounds.
      for (int i = 0; i < d; ++i) {
        mx[i] = slot == 0 ? key[i] : std::max(mx[i], key[i]);
        mn[i] = slot == 0 ? key[i] : std::min(mn[i], key[i]);
      }
    }
  }
}

void quest_recompute_metadata_ref(const KvCacheF32& kv, std::span<const int32_t> page_table,
                                  int64_t context_len, float* meta) {
  const int d = kv.head_dim;
  const int64_t pages = (context_len + kPageSize - 1) / kPageSize;
  for (int64_t p = 0; p < pages; ++p) {
    const int slots = static_cast<int>(std::min<int64_t>(kPageSize, context_len - p * kPageSize));
    for (int h = 0; h < kv.num_kv_heads; ++h) {
      float* mx = meta + quest_meta_offset(page_table[p], h, kv.num_kv_heads, d);
      float* mn = mx + d;
      for (int i = 0; i < d; ++i) {
        float hi = kv.k[kv.offset(page_table[p], h, 0) + i], lo = hi;
        for (int s = 1; s < slots; ++s) {
          const float x = kv.k[kv.offset(page_table[p], h, s) + i];
          hi = std::max(hi, x);
          lo = std::min(lo, x);
        }
        mx[i] = hi;
        mn[i] = lo;
      }
    }
  }
}

void quest_estimate_ref(const float* q, const float* meta, std::span<const int32_t> page_table,
                        int64_t num_pages, int num_q_heads, int num_kv_heads, int head_dim,
                        bool per_query_head, float* scores) {
  const int group = num_q_heads / num_kv_heads;
  const int rows = per_query_head ? num_q_heads : num_kv_heads;
  const int heads_per_row = per_query_head ? 1 : group;
  for (int row = 0; row < rows; ++row) {
    const int first_q = row * heads_per_row;
    const int kvh = first_q / group;
    for (int64_t p = 0; p < num_pages; ++p) {
      const float* mx = meta + quest_meta_offset(page_table[p], kvh, num_kv_heads, head_dim);
      const float* mn = mx + head_dim;
      double score = 0;
      for (int h = first_q; h < first_q + heads_per_row; ++h) {
        const float* qh = q + static_cast<int64_t>(h) * head_dim;
        for (int i = 0; i < head_dim; ++i) {
          score += std::max(static_cast<double>(qh[i]) * mx[i], static_cast<double>(qh[i]) * mn[i]);
        }
      }
      scores[row * num_pages + p] = static_cast<float>(score);
    }
  }
}

std::vector<int32_t> quest_select_pages_ref(std::span<const float> scores, int64_t num_pages,
                                            int64_t budget_pages) {
  std::vector<int32_t> pages;
  if (num_pages <= budget_pages) {
    for (int64_t p = 0; p < num_pages; ++p) pages.push_back(static_cast<int32_t>(p));
    return pages;
  }
  pages = topk_indices(scores.first(num_pages - 1), static_cast<int>(budget_pages - 1));
  pages.push_back(static_cast<int32_t>(num_pages - 1));
  return pages;
}

}  // namespace servesim::kernels::sparse
