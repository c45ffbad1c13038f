#include "kernels/sparse/minference_plan.h"

#include <algorithm>

namespace servesim::kernels::sparse {

MInfPlan plan_minference(std::span<const MInfHeadPattern> patterns, int n) {
  MInfPlan plan;
  plan.n = n;
  plan.nb = (n + kMInfBlock - 1) / kMInfBlock;
  plan.num_chunks = (n + kMInfEstimateChunk - 1) / kMInfEstimateChunk;
  for (size_t h = 0; h < patterns.size(); ++h) {
    const MInfHeadPattern& p = patterns[h];
    MInfHeadDesc d;
    d.type = static_cast<int32_t>(p.type);
    d.a = p.a;
    d.b = p.b;
    if (p.type == MInfPattern::kVerticalSlash) {
      d.slot = static_cast<int32_t>(plan.vs_heads.size());
      plan.vs_heads.push_back(static_cast<int32_t>(h));
      d.range_cap = std::min(p.b, n);
      d.col_cap = std::min(p.a, n);
      plan.max_kv = std::max(plan.max_kv, d.col_cap);
      plan.max_ks = std::max(plan.max_ks, d.range_cap);
    } else if (p.type == MInfPattern::kBlockSparse) {
      d.slot = static_cast<int32_t>(plan.bs_heads.size());
      plan.bs_heads.push_back(static_cast<int32_t>(h));
      d.range_cap = std::min(p.a, plan.nb);
      plan.max_kb = std::max(plan.max_kb, d.range_cap);
    }
    d.range_base = plan.total_ranges;
    d.col_base = plan.total_cols;
    plan.total_ranges += static_cast<int64_t>(d.range_cap) * plan.nb;
    plan.total_cols += static_cast<int64_t>(d.col_cap) * plan.nb;
    plan.heads.push_back(d);
  }
  return plan;
}

}  // namespace servesim::kernels::sparse
