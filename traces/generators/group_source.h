// GroupSource: the request stream of a generator that emits requests in groups
// (a session's turns, an agent workflow's calls) whose starts follow an
// ArrivalSpec. Group g (1-based, in start order) draws from its own Rng stream
// (seed, g), whose first draw picks its client uniformly among `clients`
// generated names (generated_client_name()); the subclass then appends the
// group's requests, all emitted before the next group starts.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/core/request_source.h"
#include "traces/generators/arrival_spec.h"

namespace servesim {

class GroupSource : public RequestSource {
 public:
  bool next(RequestSpec& out) final {
    if (queue_.empty() && !start_group()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }

 protected:
  // `start_stream`: the Rng stream of the start times; `what` names the
  // workload in errors ("workload (sessions)").
  GroupSource(const ArrivalSpec& starts, std::int32_t clients, ClientTable& table, std::uint64_t seed,
              std::uint64_t start_stream, std::string what);

  // Appends the requests of group `group` (starting at `start`, of `client`) to
  // queue(), ids from take_id(), drawing from `rng`.
  virtual void generate(std::uint64_t group, Time start, ClientId client, Rng& rng) = 0;

  std::deque<RequestSpec>& queue() { return queue_; }
  RequestId take_id() { return next_id_++; }
  RequestId requests() const { return next_id_; }     // ids handed out so far
  std::int64_t groups() const { return starts_.count(); }  // groups started so far

 private:
  bool start_group();

  ArrivalClock starts_;
  std::uint64_t seed_;
  std::vector<ClientId> client_ids_;
  RequestId next_id_ = 0;
  std::deque<RequestSpec> queue_;
};

// Names "client-0".."client-<n-1>", or just "default" when n == 1.
std::string generated_client_name(std::int32_t index, std::int32_t count);

}  // namespace servesim
