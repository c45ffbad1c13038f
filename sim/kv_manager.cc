// One worker's KV placement; see kv_manager.h for the contract.
#include "sim/kv_manager.h"

#include <algorithm>
#include <cmath>

namespace servesim {

KvManager::KvManager(WorkerId id, std::int64_t capacity_pages, std::int64_t page_size, RequestTable& table,
                     WorkerStats& stats)
    : id_(id), kv_(capacity_pages, page_size), cache_(kv_), table_(table), stats_(stats) {}

void KvManager::set_tiers(const KvTiersConfig& c, double kv_bytes_per_token, double default_host_gbps) {
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

void KvManager::set_store(KvStore* store, double link_gbps) {
  SIM_CHECK(store != nullptr && link_gbps > 0, "worker {}: a KV store needs a link", id_);
  store_ = store;
  store_link_gbps_ = link_gbps;
  if (host_)
    (ssd_ ? ssd_ : host_)->set_below(&store_->tier());
  else
    cache_.set_evict_hook([this](std::uint64_t key, std::int64_t tokens) { store_->tier().put(key, tokens); });
}

// The prompt's blocks after the HBM match, while each is held by the host or
// the SSD tier or the store (nearest first), up to the match cap (one token is
// computed; the prompt's last block may be taken in part, as in
// PrefixCache::refresh).
KvManager::LowerMatch KvManager::match_lower(const RequestSpec& s, std::int64_t target, const PrefixMatch& m,
                                             Hits* hits) const {
  LowerMatch lm;
  if (hits) hits->clear();
  const auto start = static_cast<std::size_t>(m.blocks);
  if (s.prefix_block_size <= 0 || start >= s.prefix_blocks.size()) return lm;
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < start; ++i) key = tier_block_key(key, s.prefix_blocks[i], PrefixCache::block_tokens(s, i));
  const std::int64_t cap = target - 1 - m.tokens;
  KvTier* store = store_ ? &store_->tier() : nullptr;
  for (std::size_t i = start; i < s.prefix_blocks.size(); ++i) {
    const std::int64_t t = PrefixCache::block_tokens(s, i);
    if (t <= 0) break;
    // Past the cap only the prompt's last block is taken, in part (as in the HBM match).
    const bool partial = lm.tokens + t > cap;
    if (partial && (m.tokens + lm.tokens + t != s.prompt_tokens || cap <= lm.tokens)) break;
    key = tier_block_key(key, s.prefix_blocks[i], t);
    KvTier* tier = host_ && host_->contains(key)  ? host_.get()
                   : ssd_ && ssd_->contains(key)  ? ssd_.get()
                   : store && store->contains(key) ? store
                                                   : nullptr;
    if (!tier) break;
    const std::int64_t take = partial ? cap - lm.tokens : t;
    if (hits) hits->emplace_back(tier, key);
    lm.tokens += take;
    (tier == host_.get() ? lm.host_tokens : tier == ssd_.get() ? lm.ssd_tokens : lm.store_tokens) += take;
    if (partial) break;
  }
  lm.load = (host_ ? host_->load_time(lm.host_tokens) : 0) + (ssd_ ? ssd_->load_time(lm.ssd_tokens) : 0);
  return lm;
}

void KvManager::take_lower(const LowerMatch& lm, bool first) {
  for (const auto& [tier, key] : lower_hits_) tier->touch(key);
  iter_load_ns_ += lm.load;
  stats_.kv_load_ns += lm.load;
  stats_.host.loaded_tokens += lm.host_tokens;
  stats_.ssd.loaded_tokens += lm.ssd_tokens;
  stats_.store.loaded_tokens += lm.store_tokens;
  if (first) {
    stats_.host.hit_tokens += lm.host_tokens;
    stats_.ssd.hit_tokens += lm.ssd_tokens;
    stats_.store.hit_tokens += lm.store_tokens;
  }
}

KvLocality KvManager::probe(const RequestSpec& spec) const {
  KvLocality out;
  PrefixMatch m;
  cache_.refresh(m, spec, spec.prompt_tokens - 1);
  out.hbm = m.tokens;
  if (!host_ && !store_) return out;
  const LowerMatch lm = match_lower(spec, spec.prompt_tokens, m, nullptr);
  out.host = lm.host_tokens;
  out.ssd = lm.ssd_tokens;
  out.store = lm.store_tokens;
  out.load_ns = lm.load + (store_ ? store_->estimate_ns(lm.store_tokens, store_link_gbps_) : 0);
  return out;
}

void KvManager::write_through(const RequestSpec& s) {
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < s.prefix_blocks.size(); ++i) {
    const std::int64_t t = PrefixCache::block_tokens(s, i);
    if (t <= 0) break;
    key = tier_block_key(key, s.prefix_blocks[i], t);
    store_->tier().put(key, t);
  }
}

