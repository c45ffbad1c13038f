// PoolView: a ClusterView restricted to some of the cluster's workers, with
// indices mapped (local index i = members()[i] in the whole cluster). In PD
// mode the engine routes prefills through a view of the prefill-capable
// workers and picks decode workers through a view of the decode-capable ones,
// so a global policy written for a whole cluster (D²LPM, Preble E2, ...) works
// unchanged on one pool (docs/simulation.md, "Prefill/decode disaggregation").
#pragma once
#include <vector>

#include "policies/global_policy.h"
#include "sim/core/error.h"

namespace servesim {

class PoolView final : public ClusterView {
 public:
  PoolView(const ClusterView& all, std::vector<WorkerId> members) : all_(all), members_(std::move(members)) {
    local_.assign(all.workers(), kNone);
    for (std::size_t i = 0; i < members_.size(); ++i) local_[members_[i]] = static_cast<WorkerId>(i);
  }
  Time now() const override { return all_.now(); }
  std::size_t workers() const override { return members_.size(); }
  WorkerLoad load(WorkerId w) const override { return all_.load(members_[w]); }
  std::int64_t outstanding(WorkerId w) const override { return all_.outstanding(members_[w]); }
  const CostModel& cost_model(WorkerId w) const override { return all_.cost_model(members_[w]); }
  KvLocality locality(WorkerId w, const RequestSpec& r) const override { return all_.locality(members_[w], r); }

  // The cluster index of local index `w` (a policy's answer). REQUIRES: w < workers().
  WorkerId global(WorkerId w) const {
    SIM_CHECK(w < members_.size(), "policy chose worker {} of a pool of {}", w, members_.size());
    return members_[w];
  }
  // The local index of cluster worker `w`; kNone when it is not in the pool.
  WorkerId local(WorkerId w) const { return local_[w]; }
  bool contains(WorkerId w) const { return local_[w] != kNone; }
  const std::vector<WorkerId>& members() const { return members_; }
  static constexpr WorkerId kNone = ~WorkerId{0};

 private:
  const ClusterView& all_;
  std::vector<WorkerId> members_;
  std::vector<WorkerId> local_;
};

}  // namespace servesim
