// Continuous batching on one worker; see worker.h for the iteration contract.
#include "sim/worker.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {

Worker::Worker(WorkerId id, std::unique_ptr<LocalPolicy> policy, std::shared_ptr<const CostModel> cost,
               BatchingOptions opt, std::int64_t kv_capacity_pages, std::int64_t page_size, RequestTable& table,
               RunObserver* observer, std::shared_ptr<const KvEviction> kv_eviction)
    : id_(id),
      policy_(std::move(policy)),
      counts_tokens_(policy_->counts_decode_tokens()),
      tokens_first_(counts_tokens_ && policy_->finish_ignores_decode_tokens()),
      holds_tokens_(tokens_first_ && policy_->defers_decode_tokens()),
      cost_(std::move(cost)), opt_(opt), table_(table), observer_(observer),
      eviction_(std::move(kv_eviction)), kvm_(id, kv_capacity_pages, page_size, table, stats_) {
  stats_.kv_capacity_pages = kv_capacity_pages;
  lane_allowed_ = opt_.mode == BatchMode::kMixed && opt_.decode_lane && kv().page_size() <= kLaneMaxPageSize;
  lane_elides_contexts_ = !cost_->reads_decode_contexts();
}

void Worker::set_kv_tiers(const KvTiersConfig& c, double kv_bytes_per_token, double default_host_gbps) {
  kvm_.set_tiers(c, kv_bytes_per_token, default_host_gbps);
}

bool Worker::fits_alone(const RequestSpec& spec) const {
  return kvm_.pages_for(spec.prompt_tokens + spec.output_tokens) <= kv().capacity();
}


void Worker::enqueue(RequestHandle h, Time now) {
  LiveRequest& r = table_[h];
  SIM_CHECK(r.phase == Phase::kPending || r.phase == Phase::kQueued, "request {} enqueued in phase {}", r.spec.id,
            static_cast<int>(r.phase));
  r.phase = Phase::kQueued;
  r.worker = id_;
  r.prefill_target = r.spec.prompt_tokens;
  r.computed = 0;
  r.match = PrefixMatch{};
  pending_prefill_tokens_ += r.prefill_target;
  ++waiting_;
  sync_load();
  stats_.peak_waiting = std::max(stats_.peak_waiting, waiting_);
  if (observer_) observer_->on_queued(r.spec.client, now);
  policy_->enqueue(QueuedRequest{h, &r.spec, now, r.prefill_target, false});
}

// Private KV tokens a request holds once this step's token is written:
// its computed context (minus the shared cached prefix) plus generated tokens.
std::int64_t Worker::private_tokens_after_step(const RequestHot& r) {
  if (r.compressed > 0) return r.compressed + r.generated;  // the compacted copy holds the whole context
  return r.prefill_target - r.shared_tokens + r.generated;
}

std::int64_t Worker::kv_tokens(const RequestHot& r) {
  return (r.compressed > 0 ? r.compressed : r.computed) + r.generated;
}

// KV eviction: the request keeps kept_tokens(n) of its n context tokens, compacted
// out of place into fresh private pages (allocated first; without room it
// stays uncompressed). Its old private pages are freed and its cache path
// unlocked: the uncompressed shared prompt stays cached (evictable), and the
// compressed copy is the request's own. Time is charged by the cost model.
void Worker::evict_after_prefill(LiveRequest& r) {
  const std::int64_t kept = eviction_->kept_tokens(r.prefill_target);
  if (kept >= r.prefill_target) return;  // nothing to evict
  if (!kvm_.compact(r, kept)) return;
  context_tokens_ -= r.computed - kept;
  r.compressed = kept;
  stats_.kv_evicted_tokens += r.computed - kept;
}

std::int64_t Worker::cached_tokens(const QueuedRequest& q) const { return kvm_.match(q.handle).tokens; }

std::uint64_t Worker::uncached_prefix_key(const QueuedRequest& q) const { return kvm_.uncached_prefix_key(q.handle); }

