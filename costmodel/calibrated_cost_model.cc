// Iteration latency from kernel fits; see calibrated_cost_model.h.
#include "costmodel/calibrated_cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "costmodel/gemm_shapes.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

std::string measured_shapes(const std::map<HeadShape, FeatureFit>& fits) {
  std::string s;
  for (const auto& [h, f] : fits) s += (s.empty() ? "" : ", ") + h.label();
  return s.empty() ? "none" : s;
}

template <class Map>
std::string keys_of(const Map& m) {
  std::string s;
  for (const auto& kv : m) s += (s.empty() ? "" : ", ") + fmt::format("{}", kv.first);
  return s.empty() ? "none" : s;
}

}  // namespace

CalibratedCostModel::CalibratedCostModel(std::shared_ptr<const KernelFits> fits, ModelSpec model, HardwareSpec hw,
                                         AttentionMethods attention, CalibratedOptions opt)
    : fits_(std::move(fits)), m_(std::move(model)), hw_(std::move(hw)), attn_(std::move(attention)), opt_(opt) {
  const std::int64_t tp = opt_.tp;
  shape_ = HeadShape{m_.heads / tp, std::max<std::int64_t>(1, m_.kv_heads / tp), m_.head_dim};
  decode_ = resolve_attention(fits_->decode(), "decode");
  prefill_ = resolve_attention(fits_->prefill(), "prefill");
  if (fits_->gemm().empty())
    throw InputError(fmt::format("{}: the profile has no gemm rows; run `servesim-kernels bench --family gemm`",
                                 fits_->file()));
  const auto shapes = gemm_shapes({m_.hidden, m_.heads, m_.kv_heads, m_.head_dim, m_.intermediate, m_.vocab}, tp);
  Gemm* slots[5] = {&qkv_, &o_, &gate_up_, &down_, &lm_head_};
  for (std::size_t i = 0; i < shapes.size(); ++i) *slots[i] = resolve_gemm(shapes[i].n, shapes[i].k, shapes[i].layer);
  resolve_sparse();
  copy_gbps_ = fits_->copy_gbps();
  if (copy_gbps_ <= 0) {
    copy_gbps_ = hw_.mem_bandwidth_gbps * 0.8;
    notes_.push_back(fmt::format("elementwise at 0.8 x datasheet bandwidth (no ceiling rows)"));
  }
  const auto h = static_cast<double>(m_.hidden), d = static_cast<double>(m_.head_dim);
  const auto hq = static_cast<double>(shape_.heads), hk = static_cast<double>(shape_.kv_heads);
  const double inter = static_cast<double>(m_.intermediate) / static_cast<double>(tp);
  // bf16 traffic per token and layer of the unfused-GEMM remainder (vLLM's fused kernels):
  // 2 x add+RMSNorm (read x, residual; write both), RoPE on q and k (in place),
  // K/V written to the paged cache, SiLU-and-mul (read 2I, write I).
  elementwise_bytes_per_token_ = 2.0 * (2 * 4 * h + 2 * (hq + hk) * d + 2 * hk * d * 2 + 3 * inter);
}

const FeatureFit* CalibratedCostModel::resolve_attention(const std::map<HeadShape, FeatureFit>& fits,
                                                         const char* family) {
  if (auto it = fits.find(shape_); it != fits.end()) return &it->second;
  const std::string measured = measured_shapes(fits);
  const std::string what = fmt::format("{}: no {} fit for head shape {} (heads/kv_heads/head_dim of one GPU at tp={}); "
                                       "measured: {}", fits_->file(), family, shape_.label(), opt_.tp, measured);
  const FeatureFit* best = nullptr;
  HeadShape from;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& [h, f] : fits) {
    if (h.head_dim != shape_.head_dim) continue;
    const double group = std::abs(std::log(static_cast<double>(h.heads) / static_cast<double>(h.kv_heads)) -
                                  std::log(static_cast<double>(shape_.heads) / static_cast<double>(shape_.kv_heads)));
    const double kv = std::abs(std::log(static_cast<double>(h.kv_heads) / static_cast<double>(shape_.kv_heads)));
    const double dist = 100 * group + kv;  // same GQA group first, then the nearest KV head count
    if (dist < best_d) best_d = dist, best = &f, from = h;
  }
  if (!best)
    throw InputError(what + fmt::format("; no measured shape has head_dim {} (not scalable: tiling changes); run "
                                        "`servesim-kernels bench --family {}` for this model", shape_.head_dim, family));
  if (!opt_.allow_scaling) throw InputError(what + "; cost_model.allow_scaling is false");
  notes_.push_back(fmt::format("{} {} from the {} fit at its own bytes/FLOPs", family, shape_.label(), from.label()));
  return best;
}

