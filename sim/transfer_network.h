// TransferNetwork: KV transfers between workers as flows over shared links
// (docs/simulation.md, "KV transfer"). Every worker has one egress and one
// ingress link (bytes/ns = GB/s); a transfer from s to d uses s's egress and
// d's ingress. Bandwidth is shared max-min fairly (progressive filling) and
// re-divided whenever a transfer starts or ends, so a transfer's duration
// depends on what else moves at the same time (contention), not on a fixed
// delay. Rates are constant between two changes, so each transfer's finish
// time is exact: now + ceil(remaining bytes / rate) ns.
//
// The engine calls start() and, at next_finish(), complete(); both re-divide
// the bandwidth. Deterministic: transfers are kept and served in start order.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/request.h"
#include "sim/core/time.h"

namespace servesim {

class TransferNetwork {
 public:
  // Per worker, bytes per ns (= GB/s) of its egress and ingress links.
  TransferNetwork(std::vector<double> egress, std::vector<double> ingress);

  // A transfer of `bytes` (> 0) from `src` to `dst` begins its data phase at `now`.
  void start(std::uint32_t id, WorkerId src, WorkerId dst, double bytes, Time now);
  // Earliest finish time among active transfers (none: nothing moves).
  std::optional<Time> next_finish() const { return next_finish_; }
  // Removes every transfer finishing at or before `now` and appends its id to `done`.
  void complete(Time now, std::vector<std::uint32_t>& done);
  std::size_t active() const { return flows_.size(); }

 private:
  struct Flow {
    std::uint32_t id;
    WorkerId src, dst;
    double remaining;  // bytes
    double rate = 0;   // bytes per ns
    Time finish = 0;
  };
  void advance(Time now);  // deducts progress since last_
  void reshare();          // max-min fair rates and finish times from last_

  std::vector<double> egress_, ingress_;
  std::vector<Flow> flows_;
  Time last_ = 0;
  std::optional<Time> next_finish_;
  // Scratch for reshare().
  std::vector<double> cap_;
  std::vector<std::int32_t> users_;
  std::vector<bool> frozen_;
};

}  // namespace servesim