void Worker::preempt_now(std::size_t i) {
  const RequestHandle h = running_[i];
  LiveRequest& r = sync_out(i);
  release_private(r);
  context_tokens_ -= kv_tokens(r);
  if (r.phase == Phase::kPrefill) --prefilling_;
  r.kv_loading = false;  // a store load in flight is forgotten
  r.compressed = 0;  // recomputation prefills (and compresses) the whole context again
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
  hot_.erase(hot_.begin() + static_cast<std::ptrdiff_t>(i));
  for (Item& it : items_) {  // later requests moved down by one (i itself has no item: dropped or never added)
    SIM_CHECK(it.i != i, "worker {}: preempted request {} still has an item in the batch", id_, r.spec.id);
    if (it.i > i) --it.i;
  }
  pending_prefill_tokens_ -= r.prefill_target - r.computed;
  // Recomputation: the prompt and every generated token are prefilled again
  // (minus whatever the prefix cache still holds at re-admission); the
  // iteration that completes it produces the next token.
  r.prefill_target = r.spec.prompt_tokens + r.generated;
  r.computed = 0;
  r.match = PrefixMatch{};
  r.phase = Phase::kQueued;
  r.preemptions++;
  stats_.preemptions++;
  pending_prefill_tokens_ += r.prefill_target;
  ++waiting_;
  sync_load();  // (one running fewer, one waiting more: the load slot is current again)
  if (observer_) observer_->on_queued(r.spec.client, now_);
  policy_->enqueue(QueuedRequest{h, &r.spec, now_, r.prefill_target, true});
}

void Worker::drop_from_batch(std::size_t k) {
  write_lane_contexts();  // (the sums go: the pricer sums the values)
  std::size_t same_kind = 0;
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].i != k) continue;
    const Item it = items_[i];
    for (std::size_t j = 0; j < i; ++j) same_kind += items_[j].prefill == it.prefill ? 1 : 0;
    if (it.prefill)
      shape_.prefills.erase(shape_.prefills.begin() + static_cast<std::ptrdiff_t>(same_kind));
    else {
      shape_.decode_contexts.erase(shape_.decode_contexts.begin() + static_cast<std::ptrdiff_t>(same_kind));
      shape_.decode_sums.reset();  // (the lane's sums included the dropped context)
    }
    budget_ += it.tokens;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

void Worker::running_requests(std::vector<RunningRequest>& out) const {
  // The policy reads generated counts: the lane's deferred steps are written back,
  // and a policy that reads the running set keeps the lane off on this worker.
  // Logically const (the deferred counts become explicit; nothing observable
  // changes), and no Worker is ever a const object, so the cast is defined.
  auto* self = const_cast<Worker*>(this);
  self->lane_flush();
  self->lane_allowed_ = false;
  out.clear();
  for (std::size_t i = 0; i < running_.size(); ++i)
    out.push_back(RunningRequest{running_[i], &table_[running_[i]].spec, hot_[i].generated});
}

std::size_t Worker::index_of(RequestHandle h) const {
  return static_cast<std::size_t>(std::find(running_.begin(), running_.end(), h) - running_.begin());
}

void Worker::push_running(RequestHandle h, const LiveRequest& r) {
  running_.push_back(h);
  hot_.push_back(static_cast<const RequestHot&>(r));
  sync_load();
  if (r.client >= client_slot_.size()) client_slot_.resize(r.client + 1, 0);  // count_output_token's room
  stats_.peak_running = std::max<std::int64_t>(stats_.peak_running, static_cast<std::int64_t>(running_.size()));
}

void Worker::report_held_tokens() {
  for (const ClientId c : held_clients_) {
    policy_->on_decode_token_each(c, held_tokens_[c]);
    held_tokens_[c] = 0;
  }
  held_clients_.clear();
}

void Worker::write_back() {
  lane_flush();
  for (std::size_t i = 0; i < running_.size(); ++i) sync_out(i);
}

bool Worker::preempt(RequestHandle h) {
  lane_flush();  // preemption reads and moves running requests (the lane stays off here)
  lane_allowed_ = false;
  const std::size_t i = index_of(h);
  if (i == running_.size()) return false;
  drop_from_batch(i);
  preempt_now(i);
  return true;
}

