// The GPU replay of one recorded iteration; see replay_gpu.cuh.
#include "kernels/replay/replay_gpu.cuh"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/bench/device_info.h"
#include "kernels/common/host_util.h"
#include "kernels/decode/decode_plan.h"
#include "kernels/prefill/prefill_plan.h"
#include "kernels/prefill/prefill_hopper.cuh"
#include "kernels/prefill/prefill_hopper_plan.h"
#include "kernels/replay/replay_launch.cuh"

namespace servesim::kernels {
namespace {

using namespace replay_detail;

constexpr float kEps = 1e-5f;
constexpr float kTheta = 500000.0f;

DeviceBuffer<__nv_bfloat16> random_weights(size_t n, uint64_t seed, float scale) {
  DeviceBuffer<__nv_bfloat16> b(n);
  fill_bf16_uniform_device(b.get(), n, seed, -scale, scale);
  return b;
}

DeviceBuffer<__nv_bfloat16> upload(const std::vector<float>& v) { return upload_bf16(to_bf16_bits(v)); }

}  // namespace

GpuReplay::GpuReplay(const ReplayModel& m, GpuReplayOptions o, const ReplayWeights* w) : m_(m), opt_(o) {
  if (m.name.empty() || o.tp < 1 || m.q_heads % o.tp || m.intermediate % o.tp)
    throw std::runtime_error("replay: unknown model or a TP degree that does not divide its heads");
  if (w && o.tp != 1) throw std::runtime_error("replay: host weights need tp 1");
  hq_ = m.q_heads / o.tp;
  hk_ = std::max<int64_t>(1, m.kv_heads / o.tp);
  inter_ = m.intermediate / o.tp;
  vocab_ = (m.vocab + o.tp - 1) / o.tp;
  qkv_n_ = (hq_ + 2 * hk_) * m.head_dim;
  sms_ = current_device_sm_count();
  const AttentionHeads heads{static_cast<int>(hq_), static_cast<int>(hk_), static_cast<int>(m.head_dim)};
  if (!prefill_supports(heads) || !decode_supports(heads))
    throw std::runtime_error("replay: our attention kernels do not support this head layout");
  std::string why;
  if (o.prefill_variant == "hopper_wgmma" || o.prefill_variant == "auto") {
    const bool can = m.head_dim == kHopperHeadDim && prefill_hopper_available(&why);
    if (!can && o.prefill_variant == "hopper_wgmma")
      throw std::runtime_error("replay: prefill variant hopper_wgmma cannot run here: " +
                               (why.empty() ? std::string("head_dim is not 128") : why));
    use_hopper_ = can;
  } else if (o.prefill_variant != "fa2") {
    throw std::runtime_error("replay: --prefill-variant must be auto, fa2 or hopper_wgmma, got '" + o.prefill_variant + "'");
  }
  const double page_bytes = 2.0 * hk_ * kPageSize * m.head_dim * 2;  // K and V, one page, one layer
  pool_pages_ = std::max<int64_t>(1, static_cast<int64_t>(o.kv_gb * 1e9 / (page_bytes * m.layers)));
  const size_t h = static_cast<size_t>(m.hidden);
  uint64_t s = derive_seed(o.seed, 0x77);
  auto next = [&] { return s = derive_seed(s, 1); };
  if (w) {
    embedding_ = upload(w->embedding);
    final_norm_ = upload(w->final_norm);
    lm_head_ = upload(w->lm_head);
  } else {
    embedding_ = random_weights(static_cast<size_t>(m.vocab) * h, next(), 1.0f);
    final_norm_ = random_weights(h, next(), 1.0f);
    lm_head_ = random_weights(static_cast<size_t>(vocab_) * h, next(), 0.02f);
  }
  const size_t cache = static_cast<size_t>(pool_pages_) * hk_ * kPageSize * m.head_dim;
  for (int64_t l = 0; l < m.layers; ++l) {
    Layer L;
    if (w) {
      const ReplayLayerWeights& W = w->layers[l];
      L.attn_norm = upload(W.attn_norm);
      L.qkv = upload(W.qkv);
      L.o = upload(W.o);
      L.mlp_norm = upload(W.mlp_norm);
      L.gate_up = upload(W.gate_up);
      L.down = upload(W.down);
    } else {
      L.attn_norm = random_weights(h, next(), 1.0f);
      L.qkv = random_weights(static_cast<size_t>(qkv_n_) * h, next(), 0.02f);
      L.o = random_weights(h * hq_ * m.head_dim, next(), 0.02f);
      L.mlp_norm = random_weights(h, next(), 1.0f);
      L.gate_up = random_weights(2 * static_cast<size_t>(inter_) * h, next(), 0.02f);
      L.down = random_weights(h * inter_, next(), 0.02f);
    }
    L.k_cache = random_weights(cache, next(), 1.0f);
    L.v_cache = random_weights(cache, next(), 1.0f);
    layers_.push_back(std::move(L));
  }
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
}

void GpuReplay::prepare(const RecordedIteration& it, bool exact_context) {
  const std::vector<SequenceStep> steps = replay_steps(it, opt_.seed, m_.vocab, nullptr);
  const int64_t d = m_.head_dim;
  std::vector<int32_t> tok, pos, logit_rows;
  std::vector<int64_t> slot;
  std::vector<int32_t> p_indptr{0}, p_pages, p_lens, p_q{0}, d_indptr{0}, d_pages, d_lens;
  int64_t next_page = 0;
  std::vector<std::vector<int32_t>> seq_pages;
  std::vector<int64_t> seq_ctx;
  for (size_t si = 0; si < steps.size(); ++si) {
    const bool is_prefill = si < it.prefills.size();
    const int64_t ctx = is_prefill ? it.prefills[si].context : it.decodes[si - it.prefills.size()];
    const int64_t n = static_cast<int64_t>(steps[si].tokens.size());
    const int64_t pages = (ctx + n + kPageSize - 1) / kPageSize;
    std::vector<int32_t> own;
    for (int64_t p = 0; p < pages; ++p) own.push_back(static_cast<int32_t>(next_page++ % pool_pages_));
    for (int64_t i = 0; i < n; ++i) {
      tok.push_back(steps[si].tokens[i]);
      pos.push_back(static_cast<int32_t>(ctx + i));
      const int64_t p = ctx + i;
      slot.push_back(static_cast<int64_t>(own[p / kPageSize]) * kPageSize + p % kPageSize);
    }
    if (steps[si].logits) logit_rows.push_back(static_cast<int32_t>(tok.size() - 1));
    auto& indptr = is_prefill ? p_indptr : d_indptr;
    auto& pg = is_prefill ? p_pages : d_pages;
    pg.insert(pg.end(), own.begin(), own.end());
    indptr.push_back(static_cast<int32_t>(pg.size()));
    (is_prefill ? p_lens : d_lens).push_back(static_cast<int32_t>(ctx + n));
    if (is_prefill) p_q.push_back(p_q.back() + static_cast<int32_t>(n));
    seq_pages.push_back(std::move(own));
    seq_ctx.push_back(ctx);
  }
  pages_reused_ = next_page > pool_pages_;
  if (exact_context) {
    if (pages_reused_) throw std::runtime_error("replay: exact context needs more KV pages than the pools hold");
    for (int64_t l = 0; l < m_.layers; ++l) {
      std::vector<float> k = download_bf16_as_float(layers_[l].k_cache.get(), layers_[l].k_cache.size());
      std::vector<float> v = download_bf16_as_float(layers_[l].v_cache.get(), layers_[l].v_cache.size());
      for (size_t si = 0; si < steps.size(); ++si)
        for (int64_t p = 0; p < seq_ctx[si]; ++p)
          for (int64_t hd = 0; hd < hk_; ++hd)
            for (int64_t i = 0; i < d; ++i) {
              const int64_t off = kv_cache_offset(seq_pages[si][p / kPageSize], static_cast<int>(hd),
                                                  static_cast<int>(p % kPageSize), static_cast<int>(i),
                                                  static_cast<int>(hk_), static_cast<int>(d));
              k[off] = context_kv(opt_.seed, static_cast<int>(l), steps[si].seq, p, static_cast<int>(hd), static_cast<int>(i), false);
              v[off] = context_kv(opt_.seed, static_cast<int>(l), steps[si].seq, p, static_cast<int>(hd), static_cast<int>(i), true);
            }
      layers_[l].k_cache = upload(k);
      layers_[l].v_cache = upload(v);
    }
  }
  tokens_ = static_cast<int64_t>(tok.size());
  prefill_rows_ = p_q.back();
  rows_ = static_cast<int64_t>(logit_rows.size());
  tok_.upload(tok);
  pos_.upload(pos);
  slot_.upload(slot);
  logit_rows_.upload(logit_rows);
  const size_t T = static_cast<size_t>(tokens_), h = static_cast<size_t>(m_.hidden);
  ensure(x_, T * h);
  ensure(residual_, T * h);
  ensure(qkv_, T * qkv_n_);
  ensure(q_, T * hq_ * d);
  ensure(attn_, T * hq_ * d);
  ensure(gu_, T * 2 * inter_);
  ensure(act_, T * inter_);
  ensure(out_rows_, std::max<size_t>(1, rows_) * h);
  ensure(logits_, std::max<size_t>(1, rows_) * vocab_);
  ensure(sampled_, std::max<size_t>(1, rows_));
  const AttentionHeads heads{static_cast<int>(hq_), static_cast<int>(hk_), static_cast<int>(d)};
  prefill_.reset();
  hopper_.clear();
  decode_.reset();
  if (!p_lens.empty()) {
    p_indptr_.upload(p_indptr);
    p_pages_.upload(p_pages);
    p_lens_.upload(p_lens);
    p_q_indptr_.upload(p_q);
    p_view_ = PagedKvView{static_cast<int>(p_lens.size()), p_indptr_.get(), p_pages_.get(), p_lens_.get()};
    if (use_hopper_) {
      // One runner per layer: its tensor maps bind that layer's K/V pool (setup, untimed).
      const PrefillPlan plan = plan_prefill(p_q, p_lens, kHopperRows);
      for (auto& L : layers_)
        hopper_.push_back(
            std::make_unique<PrefillHopperRunner>(plan, prefill_args(L, heads), static_cast<int64_t>(T), pool_pages_));
    } else {
      const PrefillPlan plan = plan_prefill(p_q, p_lens, choose_prefill_rows_per_tile(p_q, heads.num_q_heads, sms_));
      prefill_ = std::make_unique<PrefillRunner>(plan, heads);
    }
  }
  if (!d_lens.empty()) {
    d_indptr_.upload(d_indptr);
    d_pages_.upload(d_pages);
    d_lens_.upload(d_lens);
    d_view_ = PagedKvView{static_cast<int>(d_lens.size()), d_indptr_.get(), d_pages_.get(), d_lens_.get()};
    decode_ = std::make_unique<DecodeRunner>(plan_decode(d_lens, heads.num_kv_heads, sms_), heads);
  }
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
}

PrefillArgs GpuReplay::prefill_args(const Layer& L, const AttentionHeads& heads) const {
  PrefillArgs a;
  a.q = q_.get();
  a.k_cache = L.k_cache.get();
  a.v_cache = L.v_cache.get();
  a.kv = p_view_;
  a.q_indptr = p_q_indptr_.get();
  a.heads = heads;
  a.out = attn_.get();
  return a;
}

void GpuReplay::run(cudaStream_t st) {
  const int T = static_cast<int>(tokens_), h = static_cast<int>(m_.hidden), d = static_cast<int>(m_.head_dim);
  const int hq = static_cast<int>(hq_), hk = static_cast<int>(hk_), inter = static_cast<int>(inter_);
  const AttentionHeads heads{hq, hk, d};
  int n = 0;
  launch_embedding(tok_.get(), embedding_.get(), x_.get(), T, h, st);
  ++n;
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& L = layers_[l];
    launch_add_rmsnorm(x_.get(), residual_.get(), L.attn_norm.get(), x_.get(), T, h, kEps, l == 0 ? 0 : 1, st);
    gemm_.run(x_.get(), L.qkv.get(), qkv_.get(), T, qkv_n_, h, st);
    launch_rope(qkv_.get(), pos_.get(), q_.get(), T, hq, hk, d, kTheta, st);
    launch_kv_append(qkv_.get(), slot_.get(), L.k_cache.get(), L.v_cache.get(), T, hq, hk, d, st);
    n += 4;
    if (!hopper_.empty()) {
      hopper_[l]->run(st);
      ++n;
    } else if (prefill_) {
      prefill_->run(prefill_args(L, heads), st);
      ++n;
    }
    if (decode_) {
      DecodeArgs a;
      a.q = q_.get() + prefill_rows_ * hq * d;
      a.k_cache = L.k_cache.get();
      a.v_cache = L.v_cache.get();
      a.kv = d_view_;
      a.heads = heads;
      a.out = attn_.get() + prefill_rows_ * hq * d;
      decode_->run(a, st);
      n += decode_->plan().needs_merge() ? 2 : 1;
    }
    gemm_.run(attn_.get(), L.o.get(), x_.get(), T, h, static_cast<int64_t>(hq) * d, st);
    launch_add_rmsnorm(x_.get(), residual_.get(), L.mlp_norm.get(), x_.get(), T, h, kEps, 1, st);
    gemm_.run(x_.get(), L.gate_up.get(), gu_.get(), T, 2 * static_cast<int64_t>(inter), h, st);
    launch_silu_mul(gu_.get(), act_.get(), T, inter, st);
    gemm_.run(act_.get(), L.down.get(), x_.get(), T, h, inter, st);
    n += 5;
  }
  launch_add_rmsnorm(x_.get(), residual_.get(), final_norm_.get(), x_.get(), T, h, kEps, 1, st);
  ++n;
  if (rows_ > 0) {
    const int R = static_cast<int>(rows_);
    launch_gather_rows(x_.get(), logit_rows_.get(), out_rows_.get(), R, h, st);
    gemm_.run(out_rows_.get(), lm_head_.get(), logits_.get(), R, vocab_, h, st);
    launch_argmax(logits_.get(), R, static_cast<int>(vocab_), sampled_.get(), st);
    n += 3;
  }
  SERVESIM_CUDA_CHECK_LAUNCH();
  launches_ = n;
}

std::vector<float> GpuReplay::logits() const {
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
  return download_bf16_as_float(logits_.get(), static_cast<size_t>(rows_ * vocab_));
}

std::vector<int32_t> GpuReplay::sampled() const {
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int32_t> all = sampled_.download();
  all.resize(static_cast<size_t>(rows_));
  return all;
}

}  // namespace servesim::kernels
