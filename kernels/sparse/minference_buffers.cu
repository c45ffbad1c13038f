#include "kernels/sparse/minference_buffers.cuh"

#include <algorithm>

#include "kernels/common/layout.h"

namespace servesim::kernels::sparse {

namespace {

template <typename T>
DeviceBuffer<T> allocate(size_t count) {
  return DeviceBuffer<T>(std::max<size_t>(count, 1));  // never null: kernels may take the pointer
}

}  // namespace

MInfDeviceIndex::MInfDeviceIndex(const MInfPlan& plan, int num_q_heads, int num_kv_heads) : plan_(plan) {
  const size_t n = plan.n, nb = plan.nb, nvs = plan.vs_heads.size(), nbs = plan.bs_heads.size();
  heads_.upload(plan.heads);
  vs_heads_ = allocate<int32_t>(nvs);
  bs_heads_ = allocate<int32_t>(nbs);
  if (nvs) vs_heads_.upload(plan.vs_heads);
  if (nbs) bs_heads_.upload(plan.bs_heads);
  vs_ml_ = allocate<float>(nvs * plan.num_chunks * 64 * 2);
  vs_lse_ = allocate<float>(nvs * 64);
  vertical = allocate<float>(nvs * n);
  slash = allocate<float>(nvs * n);
  lines_v = allocate<int32_t>(nvs * plan.max_kv);
  lines_s = allocate<int32_t>(nvs * plan.max_ks);
  q_pool_ = allocate<float>(nbs * nb * 128);
  k_pool_ = allocate<float>(nbs ? size_t(num_kv_heads) * nb * 128 : 0);
  bs_logits = allocate<float>(nbs * nb * nb);
  bs_blocks_ = allocate<int32_t>(nbs * nb * plan.max_kb);
  range_count = allocate<int32_t>(size_t(num_q_heads) * nb);
  col_count = allocate<int32_t>(size_t(num_q_heads) * nb);
  ranges = allocate<int2>(plan.total_ranges);
  cols = allocate<int32_t>(plan.total_cols);
  view_ = MInfBuffers{heads_.get(), vs_heads_.get(), bs_heads_.get(), static_cast<int>(nvs), static_cast<int>(nbs),
                      plan.nb, plan.num_chunks, plan.max_kv, plan.max_ks, plan.max_kb,
                      vs_ml_.get(), vs_lse_.get(), vertical.get(), slash.get(), lines_v.get(), lines_s.get(),
                      q_pool_.get(), k_pool_.get(), bs_logits.get(), bs_blocks_.get(),
                      range_count.get(), ranges.get(), col_count.get(), cols.get()};
}

std::vector<MInfHeadIndex> MInfDeviceIndex::download_index() const {
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int32_t> rc = range_count.download(), cc = col_count.download(), cl = cols.download();
  const std::vector<int2> rg = ranges.download();
  std::vector<MInfHeadIndex> out;
  for (size_t h = 0; h < plan_.heads.size(); ++h) {
    const MInfHeadDesc& d = plan_.heads[h];
    MInfHeadIndex head{{static_cast<MInfPattern>(d.type), d.a, d.b}, {}};
    if (d.type != static_cast<int32_t>(MInfPattern::kAShape)) {
      head.rows.resize(plan_.nb);
      for (int rb = 0; rb < plan_.nb; ++rb) {
        RowBlockIndex& row = head.rows[rb];
        for (int i = 0; i < rc[h * plan_.nb + rb]; ++i) {
          const int2 r = rg[d.range_base + int64_t{rb} * d.range_cap + i];
          row.ranges.emplace_back(r.x, r.y);
        }
        for (int i = 0; i < cc[h * plan_.nb + rb]; ++i) row.columns.push_back(cl[d.col_base + int64_t{rb} * d.col_cap + i]);
      }
    }
    out.push_back(std::move(head));
  }
  return out;
}

int64_t MInfDeviceIndex::visited_tiles(const std::vector<MInfHeadIndex>& index, int head) const {
  const MInfHeadIndex& h = index[head];
  int64_t tiles = 0;
  for (int rb = 0; rb < plan_.nb; ++rb) {
    const int64_t q0 = int64_t{rb} * kMInfBlock, q1 = std::min<int64_t>(plan_.n, q0 + kMInfBlock);
    if (h.pattern.type == MInfPattern::kAShape) {
      const int64_t sink_end = std::min<int64_t>(h.pattern.a, q1);
      const int64_t band_lo = std::max(sink_end, q0 - h.pattern.b + 1);
      tiles += (sink_end + 63) / 64 + (q1 > band_lo ? (q1 - band_lo + 63) / 64 : 0);
      continue;
    }
    for (const auto& [lo, hi] : h.rows[rb].ranges) tiles += (hi - lo + 63) / 64;
    tiles += (static_cast<int64_t>(h.rows[rb].columns.size()) + 63) / 64;
  }
  return tiles;
}

namespace {

__device__ __forceinline__ float hash_uniform(uint64_t seed, uint64_t i) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
}

// One block per (token, head of q, k, or v); thread i handles the RoPE pair (i, i + 64).
__global__ void structured_prompt_kernel(__nv_bfloat16* q, __nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                                         const int32_t* page_table, int n, int num_q_heads, int num_kv_heads,
                                         uint64_t seed) {
  const int t = blockIdx.x, slot = blockIdx.y, i = threadIdx.x;  // slot: q heads, then kv heads
  const bool is_q = slot < num_q_heads;
  const int h = is_q ? slot : slot - num_q_heads;
  const int kvh = is_q ? h / (num_q_heads / num_kv_heads) : h;
  const uint64_t row = (uint64_t(t) * (num_q_heads + num_kv_heads) + slot) * 128;
  // Shared direction of the KV group (entries in [-2, 2)) plus per-token noise in [-1, 1).
  float a = 2.0f * hash_uniform(seed ^ 0xD1B54A32D192ED03ull, uint64_t(kvh) * 128 + i) + hash_uniform(seed, row + i);
  float b = 2.0f * hash_uniform(seed ^ 0xD1B54A32D192ED03ull, uint64_t(kvh) * 128 + i + 64) + hash_uniform(seed, row + i + 64);
  if (!is_q && t < 4) {  // attention sinks
    a *= 3.0f;
    b *= 3.0f;
  }
  const float theta = powf(10000.0f, -2.0f * i / 128.0f) * t;
  const float c = cosf(theta), s = sinf(theta);
  const float ra = a * c - b * s, rb = a * s + b * c;
  if (is_q) {
    __nv_bfloat16* out = q + (int64_t(t) * num_q_heads + h) * 128;
    out[i] = __float2bfloat16(ra);
    out[i + 64] = __float2bfloat16(rb);
  } else {
    const int64_t off = kv_cache_offset(page_table[t / kPageSize], h, t % kPageSize, 0, num_kv_heads, 128);
    k_cache[off + i] = __float2bfloat16(ra);
    k_cache[off + i + 64] = __float2bfloat16(rb);
    v_cache[off + i] = __float2bfloat16(hash_uniform(seed ^ 0x5851F42D4C957F2Dull, row + i));
    v_cache[off + i + 64] = __float2bfloat16(hash_uniform(seed ^ 0x5851F42D4C957F2Dull, row + i + 64));
  }
}

}  // namespace

void fill_structured_prompt(__nv_bfloat16* q, __nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                            const int32_t* page_table, int n, int num_q_heads, int num_kv_heads, uint64_t seed,
                            cudaStream_t stream) {
  SERVESIM_LAUNCH(structured_prompt_kernel, dim3(n, num_q_heads + num_kv_heads), 64, 0, stream, q, k_cache, v_cache, page_table, n,
                                                                                   num_q_heads, num_kv_heads, seed);
  SERVESIM_CUDA_CHECK_LAUNCH();
}

}  // namespace servesim::kernels::sparse