void Worker::schedule_decodes() {
  // A step needs a page only when its tokens outgrow the pages held: checked by
  // a multiplication (exact below max_exact pages), the division only then.
  // The budget and the running count live in locals (the pushes below could
  // alias the members, which would make the compiler reload them each time).
  const std::int64_t page_size = kv().page_size();
  const std::int64_t max_exact = max_exact_pages();
  std::size_t n = running_.size();
  std::int64_t budget = budget_;
  items_.reserve(items_.size() + n);  // the pushes below never reallocate
  shape_.decode_contexts.reserve(shape_.decode_contexts.size() + n);
  for (std::size_t i = 0; i < n && budget > 0; ++i) {
    RequestHot& r = hot_[i];  // stays valid: preemption below only erases from the back
    if (r.phase != Phase::kDecode) continue;
    const std::int64_t tokens = private_tokens_after_step(r);
    if (!(r.kv_pages >= 0 && r.kv_pages <= max_exact && tokens <= r.kv_pages * page_size)) {
      const std::int64_t need = kvm_.pages_for(tokens) - r.kv_pages;
      bool self_preempted = false;
      while (need > 0 && !kvm_.alloc(need)) {
        const std::size_t victim = running_.size() - 1;
        preempt_now(victim);  // has no item yet (victim > i) or is this request
        if (victim == i) {
          self_preempted = true;
          break;
        }
      }
      if (self_preempted) break;  // it was the last running request
      n = running_.size();
      r.kv_pages += std::max<std::int64_t>(need, 0);
    }
    items_.push_back({1, static_cast<std::uint32_t>(i), false});
    shape_.decode_contexts.push_back(kv_tokens(r) - 1);  // the compacted context when evicted
    --budget;
  }
  budget_ = budget;
}

void Worker::add_prefill_chunk(std::size_t i) {
  const RequestHot& r = hot_[i];
  std::int64_t n = std::min({r.prefill_target - r.computed, opt_.chunk_size, budget_});
  if (n <= 0) return;
  items_.push_back({n, static_cast<std::uint32_t>(i), true});
  shape_.prefills.push_back(PrefillChunk{n, r.computed, r.computed + n == r.prefill_target});
  budget_ -= n;
}

void Worker::schedule_prefill_chunks() {
  std::int64_t left = prefilling_;  // stop once every prefilling request had its turn
  for (std::size_t i = 0; i < running_.size(); ++i) {
    if (budget_ <= 0 || left == 0) return;
    if (hot_[i].phase == Phase::kPrefill) {
      --left;
      if (!hot_[i].kv_loading) add_prefill_chunk(i);
    }
  }
}

AdmitResult Worker::try_admit(const QueuedRequest& q) {
  if (budget_ <= 0) return AdmitResult::kBatchFull;
  if (slots_full()) return AdmitResult::kNoSlot;
  LiveRequest& r = table_[q.handle];
  SIM_CHECK(r.phase == Phase::kQueued && r.worker == id_, "policy proposed request {} that is not queued here",
            r.spec.id);
  const std::int64_t reserve =
      running_.empty() ? 0 : static_cast<std::int64_t>(opt_.reservation_ratio * static_cast<double>(kv().capacity()));
  const bool first = !r.admitted;
  kvm_.set_now(now_);
  KvManager::Admitted a;
  if (!kvm_.admit(q.handle, reserve, first, a, running_.empty() && parked() == 0)) return AdmitResult::kNoMemory;
  if (a.dropped > 0) {
    stats_.uncached_admissions++;
    stats_.uncached_admission_tokens += a.dropped;
  }
  const std::int64_t cached = a.cached;
  const std::int64_t loaded = a.loaded;  // lower-tier hits: HBM pages allocated, loaded instead of computed
  if (a.store > 0) {  // its store KV moves first (the engine), then it computes
    r.kv_loading = true;
    r.load_serial = ++load_serial_;
    r.load_start = now_;
    store_loads_.push_back(StoreLoad{q.handle, r.load_serial, kvm_.store()->bytes(a.store)});
  }
  r.phase = Phase::kPrefill;
  ++prefilling_;
  r.computed = cached + loaded;
  context_tokens_ += r.computed + r.generated;
  pending_prefill_tokens_ -= cached + loaded;
  if (first) {
    r.admitted = now_;
    r.cached = cached;
    stats_.admitted++;
    stats_.prompt_tokens += r.spec.prompt_tokens;
    stats_.cached_tokens += cached;
  }
  if (observer_) observer_->on_admitted(r.spec, now_, cached, first);
  --waiting_;
  push_running(q.handle, r);  // (syncs the load)
  if (!r.kv_loading) add_prefill_chunk(running_.size() - 1);
  return AdmitResult::kAdmitted;
}

