// The load-oblivious and queue-length global policies:
//  - RoundRobinPolicy: worker (k mod N) for the k-th request.
//  - LeastOutstandingPolicy: fewest waiting + running requests; ties go to the
//    lowest worker index (deterministic).
//  - RandomPolicy: uniform over workers from a seeded generator.
#pragma once
#include <cstdint>

#include "policies/global_policy.h"

namespace servesim {

class RoundRobinPolicy final : public GlobalPolicy {
 public:
  WorkerId route(const RequestSpec&, const ClusterView& c) override {
    return static_cast<WorkerId>(next_++ % c.workers());
  }

 private:
  std::uint64_t next_ = 0;
};

class LeastOutstandingPolicy final : public GlobalPolicy {
 public:
  WorkerId route(const RequestSpec&, const ClusterView& c) override { return c.least_outstanding(); }
};

class RandomPolicy final : public GlobalPolicy {
 public:
  explicit RandomPolicy(std::uint64_t seed) : state_(seed ^ 0x9E3779B97F4A7C15ull) {}
  WorkerId route(const RequestSpec&, const ClusterView& c) override {
    // splitmix64: tiny, fast, and identical on every platform.
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<WorkerId>(z % c.workers());
  }

 private:
  std::uint64_t state_;
};

}  // namespace servesim
