#include "policies/ltr_features.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace servesim {
namespace {

// Block boundaries of the layout, in order.
constexpr int kContinuous = 3;
constexpr int kPromptBins = 24;
constexpr int kClientSlots = 64;
constexpr int kClientCross = 512;
constexpr int kCategorySlots = 32;
constexpr int kTurnSlots = 16;
constexpr int kPrefixSlots = 256;

constexpr int kPromptBinAt = kContinuous;
constexpr int kClientAt = kPromptBinAt + kPromptBins;
constexpr int kCrossAt = kClientAt + kClientSlots;
constexpr int kCategoryAt = kCrossAt + kClientCross;
constexpr int kTurnAt = kCategoryAt + kCategorySlots;
constexpr int kSessionFlagAt = kTurnAt + kTurnSlots;
constexpr int kPrefixAt = kSessionFlagAt + 1;  // three blocks of kPrefixSlots: first 1, 2, 4 blocks
constexpr int kDim = kPrefixAt + 3 * kPrefixSlots;

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int prompt_bin(std::int64_t p) {
  int b = 0;
  while (b + 1 < kPromptBins && (std::int64_t{2} << b) <= p) ++b;
  return b;
}

}  // namespace

const int kLtrFeatureDim = kDim;

void ltr_features(const RequestSpec& r, std::vector<SparseFeature>& out) {
  out.clear();
  const double p = static_cast<double>(std::max<std::int64_t>(r.prompt_tokens, 1));
  const double u = (std::log1p(p) - 6.0) / 2.0;
  out.push_back({0, u});
  out.push_back({1, u * u});
  out.push_back({2, std::min(p, 32768.0) / 8192.0});
  const int bin = prompt_bin(r.prompt_tokens);
  out.push_back({kPromptBinAt + bin, 1});
  out.push_back({kClientAt + static_cast<int>(r.client % kClientSlots), 1});
  out.push_back({kCrossAt + static_cast<int>(mix((std::uint64_t{r.client} << 8) ^ static_cast<std::uint64_t>(bin)) %
                                             kClientCross),
                 1});
  out.push_back({kCategoryAt + static_cast<int>(static_cast<std::uint32_t>(r.category) % kCategorySlots), 1});
  out.push_back({kTurnAt + std::clamp(r.turn, 0, kTurnSlots - 1), 1});
  if (r.session != 0) out.push_back({kSessionFlagAt, 1});
  if (!r.prefix_blocks.empty()) {
    std::uint64_t h = 0x6A09E667F3BCC909ull;
    const std::size_t depth[3] = {1, 2, 4};
    std::size_t i = 0;
    for (int k = 0; k < 3; ++k) {
      for (; i < std::min(depth[k], r.prefix_blocks.size()); ++i) h = mix(h ^ r.prefix_blocks[i]);
      out.push_back({kPrefixAt + k * kPrefixSlots + static_cast<int>(mix(h + static_cast<std::uint64_t>(k)) % kPrefixSlots), 1});
    }
  }
}

std::string ltr_feature_name(int i) {
  if (i == 0) return "log_prompt";
  if (i == 1) return "log_prompt^2";
  if (i == 2) return "prompt/8192";
  if (i < kClientAt) return fmt::format("prompt_bin[2^{}]", i - kPromptBinAt);
  if (i < kCrossAt) return fmt::format("client[{}]", i - kClientAt);
  if (i < kCategoryAt) return fmt::format("client_x_bin#{}", i - kCrossAt);
  if (i < kTurnAt) return fmt::format("category[{}]", i - kCategoryAt);
  if (i < kSessionFlagAt) return fmt::format("turn[{}]", i - kTurnAt);
  if (i == kSessionFlagAt) return "has_session";
  if (i < kDim) return fmt::format("prefix{}#{}", 1 << ((i - kPrefixAt) / kPrefixSlots), (i - kPrefixAt) % kPrefixSlots);
  return fmt::format("?{}", i);
}

}  // namespace servesim
