// Deficit LPM; see dlpm_policy.h.
#include "policies/dlpm_policy.h"

#include <cmath>
#include <limits>

#include "sim/core/service_weights.h"

namespace servesim {

void DlpmPolicy::grow(ClientId c) {
  if (c >= deficit_.size()) {
    deficit_.resize(c + 1, 0.0);
    waiting_.resize(c + 1, 0);
  }
}

void DlpmPolicy::enqueue(const QueuedRequest& r) {
  grow(r.spec->client);
  waiting_[r.spec->client]++;
  queue_.push(r);
}

void DlpmPolicy::on_decode_tokens(ClientId c, std::int64_t tokens) {
  grow(c);
  deficit_[c] -= o_.w_out * static_cast<double>(tokens);
}

void DlpmPolicy::on_decode_token_each(ClientId c, std::int64_t n) {
  grow(c);
  const double one = o_.w_out * 1.0;  // on_decode_tokens(c, 1)'s charge
  deficit_[c] = charge_repeated(deficit_[c], -one, n);  // (d - one == d + -one, exactly)
}

// Closed form of "add Q^u to every active client until one is positive".
// REQUIRES: every active client has q_i <= 0 and at least one is active.
void DlpmPolicy::refill() {
  double k = std::numeric_limits<double>::infinity();
  for (ClientId c = 0; c < deficit_.size(); ++c)
    if (waiting_[c] > 0) k = std::min(k, std::floor(-deficit_[c] / o_.quantum) + 1);
  for (ClientId c = 0; c < deficit_.size(); ++c)
    if (o_.refill_all || waiting_[c] > 0) deficit_[c] += k * o_.quantum;
  refills_ += static_cast<std::uint64_t>(k);
}

void DlpmPolicy::schedule(AdmissionContext& ctx) {
  // Without token budget or a running slot nothing can be admitted: the first
  // try_admit would fail at once (before any refill). Re-reading the matches would
  // change no result either (a match memo gives the same match whenever it is next
  // read, and the sort's order is a function of the keys), so the step is skipped.
  if (queue_.empty() || !ctx.has_room()) return;
  queue_.refresh_by_match(ctx);
  auto& es = queue_.entries();
  std::size_t left = es.size();
  for (;;) {
    bool stopped = false;
    for (auto& e : es) {
      if (e.taken) continue;
      const ClientId c = e.q.spec->client;
      if (deficit_[c] <= 0) continue;
      const std::int64_t cached = ctx.cached_tokens(e.q);  // now: earlier admissions may have evicted
      if (ctx.try_admit(e.q) != AdmitResult::kAdmitted) {
        stopped = true;
        break;
      }
      e.taken = true;
      --left;
      waiting_[c]--;
      if (!e.q.preempted) {
        const std::int64_t input = o_.charge_extend ? e.q.prefill_tokens - cached : e.q.spec->prompt_tokens;
        deficit_[c] -= o_.w_in * static_cast<double>(input);
      }
    }
    if (stopped || left == 0 || !ctx.has_room()) break;
    refill();  // every remaining request belongs to a client with q_i <= 0
  }
  queue_.compact();
}

const OptionTable<DlpmOptions>& dlpm_option_table() {
  using R = OptionRange;
  static const OptionTable<DlpmOptions> t = {
      {"quantum", &DlpmOptions::quantum, R::kPositive, "Q^u, in service units"},
      {"w_in", &DlpmOptions::w_in, R::kNonNegative, "charge per input token"},
      {"w_out", &DlpmOptions::w_out, R::kNonNegative, "charge per output token"},
      {"charge", choice(&DlpmOptions::charge_extend, "extend", "prompt"), R::kAny,
       "extend: uncached prompt tokens; prompt: all prompt tokens"},
      {"refill", choice(&DlpmOptions::refill_all, "all", "active"), R::kAny,
       "active: clients with waiting requests get Q^u; all: every client this worker has seen"},
  };
  return t;
}

}  // namespace servesim