void Worker::store_loaded(RequestHandle h, std::uint32_t serial, Time now) {
  const LiveRequest& r = table_[h];
  if (r.load_serial != serial || r.worker != id_) return;  // preempted (and admitted again) since
  const std::size_t i = index_of(h);
  if (i == running_.size() || !hot_[i].kv_loading) return;  // preempted since
  hot_[i].kv_loading = false;
  stats_.store_load_ns += now - r.load_start;
}

Time Worker::start_iteration(Time now) {
  SIM_CHECK(!busy_, "worker {} started an iteration while busy", id_);
  now_ = now;
  contexts_gone_ = false;
  // The lane's members keep their items at the front of items_, and lane_schedule
  // sizes every decode context and writes it, now or when read (worker.h,
  // write_lane_contexts): no need to clear them.
  if (lane_on_) {
    items_.resize(lane_size());
    shape_.prefills.clear();
    shape_.decode_sums.reset();
  } else {
    items_.clear();
    shape_.clear();
  }
  budget_ = opt_.max_batch_tokens;
  kvm_.set_now(now);
  kvm_.begin_iteration();
  if (opt_.mode == BatchMode::kMixed) {
    if (!(lane_allowed_ && (lane_on_ || lane_build()) && lane_schedule())) schedule_decodes();
    schedule_prefill_chunks();
    policy_schedule();
  } else {
    schedule_prefill_chunks();
    policy_schedule();
    if (items_.empty()) schedule_decodes();
  }
  SIM_CHECK(policy_->queued() == static_cast<std::size_t>(waiting_),
            "worker {}: local policy holds {} requests but {} are waiting (a request was lost or duplicated)", id_,
            policy_->queued(), waiting_);
  SIM_CHECK(!(running_.empty() && waiting_ > 0 && parked() == 0),
            "worker {} would idle with {} waiting requests: the local policy admitted nothing to an empty worker "
            "(work conservation)",
            id_, waiting_);
  check_invariants();
  if (items_.empty()) return 0;
  Time t = cost_->iteration_time(shape_);
  SIM_CHECK(t > 0, "cost model returned {} ns for a non-empty batch", t);
  if (const Time load = kvm_.iteration_load(); load > 0) {  // lower-tier loads of requests admitted now (worker.h)
    const Time with_load = kvm_.overlap() ? std::max(t, load) : t + load;
    stats_.kv_stall_ns += with_load - t;
    t = with_load;
  }
  busy_ = true;
  stats_.iterations++;
  stats_.busy_ns += t;
  stats_.peak_kv_pages = std::max(stats_.peak_kv_pages, kv().used());
  return t;
}

// running_[i] produced its last token: it leaves the running set (compacted
// away by finish_iteration) and frees its private KV.
void Worker::finish_here(std::size_t i, std::vector<RequestHandle>& done) {
  first_gone_ = std::min(first_gone_, i);
  hot_[i].phase = Phase::kFinished;
  LiveRequest& lr = sync_out(i);  // it leaves the running set: the LiveRequest is current from here
  release_private(lr);
  context_tokens_ -= kv_tokens(lr);
  stats_.finished++;
  policy_->on_finish(lr.spec);
  done.push_back(running_[i]);
}

