// Cross-field checks of native rows; see native_fields.h.
#include "traces/readers/native_fields.h"

#include <iterator>

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

void IdTracker::check(const TraceRow& row) const {
  const RequestId id = row.spec.id;
  auto it = runs_.upper_bound(id);
  if (it == runs_.begin()) return;
  --it;
  const Run& r = it->second;
  if (id > r.hi) return;
  const std::string earlier = r.lines_step ? fmt::format("line {}", r.first_line + static_cast<long>(id - it->first))
                                           : fmt::format("one of lines {}..{}", r.first_line, r.last_line);
  throw RowError{"id", fmt::format("duplicate request id {}: {} has the same id", id, earlier)};
}

void IdTracker::add(const TraceRow& row) {
  const RequestId id = row.spec.id;
  auto it = runs_.upper_bound(id);
  if (it != runs_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.hi + 1 == id) {
      Run& r = prev->second;
      r.lines_step = r.lines_step && row.line == r.last_line + 1;
      r.hi = id;
      r.last_line = row.line;
      return;
    }
  }
  runs_.emplace(id, Run{id, row.line, row.line, true});
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