const PrefixMatch& KvManager::match(RequestHandle h) const {
  LiveRequest& r = table_[h];
  cache_.refresh(r.match, r.spec, r.prefill_target - 1);
  return r.match;
}

std::uint64_t KvManager::uncached_prefix_key(RequestHandle h) const {
  const PrefixMatch& m = match(h);
  const RequestSpec& s = table_[h].spec;
  const auto next = static_cast<std::size_t>(m.blocks);
  if (next >= s.prefix_blocks.size() || PrefixCache::block_tokens(s, next) <= 0) return 0;
  std::uint64_t z = s.prefix_blocks[next] ^ ((static_cast<std::uint64_t>(m.node) << 32) | m.generation);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) | 1;  // never 0
}

std::int64_t KvManager::cached_prefix(const RequestSpec& spec) const {
  PrefixMatch m;
  cache_.refresh(m, spec, spec.prompt_tokens);
  return m.tokens;
}

bool KvManager::admit(RequestHandle h, std::int64_t reserve, bool first, Admitted& out, bool alone) {
  LiveRequest& r = table_[h];
  const PrefixMatch& m = match(h);
  const std::int64_t cached = m.tokens;
  const std::int64_t need = kv_.pages_for(r.prefill_target - cached);
  // `pages` more, keeping `reserve` free beyond them (unlocked cache pages count as free).
  auto take = [&](std::int64_t pages) {
    return kv_.free() + cache_.evictable_pages() - pages >= reserve && alloc(pages);
  };
  // Lock the match first, so making room cannot evict it.
  const std::uint32_t where = cache_.lock(m.node, now_);
  if (!take(need)) {
    cache_.unlock(m.node, now_, where);
    if (!alone || cached == 0) return false;
    // Alone on the worker, the match's rounded-up pages crowd out the rest of the prompt
    // (see the header): compute the whole prompt instead, if it fits.
    const std::int64_t all = kv_.pages_for(r.prefill_target);
    if (!take(all)) return false;
    r.kv_pages = all;
    r.cache_node = kCacheRoot;
    r.cache_where = 0;
    r.shared_tokens = 0;
    r.shared_blocks = 0;
    out = Admitted{0, 0, 0, cached};
    return true;
  }
  r.kv_pages = need;
  r.cache_node = m.node;
  r.cache_where = where;
  r.shared_tokens = cached;
  r.shared_blocks = m.blocks;
  out = Admitted{cached, 0, 0};
  if (host_ || store_) {
    const LowerMatch lm = match_lower(r.spec, r.prefill_target, m, &lower_hits_);
    take_lower(lm, first);
    out.loaded = lm.tokens;
    out.store = lm.store_tokens;
  }
  return true;
}

void KvManager::release_private(LiveRequest& r) {
  kv_.release(r.kv_pages);
  private_pages_ -= r.kv_pages;
  r.kv_pages = 0;
  cache_.unlock(r.cache_node, now_, r.cache_where);
  r.cache_node = kCacheRoot;
  r.cache_where = 0;
  r.shared_tokens = 0;
  r.shared_blocks = 0;
}

bool KvManager::compact(LiveRequest& r, std::int64_t kept) {
  const std::int64_t pages = kv_.pages_for(kept);
  if (!alloc(pages)) return false;  // (the request's own cache path is locked, so alloc cannot evict it)
  kv_.release(r.kv_pages);
  private_pages_ -= r.kv_pages;
  r.kv_pages = pages;
  cache_.unlock(r.cache_node, now_, r.cache_where);
  r.cache_node = kCacheRoot;
  r.cache_where = 0;
  r.shared_tokens = 0;
  r.shared_blocks = 0;
  return true;
}