void Worker::finish_iteration(Time now, std::vector<RequestHandle>& done) {
  SIM_CHECK(busy_, "worker {} finished an iteration it did not start", id_);
  busy_ = false;
  now_ = now;
  kvm_.set_now(now);
  bool gone = false;  // a request finished or was handed off (its hot phase says which)
  first_gone_ = running_.size();  // the lowest running index that leaves (finish_here, hand-offs)
  // Decode items come first in every batch (schedule_decodes runs before the
  // prefill passes, or alone): this pass takes them, the general one below the
  // rest (decodes included, so the order is only a matter of speed).
  const std::size_t n_items = items_.size();
  std::size_t k = 0;
  const bool laned = lane_scheduled_;
  if (laned) {  // the lane's items (the batch's first ones): applied by the lane
    k = lane_size();
    lane_finish(done, gone);
  }
  for (; k < n_items && !items_[k].prefill; ++k) {
    const std::uint32_t i = items_[k].i;
    RequestHot& r = hot_[i];
    // A decode step's request produced its first token already: no first_token here.
    r.generated += 1;
    if (counts_tokens_) tell_token(r.client);
    if (observer_) count_output_token(r.client);
    if (r.generated >= r.output_tokens) {
      finish_here(i, done);
      gone = true;
    }
  }
  if (!laned) {  // the step-by-step pass above counted them (the lane counts its own)
    stats_.decode_tokens += static_cast<std::int64_t>(k);
    context_tokens_ += static_cast<std::int64_t>(k);
  }
  for (std::size_t m = k; m < n_items; ++m) {
    const Item& it = items_[m];
    RequestHot& r = hot_[it.i];
    if (it.prefill) {
      r.computed += it.tokens;
      context_tokens_ += it.tokens;
      pending_prefill_tokens_ -= it.tokens;
      stats_.prefill_tokens += it.tokens;
      if (r.computed < r.prefill_target) continue;
      r.phase = Phase::kDecode;
      --prefilling_;
      LiveRequest& lr = sync_out(it.i);  // the KvManager reads and writes the LiveRequest
      kvm_.cache_prompt(lr);
      if (eviction_) evict_after_prefill(lr);
      copy_in(it.i, lr);
    } else {
      stats_.decode_tokens += 1;
    }
    // The iteration that completes a prefill, and every decode step, yields one token.
    // (r.client and r.output_tokens: the spec's, in the hot line.)
    r.generated += 1;
    context_tokens_ += 1;
    if (counts_tokens_) tell_token(r.client);
    if (observer_) count_output_token(r.client);
    // Only these lines add to generated, so its first token is the one that makes it 1.
    if (r.generated == 1) table_[running_[it.i]].first_token = now;
    if (r.generated >= r.output_tokens) {
      finish_here(it.i, done);
      gone = true;
    } else if (it.prefill && table_[running_[it.i]].decode_worker != id_) {
      // PD hand-off: the KV stays here (held) until its transfer ends.
      r.phase = Phase::kHandoff;
      const RequestHandle h = running_[it.i];
      LiveRequest& lr = sync_out(it.i);
      lr.prefill_end = now;
      context_tokens_ -= kv_tokens(lr);
      kvm_.hold(h, lr);
      stats_.handoffs++;
      handoffs_.push_back(h);
      first_gone_ = std::min<std::size_t>(first_gone_, it.i);
      gone = true;
    } else if (it.prefill && lane_on_) {
      lane_joins_.push_back(it.i);  // its prefill completed here and it decodes here: it joins the lane below
    }
  }
  // The observer hears the iteration's tokens once per client (the lane's clients in its
  // lane_clients_ order, then the others in first-seen order).
  if (lane_tokens_direct_) {  // (the lane's clients alone: lane_finish)
    lane_tokens_direct_ = false;
    for (const auto& e : lane_clients_) observer_->on_output_tokens(e.first, now, e.second);
  }
  for (const auto& [client, n] : client_tokens_) {
    observer_->on_output_tokens(client, now, n);
    client_slot_[client] = 0;
  }
  client_tokens_.clear();
  // Finished and handed-off requests leave the running set (order kept).
  // The lane's members and joiners follow their requests to the new indices.
  if (gone) {  // (the requests before first_gone_ keep their indices)
    if (lane_on_) lane_to_.resize(running_.size());
    std::size_t j = first_gone_;
    for (std::size_t i = first_gone_; i < running_.size(); ++i) {
      if (hot_[i].phase == Phase::kFinished || hot_[i].phase == Phase::kHandoff) continue;
      if (lane_on_) lane_to_[i] = static_cast<std::uint32_t>(j);
      if (j != i) {
        running_[j] = running_[i];
        hot_[j] = hot_[i];
      }
      ++j;
    }
    running_.resize(j);
    hot_.resize(j);
    sync_load();
    if (lane_on_) lane_remap(lane_to_, first_gone_);
  }
  if (lane_on_ && !lane_joins_.empty()) {
    lane_join(lane_joins_);
    lane_joins_.clear();
  }
}