CalibratedCostModel::Gemm CalibratedCostModel::resolve_gemm(std::int64_t n, std::int64_t k, const std::string& layer) {
  const auto& g = fits_->gemm();
  if (auto it = g.find({n, k}); it != g.end()) return Gemm{&it->second.curve};
  if (!opt_.allow_scaling)
    throw InputError(fmt::format("{}: no gemm rows for the {} layer of {} at tp={} (n={} k={}); "
                                 "cost_model.allow_scaling is false", fits_->file(), layer, m_.name, opt_.tp, n, k));
  const GemmCurve* best = nullptr;
  std::pair<std::int64_t, std::int64_t> from;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& [key, curve] : g) {
    const double dn = std::log(static_cast<double>(key.first) / static_cast<double>(n));
    const double dk = std::log(static_cast<double>(key.second) / static_cast<double>(k));
    if (const double dist = dn * dn + dk * dk; dist < best_d) best_d = dist, best = &curve, from = key;
  }
  Gemm scaled{&best->curve, true, fits_->gemm_guide_of(from), {}};
  scaled.to = scaled.from;
  scaled.to.n = n;
  scaled.to.k = k;
  notes_.push_back(fmt::format("gemm {} n={} k={} from n={} k={} by the ratio of their roofline guides (x{:.3f} at "
                               "M=1, x{:.3f} at M=4096)", layer, n, k, from.first, from.second,
                               scaled.to(1) / scaled.from(1), scaled.to(4096) / scaled.from(4096)));
  return scaled;
}