// The prompt's blocks join the cache: the request hands over its private
// pages for them (blocks another request inserted meanwhile are shared and
// its copy is freed) and locks the longer path instead of its match.
void KvManager::cache_prompt(LiveRequest& r) {
  if (r.spec.prefix_blocks.empty() || r.spec.prefix_block_size <= 0) return;
  PrefixMatch from;  // the match memo when it is the locked path (it may tell the next block is absent)
  if (r.match.node == r.cache_node && r.match.blocks == r.shared_blocks && r.match.tokens == r.shared_tokens) {
    from = r.match;
  } else {
    from.node = r.cache_node;
    from.tokens = r.shared_tokens;
    from.blocks = r.shared_blocks;
  }
  const std::int64_t budget = r.kv_pages + kv_.free();
  kv_.release(r.kv_pages);
  private_pages_ -= r.kv_pages;
  PrefixCache::InsertResult res = cache_.insert(r.spec, from, r.prefill_target, budget, now_);
  const std::uint32_t where = cache_.lock(res.node, now_);
  cache_.unlock(r.cache_node, now_, r.cache_where);
  r.cache_node = res.node;
  r.cache_where = where;
  r.shared_tokens = res.tokens;
  r.shared_blocks = res.blocks;
  r.kv_pages = res.private_pages;
  SIM_CHECK(kv_.try_alloc(r.kv_pages), "worker {}: request {} lost its private pages while caching its prompt", id_,
            r.spec.id);
  private_pages_ += r.kv_pages;
  if (store_ && store_->write_through()) write_through(r.spec);
}

void KvManager::hold(RequestHandle h, LiveRequest& r) {
  held_.push_back(Held{h, r.kv_pages, r.cache_node});
  r.kv_pages = 0;
  r.cache_node = kCacheRoot;
  r.cache_where = 0;
  r.shared_tokens = 0;
  r.shared_blocks = 0;
  r.match = PrefixMatch{};
}

void KvManager::release_handoff(RequestHandle h) {
  auto it = std::find_if(held_.begin(), held_.end(), [h](const Held& x) { return x.h == h; });
  SIM_CHECK(it != held_.end(), "worker {}: request {} was not held for hand-off", id_, table_[h].spec.id);
  kv_.release(it->pages);
  private_pages_ -= it->pages;
  cache_.unlock(it->node, now_);
  held_.erase(it);
}

bool KvManager::reserve_incoming(LiveRequest& r) {
  // A compacted (KV eviction) copy has no block ids to match: all of it moves.
  PrefixMatch m;
  if (r.compressed == 0) cache_.refresh(m, r.spec, r.prefill_target);
  const std::int64_t tokens = r.compressed > 0 ? r.compressed : r.prefill_target;
  const std::int64_t need = kv_.pages_for(tokens - m.tokens);
  const std::uint32_t where = cache_.lock(m.node, now_);
  if (!alloc(need)) {
    cache_.unlock(m.node, now_, where);
    return false;
  }
  r.kv_pages = need;
  r.cache_node = m.node;
  r.cache_where = where;
  r.shared_tokens = m.tokens;
  r.shared_blocks = m.blocks;
  r.transfer_tokens = tokens - m.tokens;
  return true;
}

// reserve_incoming writes the decode side's pages and cache path into the
// request, whose fields still describe its prefill worker: they are moved
// aside here and put back.
bool KvManager::reserve_early(RequestHandle h, LiveRequest& r) {
  const KvPlacement prefill_side = placement_of(r);
  if (!reserve_incoming(r)) return false;
  early_.push_back(Early{h, placement_of(r)});
  place(r, prefill_side);
  return true;
}

void KvManager::adopt_early(RequestHandle h, LiveRequest& r) {
  auto it = std::find_if(early_.begin(), early_.end(), [h](const Early& e) { return e.h == h; });
  SIM_CHECK(it != early_.end() && r.phase == Phase::kHandoff, "worker {}: request {} has no early reservation here",
            id_, r.spec.id);
  place(r, it->kv);
  early_.erase(it);
}

void KvManager::check_invariants() const {
  SIM_CHECK(kv_.used() <= kv_.capacity(), "worker {}: KV used {} > capacity {}", id_, kv_.used(), kv_.capacity());
  SIM_CHECK(kv_.used() == private_pages_ + cache_.pages(),
            "worker {}: KV used {} != private {} + cached {} pages (a page leaked)", id_, kv_.used(), private_pages_,
            cache_.pages());
  if (host_) {
    SIM_CHECK(host_->used_pages() <= host_->capacity_pages(), "worker {}: host tier over capacity", id_);
    SIM_CHECK(!ssd_ || ssd_->used_pages() <= ssd_->capacity_pages(), "worker {}: SSD tier over capacity", id_);
  }
  SIM_CHECK(!store_ || store_->tier().used_pages() <= store_->tier().capacity_pages(), "KV store over capacity");
}

}  // namespace servesim
