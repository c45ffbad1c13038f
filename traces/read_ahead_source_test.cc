// ReadAheadSource (traces/read_ahead_source.h): the same stream and the same
// client table as its inner source, threaded or not; the inner source's error
// comes after every request before it; destroying it early does not hang.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "traces/read_ahead_source.h"

using namespace servesim;

namespace {

// Request i: client "c<i / 700>" (a new name every 700 requests, registered as
// it is met, like a trace reader's), prompt i + 1, two prefix blocks. Throws
// InputError at request `fail_at`.
class NamingSource : public RequestSource {
 public:
  NamingSource(ClientTable& clients, std::uint64_t count, std::uint64_t fail_at = ~std::uint64_t{0})
      : clients_(clients), count_(count), fail_at_(fail_at) {
    clients_.intern("first");  // registered when opened
  }
  bool next(RequestSpec& out) override {
    if (i_ == fail_at_) throw InputError(fmt::format("t.csv:{}: field 'x': bad", i_ + 2));
    if (i_ >= count_) return false;
    out.id = i_;
    out.client = clients_.intern("c" + std::to_string(i_ / 700));
    out.arrival = static_cast<Time>(i_);
    out.prompt_tokens = static_cast<std::int64_t>(i_) + 1;
    out.output_tokens = 1;
    out.prefix_blocks = {i_, i_ + 1};
    ++i_;
    return true;
  }
  std::string describe() const override { return "counting"; }

 private:
  ClientTable& clients_;
  std::uint64_t count_, fail_at_, i_ = 0;
};

struct ReadAheadPull {
  std::vector<RequestSpec> specs;
  std::vector<std::string> names;
  std::string error;
};

bool same_spec(const RequestSpec& a, const RequestSpec& b) {
  return a.id == b.id && a.client == b.client && a.arrival == b.arrival && a.prompt_tokens == b.prompt_tokens &&
         a.output_tokens == b.output_tokens && a.prefix_blocks == b.prefix_blocks;
}

// Pulls everything; with `ahead`, through a ReadAheadSource (threaded or not).
ReadAheadPull pull_all(std::uint64_t count, std::uint64_t fail_at, bool ahead, bool threaded, bool* started = nullptr) {
  ReadAheadPull p;
  ClientTable clients;
  clients.intern("before");  // a table with a name already: the ids must still agree
  std::unique_ptr<RequestSource> src;
  if (ahead)
    src = std::make_unique<ReadAheadSource>(
        [&](ClientTable& t) { return std::make_unique<NamingSource>(t, count, fail_at); }, clients, threaded);
  else
    src = std::make_unique<NamingSource>(clients, count, fail_at);
  try {
    RequestSpec r;
    while (src->next(r)) {
      REQUIRE(r.client < clients.size());  // its name is known when the request is seen
      p.specs.push_back(r);
    }
    CHECK(!src->next(r));  // the end stays the end
  } catch (const InputError& e) {
    p.error = e.what();
  }
  if (started) *started = ahead && static_cast<ReadAheadSource&>(*src).threaded_now();
  p.names = clients.names();
  return p;
}

void check_same_pull(const ReadAheadPull& a, const ReadAheadPull& b) {
  REQUIRE(a.specs.size() == b.specs.size());
  for (std::size_t i = 0; i < a.specs.size(); ++i) REQUIRE(same_spec(a.specs[i], b.specs[i]));
  CHECK(a.names == b.names);
  CHECK(a.error == b.error);
}

}  // namespace

TEST_CASE("a read-ahead source gives its inner source's requests and client names, threaded or not") {
  const std::uint64_t none = ~std::uint64_t{0};
  for (const std::uint64_t count : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{ReadAheadSource::kInline},
                                    std::uint64_t{ReadAheadSource::kInline + 1}, std::uint64_t{30'011}}) {
    CAPTURE(count);
    const ReadAheadPull direct = pull_all(count, none, false, false);
    bool started = false;
    check_same_pull(pull_all(count, none, true, true, &started), direct);
    CHECK(started == (count >= ReadAheadSource::kInline));  // small streams stay on one thread
    check_same_pull(pull_all(count, none, true, false, &started), direct);
    CHECK(!started);
  }
}

TEST_CASE("a read-ahead source throws its inner source's error after every request before it") {
  for (const std::uint64_t fail_at : {std::uint64_t{3}, std::uint64_t{ReadAheadSource::kInline + 2},
                                      std::uint64_t{12'345}}) {
    CAPTURE(fail_at);
    const ReadAheadPull direct = pull_all(20'000, fail_at, false, false);
    CHECK(direct.specs.size() == fail_at);
    CHECK(direct.error == fmt::format("t.csv:{}: field 'x': bad", fail_at + 2));
    check_same_pull(pull_all(20'000, fail_at, true, true), direct);
    check_same_pull(pull_all(20'000, fail_at, true, false), direct);
  }
}

TEST_CASE("a read-ahead source destroyed mid-stream stops its thread") {
  ClientTable clients;
  ReadAheadSource src([&](ClientTable& t) { return std::make_unique<NamingSource>(t, 1'000'000); }, clients);
  RequestSpec r;
  for (int i = 0; i < 5000; ++i) REQUIRE(src.next(r));
  CHECK(r.id == 4999);
  CHECK(src.threaded_now());
  CHECK(src.describe() == "counting");
}  // the destructor joins the thread (which may be waiting for room)

TEST_CASE("ReadAheadSource copies a request into the caller's block list buffer when it fits") {
  ClientTable clients;
  ReadAheadSource src([&](ClientTable& t) { return std::make_unique<NamingSource>(t, 3000); }, clients, true);
  RequestSpec r;
  std::uint64_t pulled = 0;
  for (; pulled < ReadAheadSource::kInline + 100; ++pulled) REQUIRE(src.next(r));
  if (!src.threaded_now()) {
    MESSAGE("no thread could be started: the copy path is not taken");
    return;
  }
  // The engine hands the source an emptied buffer of a released request (sim/live_request.h).
  for (int k = 0; k < 100; ++k, ++pulled) {
    std::vector<BlockHash> buffer;
    buffer.reserve(8);
    const BlockHash* data = buffer.data();
    r.prefix_blocks = std::move(buffer);
    REQUIRE(src.next(r));
    CHECK(r.prefix_blocks.data() == data);
    CHECK(r.prefix_blocks == std::vector<BlockHash>{pulled, pulled + 1});
    CHECK(r.id == pulled);
  }
}
