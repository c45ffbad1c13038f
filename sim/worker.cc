// Continuous batching on one worker; see worker.h for the iteration contract.
#include "sim/worker.h"

#include <algorithm>

namespace servesim {

Worker::Worker(WorkerId id, std::unique_ptr<LocalPolicy> policy, std::shared_ptr<const CostModel> cost,
               BatchingOptions opt, std::int64_t kv_capacity_pages, std::int64_t page_size, RequestTable& table)
    : id_(id), policy_(std::move(policy)), cost_(std::move(cost)), opt_(opt), kv_(kv_capacity_pages, page_size),
      table_(table) {
  stats_.kv_capacity_pages = kv_capacity_pages;
}

bool Worker::fits_alone(const RequestSpec& spec) const {
  return kv_.pages_for(spec.prompt_tokens + spec.output_tokens) <= kv_.capacity();
}

std::int64_t Worker::running_context_tokens() const {
  std::int64_t n = 0;
  for (RequestHandle h : running_) n += table_[h].computed + table_[h].generated;
  return n;
}

void Worker::enqueue(RequestHandle h, Time now) {
  LiveRequest& r = table_[h];
  SIM_CHECK(r.phase == Phase::kPending || r.phase == Phase::kQueued, "request {} enqueued in phase {}", r.spec.id,
            static_cast<int>(r.phase));
  r.phase = Phase::kQueued;
  r.worker = id_;
  r.prefill_target = r.spec.prompt_tokens;
  r.computed = 0;
  pending_prefill_tokens_ += r.prefill_target;
  ++waiting_;
  stats_.peak_waiting = std::max(stats_.peak_waiting, waiting_);
  policy_->enqueue(QueuedRequest{h, &r.spec, now, r.prefill_target, false});
}

// Private KV tokens a request holds once this step's token is written:
// its computed context (minus the shared cached prefix) plus generated tokens.
std::int64_t Worker::private_tokens_after_step(const LiveRequest& r) const {
  return r.prefill_target - r.cached + r.generated;
}

void Worker::preempt(RequestHandle h) {
  LiveRequest& r = table_[h];
  kv_.release(r.kv_pages);
  r.kv_pages = 0;
  auto it = std::find(running_.begin(), running_.end(), h);
  SIM_CHECK(it != running_.end(), "preempted request {} is not running", r.spec.id);
  running_.erase(it);
  pending_prefill_tokens_ -= r.prefill_target - r.computed;
  // Recomputation: the prompt and every generated token are prefilled again;
  // the iteration that completes it produces the next token.
  r.prefill_target = r.spec.prompt_tokens + r.generated;
  r.computed = 0;
  r.cached = 0;
  r.phase = Phase::kQueued;
  r.preemptions++;
  stats_.preemptions++;
  pending_prefill_tokens_ += r.prefill_target;
  ++waiting_;
  policy_->enqueue(QueuedRequest{h, &r.spec, now_, r.prefill_target, true});
}

void Worker::schedule_decodes() {
  for (std::size_t i = 0; i < running_.size() && budget_ > 0; ++i) {
    RequestHandle h = running_[i];
    LiveRequest& r = table_[h];
    if (r.phase != Phase::kDecode) continue;
    std::int64_t need = kv_.pages_for(private_tokens_after_step(r)) - r.kv_pages;
    bool self_preempted = false;
    while (need > 0 && !kv_.try_alloc(need)) {
      RequestHandle victim = running_.back();
      preempt(victim);
      if (victim == h) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;  // h was the last running request
    r.kv_pages += std::max<std::int64_t>(need, 0);
    items_.push_back({h, 1, false});
    shape_.decode_contexts.push_back(r.prefill_target + r.generated - 1);
    --budget_;
  }
}

void Worker::add_prefill_chunk(RequestHandle h) {
  LiveRequest& r = table_[h];
  std::int64_t n = std::min({r.prefill_target - r.computed, opt_.chunk_size, budget_});
  if (n <= 0) return;
  items_.push_back({h, n, true});
  shape_.prefills.push_back(PrefillChunk{n, r.computed, r.computed + n == r.prefill_target});
  budget_ -= n;
}

void Worker::schedule_prefill_chunks() {
  for (RequestHandle h : running_) {
    if (budget_ <= 0) return;
    if (table_[h].phase == Phase::kPrefill) add_prefill_chunk(h);
  }
}

AdmitResult Worker::try_admit(const QueuedRequest& q) {
  if (budget_ <= 0 || static_cast<std::int64_t>(running_.size()) >= opt_.max_running) return AdmitResult::kBatchFull;
  LiveRequest& r = table_[q.handle];
  SIM_CHECK(r.phase == Phase::kQueued && r.worker == id_, "policy proposed request {} that is not queued here",
            r.spec.id);
  const std::int64_t need = kv_.pages_for(r.prefill_target - r.cached);
  const std::int64_t reserve =
      running_.empty() ? 0 : static_cast<std::int64_t>(opt_.reservation_ratio * static_cast<double>(kv_.capacity()));
  if (kv_.free() - need < reserve || !kv_.try_alloc(need)) return AdmitResult::kNoMemory;
  r.kv_pages = need;
  r.phase = Phase::kPrefill;
  r.computed = r.cached;
  pending_prefill_tokens_ -= r.cached;
  if (!r.admitted) {
    r.admitted = now_;
    stats_.admitted++;
    stats_.prompt_tokens += r.spec.prompt_tokens;
    stats_.cached_tokens += r.cached;
  }
  --waiting_;
  running_.push_back(q.handle);
  stats_.peak_running = std::max<std::int64_t>(stats_.peak_running, static_cast<std::int64_t>(running_.size()));
  add_prefill_chunk(q.handle);
  return AdmitResult::kAdmitted;
}

Time Worker::start_iteration(Time now) {
  SIM_CHECK(!busy_, "worker {} started an iteration while busy", id_);
  now_ = now;
  items_.clear();
  shape_.clear();
  budget_ = opt_.max_batch_tokens;
  if (opt_.mode == BatchMode::kMixed) {
    schedule_decodes();
    schedule_prefill_chunks();
    policy_->schedule(*this);
  } else {
    schedule_prefill_chunks();
    policy_->schedule(*this);
    if (items_.empty()) schedule_decodes();
  }
  SIM_CHECK(policy_->queued() == static_cast<std::size_t>(waiting_),
            "worker {}: local policy holds {} requests but {} are waiting (a request was lost or duplicated)", id_,
            policy_->queued(), waiting_);
  SIM_CHECK(!(running_.empty() && waiting_ > 0),
            "worker {} would idle with {} waiting requests: the local policy admitted nothing to an empty worker "
            "(work conservation)",
            id_, waiting_);
  check_invariants();
  if (items_.empty()) return 0;
  Time t = cost_->iteration_time(shape_);
  SIM_CHECK(t > 0, "cost model returned {} ns for a non-empty batch", t);
  busy_ = true;
  stats_.iterations++;
  stats_.busy_ns += t;
  stats_.peak_kv_pages = std::max(stats_.peak_kv_pages, kv_.used());
  return t;
}

void Worker::finish_iteration(Time now, std::vector<RequestHandle>& done) {
  SIM_CHECK(busy_, "worker {} finished an iteration it did not start", id_);
  busy_ = false;
  bool any_finished = false;
  for (const Item& it : items_) {
    LiveRequest& r = table_[it.h];
    if (it.prefill) {
      r.computed += it.tokens;
      pending_prefill_tokens_ -= it.tokens;
      stats_.prefill_tokens += it.tokens;
      if (r.computed < r.prefill_target) continue;
      r.phase = Phase::kDecode;
    } else {
      stats_.decode_tokens += 1;
      policy_->on_decode_tokens(r.spec.client, 1);
    }
    // The iteration that completes a prefill, and every decode step, yields one token.
    r.generated += 1;
    if (!r.first_token) r.first_token = now;
    if (r.generated >= r.spec.output_tokens) {
      r.phase = Phase::kFinished;
      kv_.release(r.kv_pages);
      r.kv_pages = 0;
      stats_.finished++;
      policy_->on_finish(r.spec);
      done.push_back(it.h);
      any_finished = true;
    }
  }
  if (any_finished)
    std::erase_if(running_, [this](RequestHandle h) { return table_[h].phase == Phase::kFinished; });
}

void Worker::check_invariants() const {
  SIM_CHECK(kv_.used() <= kv_.capacity(), "worker {}: KV used {} > capacity {}", id_, kv_.used(), kv_.capacity());
  SIM_CHECK(static_cast<std::int64_t>(running_.size()) <= opt_.max_running, "worker {}: {} running > max {}", id_,
            running_.size(), opt_.max_running);
  SIM_CHECK(budget_ >= 0, "worker {}: token budget overdrawn ({})", id_, budget_);
}

}  // namespace servesim