void Worker::release_handoff(RequestHandle h, Time now) {
  now_ = now;
  kvm_.set_now(now);
  kvm_.release_handoff(h);
}

bool Worker::reserve_incoming(RequestHandle h, Time now) {
  now_ = now;
  kvm_.set_now(now);
  if (slots_full()) return false;
  if (!kvm_.reserve_incoming(table_[h])) return false;
  ++incoming_;
  return true;
}

void Worker::accept_incoming(RequestHandle h, Time now) {
  now_ = now;
  LiveRequest& r = table_[h];
  SIM_CHECK(r.phase == Phase::kHandoff && incoming_ > 0, "worker {}: request {} accepted without a reservation", id_,
            r.spec.id);
  --incoming_;
  r.phase = Phase::kDecode;
  r.worker = id_;
  r.computed = r.prefill_target;
  context_tokens_ += kv_tokens(r);
  kvm_.set_now(now);
  if (r.compressed == 0) kvm_.cache_prompt(r);  // the prompt blocks join this worker's cache
  stats_.received++;
  push_running(h, r);
  if (lane_on_) lane_accepted_.push_back(h);  // it joins the lane at the next iteration
}

void Worker::final_chunks(std::vector<std::pair<RequestHandle, std::int64_t>>& out) {
  if (eviction_) return;
  for (const Item& it : items_) {
    const RequestHot& r = hot_[it.i];
    if (it.prefill && r.computed + it.tokens >= r.prefill_target && r.generated + 1 < r.output_tokens &&
        table_[running_[it.i]].decode_worker != id_) {
      sync_out(it.i);  // its decode worker reserves now, reading the request's placement here
      out.emplace_back(running_[it.i], it.tokens);
    }
  }
}

// Layerwise: the decode side's reservation is made while the request still
// runs on its prefill worker (KvManager::reserve_early keeps both placements).
bool Worker::reserve_early(RequestHandle h, Time now) {
  now_ = now;
  kvm_.set_now(now);
  if (slots_full()) return false;
  if (!kvm_.reserve_early(h, table_[h])) return false;
  ++incoming_;
  return true;
}

void Worker::adopt_early(RequestHandle h) { kvm_.adopt_early(h, table_[h]); }

void Worker::check_invariants() const {
  kvm_.check_invariants();
  SIM_CHECK(*load_slot_ == waiting_ + static_cast<std::int64_t>(running_.size()),
            "worker {}: its load slot says {}, but {} wait and {} run", id_, *load_slot_, waiting_, running_.size());
  SIM_CHECK(static_cast<std::int64_t>(running_.size()) <= opt_.max_running, "worker {}: {} running > max {}", id_,
            running_.size(), opt_.max_running);
  SIM_CHECK(budget_ >= 0, "worker {}: token budget overdrawn ({})", id_, budget_);
  SIM_CHECK(!running_.empty() || parked() > 0 ||
                (context_tokens_ == 0 && kvm_.private_pages() == 0 && cache().locked_pages() == 0),
            "worker {}: nothing runs but {} context tokens / {} private pages / {} locked cache pages remain", id_,
            context_tokens_, kvm_.private_pages(), cache().locked_pages());
}

}  // namespace servesim
