// Continuous batching on one worker; see worker.h for the iteration contract.
#include "sim/worker.h"

#include <algorithm>
#include <cmath>

namespace servesim {

Worker::Worker(WorkerId id, std::unique_ptr<LocalPolicy> policy, std::shared_ptr<const CostModel> cost,
               BatchingOptions opt, std::int64_t kv_capacity_pages, std::int64_t page_size, RequestTable& table,
               RunObserver* observer, std::shared_ptr<const KvEviction> kv_eviction)
    : id_(id), policy_(std::move(policy)), cost_(std::move(cost)), opt_(opt), kv_(kv_capacity_pages, page_size),
      cache_(kv_), table_(table), observer_(observer), eviction_(std::move(kv_eviction)) {
  stats_.kv_capacity_pages = kv_capacity_pages;
}

void Worker::set_kv_tiers(const KvTiersConfig& c, double kv_bytes_per_token, double default_host_gbps) {
  SIM_CHECK(c.enabled(), "worker {}: set_kv_tiers without a host tier", id_);
  auto pages = [&](const KvTierSpec& t) {
    return static_cast<std::int64_t>(
        std::floor(t.capacity_gb * 1e9 / (kv_bytes_per_token * static_cast<double>(kv_.page_size()))));
  };
  auto latency = [](const KvTierSpec& t) { return static_cast<Time>(std::llround(t.latency_us * 1e3)); };
  if (c.ssd.enabled())
    ssd_ = std::make_unique<KvTier>("ssd", pages(c.ssd), kv_.page_size(), kv_bytes_per_token, c.ssd.bandwidth_gbps,
                                    latency(c.ssd), nullptr, &stats_.ssd);
  host_ = std::make_unique<KvTier>("host", pages(c.host), kv_.page_size(), kv_bytes_per_token,
                                   c.host.bandwidth_gbps > 0 ? c.host.bandwidth_gbps : default_host_gbps,
                                   latency(c.host), ssd_.get(), &stats_.host);
  tier_overlap_ = c.overlap;
  cache_.set_evict_hook([this](std::uint64_t key, std::int64_t tokens) { host_->put(key, tokens); });
}

// The prompt's blocks after the HBM match, while each is held by the host or
// the SSD tier (host first), up to the match cap (one token is computed).
Worker::LowerMatch Worker::match_lower(const LiveRequest& r, const PrefixMatch& m) {
  LowerMatch lm;
  lower_hits_.clear();
  const RequestSpec& s = r.spec;
  const auto start = static_cast<std::size_t>(m.blocks);
  if (s.prefix_block_size <= 0 || start >= s.prefix_blocks.size()) return lm;
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < start; ++i) key = tier_block_key(key, s.prefix_blocks[i], PrefixCache::block_tokens(s, i));
  const std::int64_t cap = r.prefill_target - 1 - m.tokens;
  for (std::size_t i = start; i < s.prefix_blocks.size(); ++i) {
    const std::int64_t t = PrefixCache::block_tokens(s, i);
    if (t <= 0 || lm.tokens + t > cap) break;
    key = tier_block_key(key, s.prefix_blocks[i], t);
    KvTier* tier = host_->contains(key) ? host_.get() : (ssd_ && ssd_->contains(key) ? ssd_.get() : nullptr);
    if (!tier) break;
    lower_hits_.emplace_back(tier, key);
    lm.tokens += t;
    (tier == host_.get() ? lm.host_tokens : lm.ssd_tokens) += t;
  }
  lm.load = host_->load_time(lm.host_tokens) + (ssd_ ? ssd_->load_time(lm.ssd_tokens) : 0);
  return lm;
}

void Worker::take_lower(const LowerMatch& lm, bool first) {
  for (const auto& [tier, key] : lower_hits_) tier->touch(key);
  iter_load_ns_ += lm.load;
  stats_.kv_load_ns += lm.load;
  stats_.host.loaded_tokens += lm.host_tokens;
  stats_.ssd.loaded_tokens += lm.ssd_tokens;
  if (first) {
    stats_.host.hit_tokens += lm.host_tokens;
    stats_.ssd.hit_tokens += lm.ssd_tokens;
  }
}

