// SjfPolicy: shortest job first by TRUE output length — an oracle (it reads
// RequestSpec::output_tokens, which a real server does not know; reports mark
// runs using it with oracle=true). The classic bound that learned rankers
// (vLLM-LTR, Fu et al., NeurIPS 2024) try to approach.
//
// Order: fewest output tokens first (ties: queue order). Admission stops at
// the first request that does not fit.
//
// Option srtf (false): shortest REMAINING output first (output − tokens
// already generated, which matters for requests preempted and re-queued),
// with preemption: when the next request does not fit (KV memory or the
// running-request cap), the running request with the most remaining output
// (if it has more than the waiting one; ties: the most recently admitted) is
// preempted by recomputation to make room. A full token budget ends the step
// instead (a preemption would not free budget this step).
#pragma once
#include <set>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "policies/local_policy.h"

namespace servesim {

struct SjfOptions {
  bool srtf = false;
};

class SjfPolicy final : public LocalPolicy {
 public:
  explicit SjfPolicy(SjfOptions o) : o_(o) {}

  void enqueue(const QueuedRequest& r) override {
    queue_.insert(Entry{remaining(r), r.preempted ? ++pre_ - (std::int64_t{1} << 62) : ++seq_, r});
  }
  std::size_t queued() const override { return queue_.size(); }

  void schedule(AdmissionContext& ctx) override {
    while (!queue_.empty()) {
      auto it = queue_.begin();
      const AdmitResult res = ctx.try_admit(it->q);
      if (res == AdmitResult::kAdmitted) {
        queue_.erase(it);
        continue;
      }
      if (!o_.srtf || res == AdmitResult::kBatchFull || !preempt_longer_than(ctx, it->key)) return;
    }
  }

 private:
  struct Entry {
    std::int64_t key;  // output tokens (SJF) or remaining output tokens (SRTF)
    std::int64_t seq;
    QueuedRequest q;
    bool operator<(const Entry& o) const { return key != o.key ? key < o.key : seq < o.seq; }
  };

  std::int64_t remaining(const QueuedRequest& r) const {
    if (!o_.srtf) return r.spec->output_tokens;
    // A preempted request re-prefills prompt + generated tokens: the excess is what it already produced.
    return r.spec->output_tokens - (r.prefill_tokens - r.spec->prompt_tokens);
  }

  bool preempt_longer_than(AdmissionContext& ctx, std::int64_t key) {
    ctx.running_requests(running_);
    const RunningRequest* victim = nullptr;
    std::int64_t most = key;
    for (const RunningRequest& r : running_) {
      const std::int64_t left = r.spec->output_tokens - r.generated;
      if (left >= most && (left > most || victim != nullptr)) {
        most = left;
        victim = &r;
      }
    }
    return victim != nullptr && ctx.preempt(victim->handle);
  }

  SjfOptions o_;
  std::set<Entry> queue_;
  std::vector<RunningRequest> running_;
  std::int64_t seq_ = 0, pre_ = 0;
};

// The parameters of `local: {name: sjf, ...}`.
inline const OptionTable<SjfOptions>& sjf_option_table() {
  static const OptionTable<SjfOptions> t = {
      {"srtf", &SjfOptions::srtf, OptionRange::kAny, "shortest remaining output first, with preemption"},
  };
  return t;
}

}  // namespace servesim
