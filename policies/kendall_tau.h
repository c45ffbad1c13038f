// Kendall's rank correlation τ-b between two equally long samples, computed
// in O(n log n) (Knight 1966: sort by (x, y), count the inversions of y by
// merge sort, correct for ties in x, in y and in both). τ-b is what scipy's
// kendalltau returns: (concordant − discordant) / sqrt((n0 − n1)(n0 − n2)),
// where n0 = n(n−1)/2 and n1, n2 count the pairs tied in x and in y.
//
// The LTR ranker is judged by it (Fu et al., "Efficient LLM Scheduling by
// Learning to Rank", NeurIPS 2024): τ between predicted and true output
// lengths on held-out requests. Returns 0 when either sample is constant or
// has fewer than two values (no ranking to agree with).
#pragma once
#include <span>

namespace servesim {

// REQUIRES: x.size() == y.size(); no NaN.
double kendall_tau_b(std::span<const double> x, std::span<const double> y);

}  // namespace servesim