bool Worker::fits_alone(const RequestSpec& spec) const {
  return kv_.pages_for(spec.prompt_tokens + spec.output_tokens) <= kv_.capacity();
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
  stats_.peak_waiting = std::max(stats_.peak_waiting, waiting_);
  if (observer_) observer_->on_queued(r.spec.client, now);
  policy_->enqueue(QueuedRequest{h, &r.spec, now, r.prefill_target, false});
}

// Private KV tokens a request holds once this step's token is written:
// its computed context (minus the shared cached prefix) plus generated tokens.
std::int64_t Worker::private_tokens_after_step(const LiveRequest& r) const {
  if (r.compressed > 0) return r.compressed + r.generated;  // the compacted copy holds the whole context
  return r.prefill_target - r.shared_tokens + r.generated;
}

std::int64_t Worker::kv_tokens(const LiveRequest& r) const {
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
  const std::int64_t pages = kv_.pages_for(kept);
  if (!alloc(pages)) return;  // (the request's own cache path is locked, so alloc cannot evict it)
  kv_.release(r.kv_pages);
  private_pages_ -= r.kv_pages;
  r.kv_pages = pages;
  cache_.unlock(r.cache_node, now_);
  r.cache_node = kCacheRoot;
  r.shared_tokens = 0;
  r.shared_blocks = 0;
  context_tokens_ -= r.computed - kept;
  r.compressed = kept;
  stats_.kv_evicted_tokens += r.computed - kept;
}

const PrefixMatch& Worker::refresh_match(RequestHandle h) const {
  LiveRequest& r = table_[h];
  cache_.refresh(r.match, r.spec, r.prefill_target - 1);
  return r.match;
}

std::int64_t Worker::cached_tokens(const QueuedRequest& q) const { return refresh_match(q.handle).tokens; }

std::uint64_t Worker::uncached_prefix_key(const QueuedRequest& q) const {
  const PrefixMatch& m = refresh_match(q.handle);
  const RequestSpec& s = table_[q.handle].spec;
  const auto next = static_cast<std::size_t>(m.blocks);
  if (next >= s.prefix_blocks.size() || PrefixCache::block_tokens(s, next) <= 0) return 0;
  std::uint64_t z = s.prefix_blocks[next] ^ ((static_cast<std::uint64_t>(m.node) << 32) | m.generation);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) | 1;  // never 0
}

bool Worker::alloc(std::int64_t pages) {
  if (kv_.free() < pages) cache_.make_room(pages);
  if (!kv_.try_alloc(pages)) return false;
  private_pages_ += pages;
  return true;
}

void Worker::release_private(LiveRequest& r) {
  kv_.release(r.kv_pages);
  private_pages_ -= r.kv_pages;
  r.kv_pages = 0;
  cache_.unlock(r.cache_node, now_);
  r.cache_node = kCacheRoot;
  r.shared_tokens = 0;
  r.shared_blocks = 0;
}

void Worker::preempt_now(RequestHandle h) {
  LiveRequest& r = table_[h];
  release_private(r);
  context_tokens_ -= kv_tokens(r);
  if (r.phase == Phase::kPrefill) --prefilling_;
  r.compressed = 0;  // recomputation prefills (and compresses) the whole context again
  auto it = std::find(running_.begin(), running_.end(), h);
  SIM_CHECK(it != running_.end(), "preempted request {} is not running", r.spec.id);
  running_.erase(it);
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
  if (observer_) observer_->on_queued(r.spec.client, now_);
  policy_->enqueue(QueuedRequest{h, &r.spec, now_, r.prefill_target, true});
}

void Worker::drop_from_batch(RequestHandle h) {
  std::size_t same_kind = 0;
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].h != h) continue;
    const Item it = items_[i];
    for (std::size_t j = 0; j < i; ++j) same_kind += items_[j].prefill == it.prefill ? 1 : 0;
    if (it.prefill)
      shape_.prefills.erase(shape_.prefills.begin() + static_cast<std::ptrdiff_t>(same_kind));
    else
      shape_.decode_contexts.erase(shape_.decode_contexts.begin() + static_cast<std::ptrdiff_t>(same_kind));
    budget_ += it.tokens;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

void Worker::running_requests(std::vector<RunningRequest>& out) const {
  out.clear();
  for (RequestHandle h : running_) out.push_back(RunningRequest{h, &table_[h].spec, table_[h].generated});
}

