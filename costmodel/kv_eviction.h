// KvEviction: what the engine needs to know of a KV-eviction attention method
// (today AnDPro, attention_method.h): when a request's prefill completes, of
// its n context tokens the worker keeps kept_tokens(n) as a private compacted
// copy and frees the rest (sim/worker.h). The engine names no method; the
// wiring (configs/run_builder.cc) passes make_kv_eviction()'s object, or none.
// kept_tokens(n) is counted in tokens of all KV heads (the unit of the KV
// pages): when heads keep ragged lengths (AnDPro allocation layer_topk), it is
// the per-head average plus the layout's worst-case per-head page rounding
// (AndproParams::kept_tokens), so pages_for(kept_tokens(n)) is never less than
// the compacted copy's pages; the decode steps read that many tokens too.
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
