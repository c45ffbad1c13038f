// Max-min fair bandwidth sharing of KV transfers; see transfer_network.h.
#include "sim/transfer_network.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/error.h"

namespace servesim {

TransferNetwork::TransferNetwork(std::vector<double> egress, std::vector<double> ingress)
    : egress_(std::move(egress)), ingress_(std::move(ingress)) {
  SIM_CHECK(egress_.size() == ingress_.size(), "transfer network: {} egress but {} ingress links", egress_.size(),
            ingress_.size());
  for (std::size_t i = 0; i < egress_.size(); ++i)
    SIM_CHECK(egress_[i] > 0 && ingress_[i] > 0, "transfer network: worker {} has a link without bandwidth", i);
}

void TransferNetwork::start(std::uint32_t id, WorkerId src, WorkerId dst, double bytes, Time now) {
  SIM_CHECK(src < egress_.size() && dst < ingress_.size() && bytes > 0, "bad transfer {}: {} -> {}, {} bytes", id, src,
            dst, bytes);
  advance(now);
  flows_.push_back(Flow{id, src, dst, bytes});
  reshare();
}

void TransferNetwork::complete(Time now, std::vector<std::uint32_t>& done) {
  advance(now);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    if (flows_[i].finish <= now)
      done.push_back(flows_[i].id);
    else
      flows_[kept++] = flows_[i];
  }
  flows_.resize(kept);
  reshare();
}

void TransferNetwork::advance(Time now) {
  SIM_CHECK(now >= last_, "transfer network went back in time ({} < {})", now, last_);
  const double dt = static_cast<double>(now - last_);
  for (Flow& f : flows_) f.remaining = std::max(0.0, f.remaining - f.rate * dt);
  last_ = now;
}

// Progressive filling: the link with the smallest fair share (capacity left /
// unfrozen flows on it) fixes that share for all its unfrozen flows; repeat.
void TransferNetwork::reshare() {
  next_finish_.reset();
  if (flows_.empty()) return;
  const std::size_t n = egress_.size();  // links: egress 0..n-1, ingress n..2n-1
  cap_.assign(2 * n, 0);
  users_.assign(2 * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    cap_[i] = egress_[i];
    cap_[n + i] = ingress_[i];
  }
  frozen_.assign(flows_.size(), false);
  for (const Flow& f : flows_) {
    users_[f.src]++;
    users_[n + f.dst]++;
  }
  std::size_t left = flows_.size();
  while (left > 0) {
    std::size_t best = 0;
    double share = std::numeric_limits<double>::infinity();
    for (const Flow& f : flows_) {  // only links that carry a flow
      for (std::size_t l : {static_cast<std::size_t>(f.src), n + f.dst}) {
        if (users_[l] <= 0) continue;
        const double s = cap_[l] / users_[l];
        if (s < share || (s == share && l < best)) share = s, best = l;
      }
    }
    for (std::size_t i = 0; i < flows_.size(); ++i) {
      Flow& f = flows_[i];
      if (frozen_[i] || (f.src != best && n + f.dst != best)) continue;
      frozen_[i] = true;
      f.rate = share;
      --left;
      for (std::size_t l : {static_cast<std::size_t>(f.src), n + f.dst}) {
        cap_[l] = std::max(0.0, cap_[l] - share);
        users_[l]--;
      }
    }
  }
  for (Flow& f : flows_) {
    const double ns = std::ceil(f.remaining / f.rate - 1e-9);
    f.finish = last_ + std::max<Time>(static_cast<Time>(ns), 0);
    if (!next_finish_ || f.finish < *next_finish_) next_finish_ = f.finish;
  }
}

}  // namespace servesim
