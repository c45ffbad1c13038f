// LpmPolicy: longest prefix match first (SGLang's cache-aware scheduling;
// Zheng et al., "SGLang: Efficient Execution of Structured Language Model
// Programs", NeurIPS 2024; python/sglang/srt/managers/schedule_policy.py).
//
// Every scheduling step re-reads each waiting request's cached prefix on this
// worker (the cache changes between steps), sorts longest first (ties: queue
// order, preempted requests first), and admits in that order until a request
// does not fit (SGLang stops at the first request that does not fit). A step
// without token budget or a running slot admits nothing and does nothing.
//
// Two flavours, chosen with `preset`:
//   ideal (default): the paper's LPM, always sorted by match.
//   sglang: SGLang's production scheduler:
//     - FCFS above 128 waiting requests (fcfs_above = 128: SGLang then skips
//       the prefix matching altogether), so under overload LPM IS FCFS;
//     - in-batch prefix check (in_batch_check): walking the queue in its
//       order, a request whose cached match is <= check_threshold (32) tokens
//       and that shares >= deprioritize_threshold (32) tokens with an earlier
//       such waiting request is moved to the END of this step's order (not
//       skipped), so the earlier one seeds the shared prefix first; requests
//       that do not share are remembered for the ones after them.
//     Granularity: SGLang matches token by token; here matches are whole
//     prefix blocks of the trace (`block_size`, e.g. 16 tokens), so shares
//     and matches are rounded down to blocks.
// Other options (either preset may set them explicitly):
//   in_queue_dedup (false): servesim's stricter variant — of the requests that
//     would compute the same uncached block under the same cached prefix, only
//     the first in LPM order is proposed this step (the others are skipped).
//   fcfs_above (0 = never; 128 with preset sglang).
#pragma once
#include <unordered_set>

#include "sim/core/option_table.h"
#include "sim/core/yaml_map.h"
#include "policies/global_prefix_index.h"
#include "policies/prefix_ordered_queue.h"

namespace servesim {

struct LpmOptions {
  bool in_queue_dedup = false;
  std::int64_t fcfs_above = 0;
  bool in_batch_check = false;
  std::int64_t check_threshold = 32;
  std::int64_t deprioritize_threshold = 32;
  bool sglang = false;  // preset name, for reports
};

// Chain hashes of the block prefixes of a request's prompt: entry i identifies
// blocks [0, i] (the same content and position).
inline std::uint64_t chain_hash(std::uint64_t parent, BlockHash block) {
  std::uint64_t h = parent ^ (block + 0x9e3779b97f4a7c15ULL + (parent << 6) + (parent >> 2));
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 29);
}

class LpmPolicy final : public LocalPolicy {
 public:
  explicit LpmPolicy(LpmOptions o) : o_(o) {}
  void enqueue(const QueuedRequest& r) override { queue_.push(r); }
  std::size_t queued() const override { return queue_.size(); }

  void schedule(AdmissionContext& ctx) override {
    // Without token budget or a running slot the first try_admit fails at once:
    // nothing to do (the matches are read again, with the same results, next step).
    if (queue_.empty() || !ctx.has_room()) return;
    const bool fcfs = o_.fcfs_above > 0 && static_cast<std::int64_t>(queue_.size()) > o_.fcfs_above;
    if (fcfs)
      queue_.sort_by_seq();
    else
      queue_.refresh_by_match(ctx);
    auto& es = queue_.entries();
    if (o_.in_batch_check && !fcfs) deprioritize(es);
    if (o_.in_queue_dedup) seen_.clear();
    for (auto& e : es) {
      if (o_.in_queue_dedup) {
        const std::uint64_t key = ctx.uncached_prefix_key(e.q);
        if (key != 0 && !seen_.insert(key).second) continue;  // another request seeds this block
      }
      if (ctx.try_admit(e.q) != AdmitResult::kAdmitted) break;
      e.taken = true;
    }
    queue_.compact();
  }