void CalibratedCostModel::resolve_sparse() {
  const std::string& file = fits_->file();
  if (attn_.decode == DecodeMethod::kQuest) {
    auto it = fits_->quest().find("kvhead");
    const QuestFits* q = it == fits_->quest().end() ? nullptr : &it->second;
    if (!q || q->metadata.empty() || q->estimate.empty() || q->topk.empty() || q->decode.empty())
      throw InputError(fmt::format("{}: attention.decode quest needs the quest_metadata, quest_estimate, quest_topk and "
                                   "quest_decode rows of variant kvhead; run `servesim-kernels bench --family quest`",
                                   file));
    if (q->shape != shape_) {
      if (!opt_.allow_scaling)
        throw InputError(fmt::format("{}: quest was measured at head shape {}, the model needs {}; "
                                     "cost_model.allow_scaling is false", file, q->shape.label(), shape_.label()));
      notes_.push_back(fmt::format("quest {} from {} at its own bytes", shape_.label(), q->shape.label()));
    }
    quest_ = q;
  }
  if (attn_.prefill == PrefillMethod::kMInference) {
    for (const auto& [name, share] : attn_.minference.patterns) {
      auto it = fits_->minference().find(name + "/structured");
      const MinfFits* m = it == fits_->minference().end() ? nullptr : &it->second;
      if (!m || m->attention.empty() || m->band_width <= 0 || (m->estimate.empty() != m->index.empty())) {
        std::string known;
        for (const auto& [key, f] : fits_->minference())
          if (key.ends_with("/structured")) known += (known.empty() ? "" : ", ") + key.substr(0, key.find('/'));
        throw InputError(fmt::format("{}: attention.minference pattern '{}' has no measured minf_attention rows "
                                     "(structured data); measured patterns: {}; run `servesim-kernels bench --family "
                                     "minference`", file, name, known.empty() ? "none" : known));
      }
      if (m->shape != shape_) {
        if (!opt_.allow_scaling)
          throw InputError(fmt::format("{}: minference was measured at head shape {}, the model needs {}; "
                                       "cost_model.allow_scaling is false", file, m->shape.label(), shape_.label()));
        notes_.push_back(fmt::format("minference {} {} from {}", name, shape_.label(), m->shape.label()));
      }
      patterns_.push_back(Pattern{share, m});
    }
  }
  if (attn_.kv == KvMethod::kAndpro) {
    auto it = fits_->andpro().find(attn_.andpro.window);
    if (it == fits_->andpro().end() || it->second.score.empty() || it->second.select.empty() ||
        it->second.compact.empty())
      throw InputError(fmt::format("{}: attention.andpro window {} has no measured andpro_score/select/compact rows; "
                                   "measured windows: {}; run `servesim-kernels bench --family andpro`",
                                   file, attn_.andpro.window, keys_of(fits_->andpro())));
    andpro_ = &it->second;
    if (andpro_->shape != shape_) {
      if (!opt_.allow_scaling)
        throw InputError(fmt::format("{}: andpro was measured at head shape {}, the model needs {}; "
                                     "cost_model.allow_scaling is false", file, andpro_->shape.label(), shape_.label()));
      notes_.push_back(fmt::format("andpro {} from {}", shape_.label(), andpro_->shape.label()));
    }
  }
}

double CalibratedCostModel::prefill_attention_us(const BatchShape& b) const {
  PrefillWork dense;
  double sparse = 0;
  const auto heads = static_cast<double>(shape_.heads);
  for (const PrefillChunk& c : b.prefills) {
    const auto n = static_cast<double>(c.new_tokens), ctx = static_cast<double>(c.context);
    const double span = ctx + n;
    if (patterns_.empty() || span < static_cast<double>(attn_.minference.min_length)) {
      dense.add(n, ctx);
      continue;
    }
    // MInference: the chunk's rows visit the band's tiles between `ctx` and `span`
    // (area-proportional); estimate and index run over the whole span.
    for (const Pattern& p : patterns_) {
      const MinfFits& m = *p.fits;
      const double tiles = (minf_band_tiles(span, m.band_width) - minf_band_tiles(ctx, m.band_width)) * heads;
      double t = m.attention.predict(minf_attention_features(shape_, n, tiles));
      if (!m.estimate.empty())
        t += m.estimate.predict(minf_estimate_features(shape_, span, m.info)) +
             m.index.predict(minf_index_features(shape_, span, m.info));
      sparse += p.share * t;
    }
  }
  return sparse + (dense.rows > 0 ? prefill_->predict(prefill_features(shape_, dense)) : 0.0);
}

double CalibratedCostModel::decode_attention_us(const BatchShape& b) const {
  if (b.decode_contexts.empty()) return 0;
  const auto layers = static_cast<double>(m_.layers);
  DecodeWork all;
  DecodeWork short_ctx;  // Quest layers: contexts within the budget run dense (nothing to select)
  QuestWork sparse;
  for (std::int64_t ctx : b.decode_contexts) {
    const auto kv = static_cast<double>(ctx + 1);  // the new token's K/V is read too
    all.seqs += 1;
    all.kv_tokens += kv;
    if (!quest_) continue;
    if (ctx + 1 <= attn_.quest.budget) {
      short_ctx.seqs += 1;
      short_ctx.kv_tokens += kv;
    } else {
      sparse.add(kv, attn_.quest.budget);
    }
  }
  const double dense_layer = decode_->predict(decode_features(shape_, all));
  if (!quest_) return layers * dense_layer;
  double quest_layer = quest_->metadata.predict(quest_metadata_features(shape_, QuestWork{all.seqs, 0, 0, 0}));
  if (short_ctx.seqs > 0) quest_layer += decode_->predict(decode_features(shape_, short_ctx));
  if (sparse.seqs > 0)
    quest_layer += quest_->estimate.predict(quest_estimate_features(shape_, sparse)) +
                   quest_->topk.predict(quest_topk_features(shape_, sparse)) +
                   quest_->decode.predict(quest_decode_features(shape_, sparse));
  const double dense_layers = std::min(layers, static_cast<double>(attn_.quest.dense_layers));
  return dense_layers * dense_layer + (layers - dense_layers) * quest_layer;
}

