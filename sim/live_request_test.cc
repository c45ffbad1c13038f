// LiveRequest's layout (a speed contract, sim/live_request.h): aligned to a
// cache line, with every field the per-request passes of an iteration use in
// its first line (RequestHot, the element of a worker's hot array); its copies of the spec's client and output length match the
// spec. RequestTable hands out aligned slots.
#include <doctest/doctest.h>

#include <cstdint>

#include "sim/live_request.h"

using namespace servesim;

namespace {
// Byte offset of the end of a member inside r.
template <class M>
std::size_t end_of(const LiveRequest& r, const M& m) {
  return static_cast<std::size_t>(reinterpret_cast<const char*>(&m) - reinterpret_cast<const char*>(&r)) + sizeof(M);
}
}  // namespace

TEST_CASE("RequestHot is one cache line and comes first in LiveRequest") {
  // Workers keep running requests' RequestHot in a contiguous array (sim/worker.h):
  // one line per element, and the LiveRequest's copy is its first line.
  static_assert(sizeof(RequestHot) == 64 && alignof(RequestHot) == 64);
  static_assert(alignof(LiveRequest) == 64);
  LiveRequest r;
  CHECK(static_cast<const void*>(&static_cast<const RequestHot&>(r)) == static_cast<const void*>(&r));
  for (std::size_t end : {end_of(r, r.phase), end_of(r, r.kv_loading), end_of(r, r.client),
                          end_of(r, r.prefill_target), end_of(r, r.computed), end_of(r, r.generated),
                          end_of(r, r.kv_pages), end_of(r, r.compressed), end_of(r, r.shared_tokens),
                          end_of(r, r.output_tokens)})
    CHECK(end <= 64);
}

TEST_CASE("RequestTable slots are cache-line aligned and copy the spec's client and output length") {
  RequestTable t;
  for (int i = 0; i < 100; ++i) {
    RequestSpec spec;
    spec.client = static_cast<ClientId>(i % 7);
    spec.output_tokens = 1 + i;
    const RequestHandle h = t.add(std::move(spec));
    CHECK(reinterpret_cast<std::uintptr_t>(&t[h]) % 64 == 0);
    CHECK(t[h].client == t[h].spec.client);
    CHECK(t[h].output_tokens == t[h].spec.output_tokens);
    if (i % 3 == 0) t.release(h);  // reused slots get the new spec's copies
  }
}

TEST_CASE("RequestTable keeps a released request's block list buffer for the next request") {
  RequestTable t;
  CHECK(t.spare_blocks().capacity() == 0);  // nothing released yet
  RequestSpec spec;
  spec.prefix_blocks = {11, 12, 13, 14};
  const BlockHash* buffer = spec.prefix_blocks.data();
  const RequestHandle h = t.add(std::move(spec));
  CHECK(t[h].spec.prefix_blocks.data() == buffer);
  t.release(h);
  CHECK(t[h].spec.prefix_blocks.empty());
  std::vector<BlockHash> spare = t.spare_blocks();
  CHECK(spare.empty());
  CHECK(spare.data() == buffer);  // the same buffer, emptied
  CHECK(spare.capacity() >= 4);
  CHECK(t.spare_blocks().capacity() == 0);  // one spare per released slot
  // A copy into it of a list that fits reuses it (what the engine's source does).
  const std::vector<BlockHash> next = {21, 22, 23};
  spare = next;
  CHECK(spare.data() == buffer);
  CHECK(spare == next);
}
