// LiveRequest's layout (a speed contract, sim/live_request.h): aligned to a
// cache line, the fields batch building reads in the first line, the rest of
// what applying an iteration reads (first_token, decode_worker, spec's client
// and output_tokens) within the second. RequestTable hands out aligned slots.
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

TEST_CASE("LiveRequest keeps the batch-building fields in its first cache line") {
  static_assert(alignof(LiveRequest) == 64);
  LiveRequest r;
  for (std::size_t end : {end_of(r, r.phase), end_of(r, r.kv_loading), end_of(r, r.prefill_target),
                          end_of(r, r.computed), end_of(r, r.generated), end_of(r, r.kv_pages),
                          end_of(r, r.compressed), end_of(r, r.shared_tokens)})
    CHECK(end <= 64);
  for (std::size_t end : {end_of(r, r.first_token), end_of(r, r.decode_worker), end_of(r, r.spec.client),
                          end_of(r, r.spec.output_tokens)})
    CHECK(end <= 128);
}

TEST_CASE("RequestTable slots are cache-line aligned") {
  RequestTable t;
  for (int i = 0; i < 100; ++i) {
    const RequestHandle h = t.add(RequestSpec{});
    CHECK(reinterpret_cast<std::uintptr_t>(&t[h]) % 64 == 0);
  }
}
