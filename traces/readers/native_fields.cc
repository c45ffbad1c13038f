// Cross-field checks of native rows; see native_fields.h.
#include "traces/readers/native_fields.h"

#include "sim/core/error.h"

namespace servesim {

void check_native_row(const TraceRow& row) {
  const RequestSpec& s = row.spec;
  if (!s.prefix_blocks.empty()) {
    if (s.prefix_block_size < 1)
      throw RowError{"prefix_block_size", fmt::format("expected a positive block size with prefix_blocks, got {}",
                                                      s.prefix_block_size)};
    const std::int64_t max_blocks = (s.prompt_tokens + s.prefix_block_size - 1) / s.prefix_block_size;
    if (static_cast<std::int64_t>(s.prefix_blocks.size()) > max_blocks)
      throw RowError{"prefix_blocks", fmt::format("{} blocks of {} tokens cover more than the {} prompt tokens",
                                                  s.prefix_blocks.size(), s.prefix_block_size, s.prompt_tokens)};
  }
}

void ParentTracker::check(const TraceRow& row) {
  const RequestSpec& s = row.spec;
  for (std::size_t i = 0; i < s.parents.size(); ++i) {
    const RequestId p = s.parents[i];
    if (p == s.id) throw RowError{"parents", fmt::format("request {} names itself as a parent", s.id)};
    for (std::size_t j = 0; j < i; ++j)
      if (s.parents[j] == p) throw RowError{"parents", fmt::format("parent {} is listed twice", p)};
    if (!open_.count(p))
      throw RowError{"parents", fmt::format("parent {} is not an earlier row with dependents left (a parent "
                                            "must come first and count this row in its `dependents`)",
                                            p)};
  }
  for (RequestId p : s.parents) {
    auto it = open_.find(p);
    if (--it->second == 0) open_.erase(it);
  }
  if (s.dependents > 0 && !open_.emplace(s.id, s.dependents).second)
    throw RowError{"id", fmt::format("duplicate id {}", s.id)};
}

}  // namespace servesim
