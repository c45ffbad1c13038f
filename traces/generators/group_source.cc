// Grouped request streams (sessions, agent workflows); see group_source.h.
#include "traces/generators/group_source.h"

#include <fmt/format.h>

namespace servesim {

GroupSource::GroupSource(const ArrivalSpec& starts, std::int32_t clients, ClientTable& table, std::uint64_t seed,
                         std::uint64_t start_stream, std::string what)
    : starts_(starts, Rng::stream(seed, start_stream), std::move(what)), seed_(seed) {
  for (std::int32_t i = 0; i < clients; ++i) client_ids_.push_back(table.intern(generated_client_name(i, clients)));
}

bool GroupSource::start_group() {
  const std::optional<Time> start = starts_.next();
  if (!start) return false;
  const auto group = static_cast<std::uint64_t>(starts_.count());
  Rng rng = Rng::stream(seed_, group);
  const ClientId client = client_ids_[rng.below(client_ids_.size())];
  generate(group, *start, client, rng);
  return true;
}

std::string generated_client_name(std::int32_t index, std::int32_t count) {
  return count == 1 ? "default" : fmt::format("client-{}", index);
}

}  // namespace servesim