 private:
  // SGLang's in-batch prefix caching check: walk in queue order (arrival), and
  // move requests that share a prefix with an earlier low-match request to the end.
  void deprioritize(std::vector<PrefixOrderedQueue::Entry>& es) {
    by_seq_.resize(es.size());
    for (std::size_t i = 0; i < es.size(); ++i) by_seq_[i] = i;
    std::sort(by_seq_.begin(), by_seq_.end(), [&](std::size_t a, std::size_t b) { return es[a].seq < es[b].seq; });
    prefixes_.clear();
    late_.assign(es.size(), false);
    bool any = false;
    for (std::size_t i : by_seq_) {
      const QueuedRequest& q = es[i].q;
      if (es[i].cached > o_.check_threshold) continue;
      // Tokens shared with earlier remembered requests (whole blocks).
      std::int64_t shared = 0;
      std::uint64_t h = 0;
      for (std::size_t b = 0; b < q.spec->prefix_blocks.size(); ++b) {
        const std::int64_t t = prompt_block_tokens(*q.spec, b);
        h = chain_hash(h, q.spec->prefix_blocks[b]);
        if (t <= 0 || !prefixes_.count(h)) break;
        shared += t;
      }
      if (shared >= o_.deprioritize_threshold) {
        late_[i] = true;
        any = true;
        continue;
      }
      h = 0;
      for (std::size_t b = 0; b < q.spec->prefix_blocks.size() && prompt_block_tokens(*q.spec, b) > 0; ++b) {
        h = chain_hash(h, q.spec->prefix_blocks[b]);
        prefixes_.insert(h);
      }
    }
    if (!any) return;
    // Stable: the match order is kept inside each of the two parts.
    std::vector<PrefixOrderedQueue::Entry> out;
    out.reserve(es.size());
    for (std::size_t i = 0; i < es.size(); ++i)
      if (!late_[i]) out.push_back(es[i]);
    for (std::size_t i = 0; i < es.size(); ++i)
      if (late_[i]) out.push_back(es[i]);
    es.swap(out);
    queue_.mark_unsorted();
  }

  LpmOptions o_;
  PrefixOrderedQueue queue_;
  std::unordered_set<std::uint64_t> seen_;      // membership only (order never read)
  std::unordered_set<std::uint64_t> prefixes_;  // membership only
  std::vector<std::size_t> by_seq_;
  std::vector<bool> late_;
};

// The parameters of `local: {name: lpm, ...}`. The first row, `preset`, is
// read first: sglang changes the defaults of fcfs_above and in_batch_check
// (explicit keys still override).
inline const OptionTable<LpmOptions>& lpm_option_table() {
  using R = OptionRange;
  static const OptionTable<LpmOptions> t = {
      {"preset", choice(&LpmOptions::sglang, "sglang", "ideal"), R::kAny,
       "ideal (the paper's LPM) or sglang (SGLang's production scheduler: fcfs_above 128, in_batch_check true)"},
      {"in_queue_dedup", &LpmOptions::in_queue_dedup, R::kAny, "propose one of the requests computing the same block"},
      {"fcfs_above", &LpmOptions::fcfs_above, R::kNonNegative, "FCFS above this many waiting requests (0 = never)"},
      {"in_batch_check", &LpmOptions::in_batch_check, R::kAny, "SGLang's in-batch prefix caching check"},
      {"check_threshold", &LpmOptions::check_threshold, R::kNonNegative, "in-batch check: cached match at most (tokens)"},
      {"deprioritize_threshold", &LpmOptions::deprioritize_threshold, R::kPositive,
       "in-batch check: shared tokens that deprioritise"},
  };
  return t;
}

inline LpmOptions parse_lpm_options(YamlMap& p) {
  LpmOptions o;
  read_options(p, OptionTable<LpmOptions>{lpm_option_table().front()}, o);
  if (o.sglang) {
    o.fcfs_above = 128;
    o.in_batch_check = true;
  }
  read_options(p, lpm_option_table(), o);
  p.finish();
  return o;
}

}  // namespace servesim