double CalibratedCostModel::andpro_us(const BatchShape& b) const {
  if (!andpro_) return 0;
  double t = 0;
  const auto w = static_cast<double>(attn_.andpro.window);
  for (const PrefillChunk& c : b.prefills) {
    if (!c.completes) continue;
    const std::int64_t n = c.context + c.new_tokens;  // the whole prompt is scored once, at its end
    if (n <= attn_.andpro.budget + attn_.andpro.window) continue;  // nothing to evict
    const auto nd = static_cast<double>(n);
    t += andpro_->score.predict(andpro_scan_features(shape_, nd, w)) +
         andpro_->select.predict(andpro_scan_features(shape_, nd, w)) +
         andpro_->compact.predict(andpro_compact_features(shape_, static_cast<double>(attn_.andpro.kept_tokens(n))));
  }
  return static_cast<double>(m_.layers) * t;
}

CalibratedCostModel::Breakdown CalibratedCostModel::breakdown(const BatchShape& b) const {
  Breakdown r;
  if (b.empty()) return r;
  const auto layers = static_cast<double>(m_.layers);
  const auto tokens = static_cast<double>(b.total_tokens());
  r.linear = layers * (qkv_(tokens) + o_(tokens) + gate_up_(tokens) + down_(tokens));
  r.elementwise = layers * tokens * elementwise_bytes_per_token_ / (copy_gbps_ * 1e3);
  if (opt_.tp > 1) {
    const double tp = opt_.tp;
    const double bytes = 2.0 * (tp - 1) / tp * tokens * static_cast<double>(m_.hidden) * 2;
    r.allreduce = layers * 2 * (opt_.allreduce_latency_us + bytes / (hw_.interconnect_gbps * 1e3));
  }
  if (!b.prefills.empty()) r.prefill_attention = layers * prefill_attention_us(b);
  r.decode_attention = decode_attention_us(b);
  r.andpro = andpro_us(b);
  double logits = static_cast<double>(b.decode_tokens());
  for (const auto& p : b.prefills) logits += p.completes ? 1 : 0;
  if (logits > 0) r.lm_head = lm_head_(logits);
  r.overhead = opt_.iteration_overhead_us + layers * opt_.layer_overhead_us;
  return r;
}

Time CalibratedCostModel::iteration_time(const BatchShape& b) const {
  if (b.empty()) return 0;
  return std::max<Time>(1, seconds_to_time(breakdown(b).total() * 1e-6));
}

std::string CalibratedCostModel::identity() const {
  std::string s = fits_->synthetic() ? "calibrated from a SYNTHETIC profile (uncalibrated: not a measurement): "
                                     : "calibrated: ";
  s += fmt::format("profile {} [{}] {} tp={} {} iteration_overhead={}us", fits_->file(), fits_->provenance(), m_.name,
                   opt_.tp, attn_.describe(), opt_.iteration_overhead_us);
  if (opt_.tp > 1) s += " allreduce=datasheet interconnect";
  if (!notes_.empty()) {
    s += " scaled:";
    for (const auto& n : notes_) s += " [" + n + "]";
  }
  for (char& c : s)
    if (c == ',') c = ';';  // a single report cell
  return s;
}

}  // namespace servesim