bool Worker::preempt(RequestHandle h) {
  if (std::find(running_.begin(), running_.end(), h) == running_.end()) return false;
  drop_from_batch(h);
  preempt_now(h);
  return true;
}

// The per-request passes of an iteration touch one LiveRequest per running
// request (a cache miss each when other workers ran in between): fetch a few
// ahead so the misses overlap. Its first two lines hold the hot fields.
void Worker::prefetch(RequestHandle h) const {
  const auto* p = reinterpret_cast<const char*>(&table_[h]);
  __builtin_prefetch(p);
  __builtin_prefetch(p + 64);
}

void Worker::schedule_decodes() {
  for (std::size_t i = 0; i < running_.size() && budget_ > 0; ++i) {
    if (i + kPrefetchAhead < running_.size()) prefetch(running_[i + kPrefetchAhead]);
    RequestHandle h = running_[i];
    LiveRequest& r = table_[h];
    if (r.phase != Phase::kDecode) continue;
    std::int64_t need = kv_.pages_for(private_tokens_after_step(r)) - r.kv_pages;
    bool self_preempted = false;
    while (need > 0 && !alloc(need)) {
      RequestHandle victim = running_.back();
      preempt_now(victim);
      if (victim == h) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;  // h was the last running request
    r.kv_pages += std::max<std::int64_t>(need, 0);
    items_.push_back({h, 1, false});
    shape_.decode_contexts.push_back(kv_tokens(r) - 1);  // the compacted context when evicted
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
  std::int64_t left = prefilling_;  // stop once every prefilling request had its turn
  for (RequestHandle h : running_) {
    if (budget_ <= 0 || left == 0) return;
    if (table_[h].phase == Phase::kPrefill) {
      --left;
      add_prefill_chunk(h);
    }
  }
}

AdmitResult Worker::try_admit(const QueuedRequest& q) {
  if (budget_ <= 0) return AdmitResult::kBatchFull;
  if (slots_full()) return AdmitResult::kNoSlot;
  LiveRequest& r = table_[q.handle];
  SIM_CHECK(r.phase == Phase::kQueued && r.worker == id_, "policy proposed request {} that is not queued here",
            r.spec.id);
  const PrefixMatch& m = refresh_match(q.handle);
  const std::int64_t cached = m.tokens;
  const std::int64_t need = kv_.pages_for(r.prefill_target - cached);
  const std::int64_t reserve =
      running_.empty() ? 0 : static_cast<std::int64_t>(opt_.reservation_ratio * static_cast<double>(kv_.capacity()));
  // Lock the match first, so making room cannot evict it.
  cache_.lock(m.node, now_);
  if (kv_.free() + cache_.evictable_pages() - need < reserve || !alloc(need)) {
    cache_.unlock(m.node, now_);
    return AdmitResult::kNoMemory;
  }
  r.kv_pages = need;
  r.cache_node = m.node;
  r.shared_tokens = cached;
  r.shared_blocks = m.blocks;
  r.phase = Phase::kPrefill;
  ++prefilling_;
  const bool first = !r.admitted;
  std::int64_t loaded = 0;  // lower-tier hits: HBM pages allocated above, loaded instead of computed
  if (host_) {
    const LowerMatch lm = match_lower(r, m);
    take_lower(lm, first);
    loaded = lm.tokens;
  }
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
  iter_load_ns_ = 0;
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
  SIM_CHECK(!(running_.empty() && waiting_ > 0 && parked() == 0),
            "worker {} would idle with {} waiting requests: the local policy admitted nothing to an empty worker "
            "(work conservation)",
            id_, waiting_);
  check_invariants();
  if (items_.empty()) return 0;
  Time t = cost_->iteration_time(shape_);
  SIM_CHECK(t > 0, "cost model returned {} ns for a non-empty batch", t);
  if (iter_load_ns_ > 0) {  // lower-tier loads of requests admitted now (worker.h)
    const Time with_load = tier_overlap_ ? std::max(t, iter_load_ns_) : t + iter_load_ns_;
    stats_.kv_stall_ns += with_load - t;
    t = with_load;
  }
  busy_ = true;
  stats_.iterations++;
  stats_.busy_ns += t;
  stats_.peak_kv_pages = std::max(stats_.peak_kv_pages, kv_.used());
  return t;
}

// The prompt's blocks join the cache: the request hands over its private
// pages for them (blocks another request inserted meanwhile are shared and
// its copy is freed) and locks the longer path instead of its match.
void Worker::cache_prompt(LiveRequest& r) {
  if (r.spec.prefix_blocks.empty() || r.spec.prefix_block_size <= 0) return;
  PrefixMatch from;
  from.node = r.cache_node;
  from.tokens = r.shared_tokens;
  from.blocks = r.shared_blocks;
  const std::int64_t budget = r.kv_pages + kv_.free();
  kv_.release(r.kv_pages);
  private_pages_ -= r.kv_pages;
  PrefixCache::InsertResult res = cache_.insert(r.spec, from, r.prefill_target, budget, now_);
  cache_.lock(res.node, now_);
  cache_.unlock(r.cache_node, now_);
  r.cache_node = res.node;
  r.shared_tokens = res.tokens;
  r.shared_blocks = res.blocks;
  r.kv_pages = res.private_pages;
  SIM_CHECK(kv_.try_alloc(r.kv_pages), "worker {}: request {} lost its private pages while caching its prompt", id_,
            r.spec.id);
  private_pages_ += r.kv_pages;
}

void Worker::finish_iteration(Time now, std::vector<RequestHandle>& done) {
  SIM_CHECK(busy_, "worker {} finished an iteration it did not start", id_);
  busy_ = false;
  now_ = now;
  gone_.clear();
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (i + kPrefetchAhead < items_.size()) prefetch(items_[i + kPrefetchAhead].h);
    const Item& it = items_[i];
    LiveRequest& r = table_[it.h];
    if (it.prefill) {
      r.computed += it.tokens;
      context_tokens_ += it.tokens;
      pending_prefill_tokens_ -= it.tokens;
      stats_.prefill_tokens += it.tokens;
      if (r.computed < r.prefill_target) continue;
      r.phase = Phase::kDecode;
      --prefilling_;
      cache_prompt(r);
      if (eviction_) evict_after_prefill(r);
    } else {
      stats_.decode_tokens += 1;
    }
    // The iteration that completes a prefill, and every decode step, yields one token.
    r.generated += 1;
    context_tokens_ += 1;
    policy_->on_decode_tokens(r.spec.client, 1);
    if (observer_) count_output_token(r.spec.client);
    if (!r.first_token) r.first_token = now;
    if (r.generated >= r.spec.output_tokens) {
      r.phase = Phase::kFinished;
      release_private(r);
      context_tokens_ -= kv_tokens(r);
      stats_.finished++;
      policy_->on_finish(r.spec);
      done.push_back(it.h);
      gone_.push_back(it.h);
    } else if (it.prefill && r.decode_worker != id_) {
      // PD hand-off: the KV stays here (held) until its transfer ends.
      r.phase = Phase::kHandoff;
      r.prefill_end = now;
      context_tokens_ -= kv_tokens(r);
      held_.push_back(Held{it.h, r.kv_pages, r.cache_node});
      r.kv_pages = 0;
      r.cache_node = kCacheRoot;
      r.shared_tokens = 0;
      r.shared_blocks = 0;
      r.match = PrefixMatch{};
      stats_.handoffs++;
      handoffs_.push_back(it.h);
      gone_.push_back(it.h);
    }
  }
  // The observer hears the iteration's tokens once per client (first-seen order).
  for (const auto& [client, n] : client_tokens_) {
    observer_->on_output_tokens(client, now, n);
    client_slot_[client] = 0;
  }
  client_tokens_.clear();
  // Finished and handed-off requests leave the running set (order kept).
  if (!gone_.empty())
    std::erase_if(running_, [this](RequestHandle h) { return std::find(gone_.begin(), gone_.end(), h) != gone_.end(); });
}

void Worker::count_output_token(ClientId c) {
  if (c >= client_slot_.size()) client_slot_.resize(c + 1, 0);
  std::uint32_t& slot = client_slot_[c];
  if (slot == 0) {
    client_tokens_.emplace_back(c, 0);
    slot = static_cast<std::uint32_t>(client_tokens_.size());
  }
  client_tokens_[slot - 1].second += 1;
}

void Worker::release_handoff(RequestHandle h, Time now) {
  now_ = now;
  auto it = std::find_if(held_.begin(), held_.end(), [h](const Held& x) { return x.h == h; });
  SIM_CHECK(it != held_.end(), "worker {}: request {} was not held for hand-off", id_, table_[h].spec.id);
  kv_.release(it->pages);
  private_pages_ -= it->pages;
  cache_.unlock(it->node, now_);
  held_.erase(it);
}

std::int64_t Worker::cached_prefix(const RequestSpec& spec) const {
  PrefixMatch m;
  cache_.refresh(m, spec, spec.prompt_tokens);
  return m.tokens;
}

bool Worker::reserve_incoming(RequestHandle h, Time now) {
  now_ = now;
  LiveRequest& r = table_[h];
  if (slots_full()) return false;
  // A compacted (KV eviction) copy has no block ids to match: all of it moves.
  PrefixMatch m;
  if (r.compressed == 0) cache_.refresh(m, r.spec, r.prefill_target);
  const std::int64_t tokens = r.compressed > 0 ? r.compressed : r.prefill_target;
  const std::int64_t need = kv_.pages_for(tokens - m.tokens);
  cache_.lock(m.node, now_);
  if (!alloc(need)) {
    cache_.unlock(m.node, now_);
    return false;
  }
  r.kv_pages = need;
  r.cache_node = m.node;
  r.shared_tokens = m.tokens;
  r.shared_blocks = m.blocks;
  r.transfer_tokens = tokens - m.tokens;
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
  if (r.compressed == 0) cache_prompt(r);  // the prompt blocks join this worker's cache
  stats_.received++;
  running_.push_back(h);
  stats_.peak_running = std::max<std::int64_t>(stats_.peak_running, static_cast<std::int64_t>(running_.size()));
}

void Worker::final_chunks(std::vector<std::pair<RequestHandle, std::int64_t>>& out) const {
  if (eviction_) return;
  for (const Item& it : items_) {
    const LiveRequest& r = table_[it.h];
    if (it.prefill && r.computed + it.tokens >= r.prefill_target && r.decode_worker != id_ &&
        r.generated + 1 < r.spec.output_tokens)
      out.emplace_back(it.h, it.tokens);
  }
}

// reserve_incoming writes the decode side's pages and cache path into the
// request, whose fields still describe its prefill worker: they are moved
// aside here and put back.
bool Worker::reserve_early(RequestHandle h, Time now) {
  LiveRequest& r = table_[h];
  const KvPlacement prefill_side = placement_of(r);
  if (!reserve_incoming(h, now)) return false;
  early_.push_back(Early{h, placement_of(r)});
  place(r, prefill_side);
  return true;
}

void Worker::adopt_early(RequestHandle h) {
  auto it = std::find_if(early_.begin(), early_.end(), [h](const Early& e) { return e.h == h; });
  LiveRequest& r = table_[h];
  SIM_CHECK(it != early_.end() && r.phase == Phase::kHandoff, "worker {}: request {} has no early reservation here",
            id_, r.spec.id);
  place(r, it->kv);
  early_.erase(it);
}

void Worker::check_invariants() const {
  SIM_CHECK(kv_.used() <= kv_.capacity(), "worker {}: KV used {} > capacity {}", id_, kv_.used(), kv_.capacity());
  SIM_CHECK(kv_.used() == private_pages_ + cache_.pages(),
            "worker {}: KV used {} != private {} + cached {} pages (a page leaked)", id_, kv_.used(), private_pages_,
            cache_.pages());
  SIM_CHECK(static_cast<std::int64_t>(running_.size()) <= opt_.max_running, "worker {}: {} running > max {}", id_,
            running_.size(), opt_.max_running);
  SIM_CHECK(budget_ >= 0, "worker {}: token budget overdrawn ({})", id_, budget_);
  if (host_) {
    SIM_CHECK(host_->used_pages() <= host_->capacity_pages(), "worker {}: host tier over capacity", id_);
    SIM_CHECK(!ssd_ || ssd_->used_pages() <= ssd_->capacity_pages(), "worker {}: SSD tier over capacity", id_);
  }
  SIM_CHECK(!running_.empty() || parked() > 0 ||
                (context_tokens_ == 0 && private_pages_ == 0 && cache_.locked_pages() == 0),
            "worker {}: nothing runs but {} context tokens / {} private pages / {} locked cache pages remain", id_,
            context_tokens_, private_pages_, cache_.locked_pages());
}

}  // namespace servesim
