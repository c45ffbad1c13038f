// Client assignment rules for trace rows; see client_assigner.h.
#include "traces/client_assigner.h"

#include <algorithm>
#include <cmath>

#include "sim/core/error.h"
#include "traces/seeded_hash.h"

namespace servesim {
namespace {
constexpr std::uint64_t kSaltRandomClient = 0xC11E47;
constexpr std::uint64_t kSaltPrefixClient = 0xB10C;
}  // namespace

ClientAssigner::ClientAssigner(const ClientRule& rule, std::string path, std::uint64_t seed, ClientTable& table)
    : rule_(rule), path_(std::move(path)), seed_(seed), table_(table), common_(rule.common_blocks) {
  const bool buckets = (rule_.by == ClientRule::By::kPrefixBlock && rule_.count > 0) || rule_.by == ClientRule::By::kRandom;
  if (buckets)
    for (int i = 0; i < rule_.count; ++i) bucket_ids_.push_back(table_.intern(fmt::format("client-{}", i)));
  if (rule_.by == ClientRule::By::kSingle) intern(rule_.name);
  if (rule_.by == ClientRule::By::kRandom) {
    std::vector<double> w = rule_.weights;
    if (w.empty())
      for (int i = 0; i < rule_.count; ++i) w.push_back(rule_.zipf > 0 ? std::pow(i + 1.0, -rule_.zipf) : 1.0);
    double sum = 0;
    for (double x : w) sum += x;
    double acc = 0;
    for (double x : w) cumulative_.push_back((acc += x) / sum);
    cumulative_.back() = 1.0;
  }
}

ClientId ClientAssigner::intern(const std::string& name) {
  if (have_last_ && name == last_name_) return last_id_;
  last_id_ = table_.intern(name);
  last_name_ = name;
  have_last_ = true;
  return last_id_;
}

int ClientAssigner::common_leading_blocks(const std::vector<const std::vector<BlockHash>*>& rows) {
  if (rows.empty()) return 0;
  std::size_t d = rows.front()->size();
  for (const auto* r : rows) {
    std::size_t k = 0;
    while (k < d && k < r->size() && (*r)[k] == (*rows.front())[k]) ++k;
    d = k;
  }
  return static_cast<int>(d);
}

void ClientAssigner::assign(TraceRow& row) {
  RequestSpec& s = row.spec;
  switch (rule_.by) {
    case ClientRule::By::kAuto:
      s.client = intern(row.client.empty() ? rule_.name : row.client);
      return;
    case ClientRule::By::kTrace:
      if (row.client.empty())
        throw InputError(located(path_, row.line, "clients.by is 'trace' but the row has no client"));
      s.client = intern(row.client);
      return;
    case ClientRule::By::kSingle:
      s.client = intern(rule_.name);
      return;
    case ClientRule::By::kGroup:
      if (row.group.empty())
        throw InputError(located(path_, row.line, "clients.by is 'group' but this trace format has no group "
                                                  "(BurstGPT's Model/Log Type)"));
      s.client = intern(row.group);
      return;
    case ClientRule::By::kPrefixBlock: {
      if (s.prefix_blocks.empty())
        throw InputError(located(path_, row.line, "clients.by is 'prefix_block' but the row has no prefix blocks"));
      SIM_CHECK(common_ >= 0, "common_blocks not resolved");
      std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(common_), s.prefix_blocks.size() - 1);
      BlockHash b = s.prefix_blocks[i];
      if (rule_.count == 0) {
        scratch_ = fmt::format("block-{}", b);
        s.client = intern(scratch_);
      } else {
        s.client = bucket_ids_[mix64(b ^ kSaltPrefixClient) % static_cast<std::uint64_t>(rule_.count)];
      }
      return;
    }
    case ClientRule::By::kRandom: {
      std::uint64_t key = s.session != 0 ? (s.session | (1ULL << 63)) : s.id;
      double u = unit_interval(seeded_hash(seed_, kSaltRandomClient, key));
      auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
      std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(it - cumulative_.begin()), bucket_ids_.size() - 1);
      s.client = bucket_ids_[k];
      return;
    }
  }
}

}  // namespace servesim
