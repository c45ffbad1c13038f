// LTR features: what the learned output-length ranker may look at. Only
// attributes a trace really carries and a server knows at arrival — never the
// output length (RequestSpec::output_tokens), and nothing derived from it.
//
// Layout "ltr-v1" (a model file names it; a different layout is rejected):
//   prompt length: u = (ln(1+P) − 6)/2, u², min(P, 32768)/8192, and a one-hot
//     bin floor(log2 P) (0..23) — a piecewise shape a linear model can fit;
//   client: one-hot slot (client mod 64; ids are dense, first-seen order, so
//     up to 64 clients never collide) and a hashed client × prompt-bin cross
//     (512 slots), so each tenant gets its own length curve;
//   category (BurstGPT model/log type, template id): one-hot, mod 32;
//   session: turn index (0..15, capped) one-hot plus a "has session" flag;
//   prefix identity (template): hashed ids of the first 1, 2 and 4 prefix
//     blocks (256 slots each); nothing when the trace has no prefix info.
// Rows are sparse: about a dozen non-zeros out of kLtrFeatureDim.
#pragma once
#include <string>
#include <vector>

#include "sim/core/request.h"

namespace servesim {

struct SparseFeature {
  int index = 0;
  double value = 0;
};

inline constexpr const char* kLtrFeatureLayout = "ltr-v1";
extern const int kLtrFeatureDim;

// Clears `out` and appends r's non-zero features (indices ascending, unique).
void ltr_features(const RequestSpec& r, std::vector<SparseFeature>& out);

// A readable name for a feature index ("prompt_bin[10]", "client[3]", ...).
std::string ltr_feature_name(int index);

}  // namespace servesim
