// DlpmPolicy: Deficit Longest Prefix Match (Cao et al., "Locality-aware Fair
// Scheduling in LLM Serving", 2025; seed 004 is the authority here). LPM's
// order, with Deficit Round Robin credit per client so that no client can
// monopolise the worker by sending many requests that share a long prefix.
//
// Per client i a deficit q_i (starts at 0). Each scheduling step:
//   a. sort waiting requests by cached prefix length, longest first (LPM);
//   b. walk the list: admit a request only if its client has q_i > 0 (and it
//      fits); skip it otherwise, however long its match; stop at the first
//      request that does not fit (budget or memory);
//   c. if the walk ends with requests left (all of clients with q_i <= 0) and
//      the batch still has room (token budget and a running slot), refill: add Q^u to every active client
//      (clients with waiting requests; `refill: all` adds it to every client
//      this worker has seen) and walk again. The number of refills needed for
//      some active client to become positive is computed in closed form,
//      k = min_i (floor(-q_i / Q^u) + 1), instead of looping;
//   d. charging: at a request's first admission subtract w_in × its extend
//      tokens (prompt tokens not in the prefix cache; `charge: prompt` uses all
//      prompt tokens); after each generated token subtract w_out.
// Small Q^u behaves like VTC (fair, less locality); large Q^u like LPM.
// Work conservation: a worker with room and waiting requests always admits
// (step c refills until someone is eligible), even when every q_i <= 0.
//
// Choices where the paper leaves room (parameters, defaults here): re-admission
// after a preemption is not charged again; a client's deficit persists while
// it is idle (it gets no refills then, so it cannot bank credit beyond Q^u).
#pragma once
#include <vector>

#include "sim/core/option_table.h"
#include "sim/core/service_weights.h"
#include "sim/core/yaml_map.h"
#include "policies/prefix_ordered_queue.h"

namespace servesim {

struct DlpmOptions {
  double quantum = 2048;      // Q^u, in service units (w_in·tokens + w_out·tokens)
  double w_in = kDefaultWIn;
  double w_out = kDefaultWOut;
  bool charge_extend = true;  // false: charge all prompt tokens
  bool refill_all = false;    // false: refill active clients only
};

class DlpmPolicy final : public LocalPolicy {
 public:
  explicit DlpmPolicy(DlpmOptions o) : o_(o) {}
  void enqueue(const QueuedRequest& r) override;
  std::size_t queued() const override { return queue_.size(); }
  void schedule(AdmissionContext& ctx) override;
  void on_decode_tokens(ClientId c, std::int64_t tokens) override;
  void on_decode_token_each(ClientId c, std::int64_t n) override;
  bool counts_decode_tokens() const override { return true; }
  bool finish_ignores_decode_tokens() const override { return true; }  // no on_finish
  bool defers_decode_tokens() const override { return true; }  // deficits are read in schedule() only

  double deficit(ClientId c) const { return c < deficit_.size() ? deficit_[c] : 0.0; }
  std::uint64_t refills() const { return refills_; }

 private:
  void grow(ClientId c);
  void refill();

  DlpmOptions o_;
  PrefixOrderedQueue queue_;
  std::vector<double> deficit_;
  std::vector<std::int64_t> waiting_;  // queued requests per client (active = > 0)
  std::uint64_t refills_ = 0;
};

// The parameters of `local: {name: dlpm, ...}`.
const OptionTable<DlpmOptions>& dlpm_option_table();

}  // namespace servesim
