// FcfsPolicy: first come, first served. Preempted requests go back to the
// front (as vLLM does), so a preemption does not cost a request its place.
// Head-of-line blocking is deliberate: when the oldest request does not fit,
// nothing behind it is admitted this step (vLLM's FCFS behaviour).
#pragma once
#include <deque>

#include "policies/local_policy.h"

namespace servesim {

class FcfsPolicy final : public LocalPolicy {
 public:
  void enqueue(const QueuedRequest& r) override {
    if (r.preempted)
      queue_.push_front(r);
    else
      queue_.push_back(r);
  }
  void schedule(AdmissionContext& ctx) override {
    while (!queue_.empty()) {
      if (ctx.try_admit(queue_.front()) != AdmitResult::kAdmitted) return;
      queue_.pop_front();
    }
  }
  std::size_t queued() const override { return queue_.size(); }

 private:
  std::deque<QueuedRequest> queue_;
};

}  // namespace servesim
