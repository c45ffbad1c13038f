// KvEviction: what the engine needs to know of a KV-eviction attention method
// (today AnDPro, attention_method.h): when a request's prefill completes, of
// its n context tokens the worker keeps kept_tokens(n) as a private compacted
// copy and frees the rest (sim/worker.h). The engine names no method; the
// wiring (configs/run_builder.cc) passes make_kv_eviction()'s object, or none.
// Contract: 0 <= kept_tokens(n) <= n, non-decreasing in n; const and
// deterministic (shared by all workers with the same method).
#pragma once
#include <cstdint>

namespace servesim {

class KvEviction {
 public:
  virtual ~KvEviction() = default;
  virtual std::int64_t kept_tokens(std::int64_t context_tokens) const = 0;
};

}  // namespace servesim
