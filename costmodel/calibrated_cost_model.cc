// Iteration latency from kernel fits; see calibrated_cost_model.h.
#include "costmodel/calibrated_cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "costmodel/gemm_shapes.h"
#include "costmodel/operation_list.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

std::string measured_shapes(const std::map<HeadShape, FeatureFit>& fits) {
  std::string s;
  for (const auto& [h, f] : fits) s += (s.empty() ? "" : ", ") + h.label();
  return s.empty() ? "none" : s;
}

// The dense kernels of the profile, for the attention pricers.
// Decode from the uniform rows when `grid` is set (decode_attention: rows); each
// launch less the launch excess (launch_excess: measured; `queued`, the backend's rule).
class FittedDenseKernels final : public DenseAttentionKernels {
 public:
  FittedDenseKernels(const FeatureFit* prefill, const FeatureFit* decode, const DecodeGrid* grid,
                     const RaggedDecode* ragged, HeadShape shape, double launch_excess_us)
      : prefill_(prefill), decode_(decode), grid_(grid), ragged_(ragged), shape_(shape), excess_(launch_excess_us) {}
  double prefill_us(const PrefillWork& w) const override {
    return queued_us(prefill_->predict(prefill_features(shape_, w)), excess_);
  }
  double decode_us(const DecodeWork& w) const override {
    if (!grid_ || w.seqs < 1) return queued_us(decode_->predict(decode_features(shape_, w)), excess_);
    const double kv = w.kv_tokens / w.seqs;  // the mean KV length
    const double spread = ragged_ && w.max_kv > 0 ? w.max_kv * w.seqs / w.kv_tokens : 1;
    std::uint16_t* grid_hints = w.hints ? w.hints->grid : nullptr;
    if (!(spread > 1))
      return queued_us(grid_->us_at(w.seqs, kv, std::log(kv), *decode_, shape_, grid_hints), excess_);
    // Both logarithms first: independent, so their latencies overlap (the same
    // values, and the same products, as grid_->us() * ragged_->factor()).
    const double log_kv = std::log(kv), log_spread = std::log(spread);
    return queued_us(grid_->us_at(w.seqs, kv, log_kv, *decode_, shape_, grid_hints) *
                         ragged_->factor_at(w.seqs, spread, log_spread, w.hints ? w.hints->ragged : nullptr),
                     excess_);
  }
  bool uses_max_kv() const override { return grid_ && ragged_; }

 private:
  const FeatureFit* prefill_;
  const FeatureFit* decode_;
  const DecodeGrid* grid_;
  const RaggedDecode* ragged_;  // with grid_: a ragged batch's factor over its mean's uniform batch
  HeadShape shape_;
  double excess_;
};

}  // namespace

CalibratedCostModel::CalibratedCostModel(std::shared_ptr<const KernelFits> fits, ModelSpec model, HardwareSpec hw,
                                         AttentionMethods attention, CalibratedOptions opt)
    : fits_(std::move(fits)), m_(std::move(model)), hw_(std::move(hw)), attn_(std::move(attention)), opt_(opt) {
  const std::int64_t tp = opt_.tp;
  shape_ = HeadShape{m_.heads / tp, std::max<std::int64_t>(1, m_.kv_heads / tp), m_.head_dim};
  decode_ = resolve_attention(fits_->decode(), "decode");
  prefill_ = resolve_attention(fits_->prefill(), "prefill");
  for (const auto& [h, fit] : fits_->prefill())
    if (&fit == prefill_) prefill_variant_ = fits_->prefill_variant().at(h);
  if (fits_->gemm().empty())
    throw InputError(fmt::format("{}: the profile has no gemm rows; run `servesim-kernels bench --family gemm`",
                                 fits_->file()));
  const auto shapes = gemm_shapes({m_.hidden, m_.heads, m_.kv_heads, m_.head_dim, m_.intermediate, m_.vocab}, tp);
  Gemm* slots[5] = {&qkv_, &o_, &gate_up_, &down_, &lm_head_};
  for (std::size_t i = 0; i < shapes.size(); ++i) *slots[i] = resolve_gemm(shapes[i].n, shapes[i].k, shapes[i].layer);
  if (opt_.launch_excess == LaunchExcess::kMeasured ||
      (opt_.launch_excess == LaunchExcess::kAuto && fits_->launch_excess_us())) {
    if (!fits_->launch_excess_us())
      throw InputError(fmt::format("{}: cost_model.launch_excess is measured but the profile has no usable launch rows "
                                   "(ceilings family: launch_alone, launch_queued, launch_queued_spin); run "
                                   "`servesim-kernels bench --family ceilings` and merge it with `servesim-kernels merge "
                                   "--sessions --add-variants`, or set launch_excess: none", fits_->file()));
    launch_excess_us_ = *fits_->launch_excess_us();
  }
  const DecodeGrid* grid = nullptr;
  const RaggedDecode* ragged = nullptr;
  const auto g = fits_->decode_grids().find(shape_);
  const bool has_grid = g != fits_->decode_grids().end() && fits_->decode().count(shape_);
  if (opt_.decode_attention == DecodePricing::kRows ||
      (opt_.decode_attention == DecodePricing::kAuto && has_grid && launch_excess_us_ > 0)) {
    if (has_grid) {
      grid = &g->second;
      decode_rows_ = g->second.describe();
      if (auto r = fits_->ragged_decode().find(shape_); r != fits_->ragged_decode().end()) {
        ragged = &r->second;
        decode_rows_ += fmt::format(" x ragged factor from {} decode_ragged pairs", r->second.pairs());
      }
    } else {
      notes_.push_back(fmt::format("decode {} by the fit (decode_attention: rows, but the profile has no uniform "
                                   "decode rows at this head shape)", shape_.label()));
    }
  }
  dense_ = std::make_unique<FittedDenseKernels>(prefill_, decode_, grid, ragged, shape_, launch_excess_us_);
  attention_ = make_attention_pricers(attn_, AttentionPricingContext{dense_.get(), fits_.get(), shape_, m_.layers, opt_.tp,
                                                                     opt_.allow_scaling, &notes_, launch_excess_us_});
  // Elementwise parts, measured (kernel_fits.h): the replay's kernels (our bench), else an
  // imported stack's kernels (Vidur's per-op tables run the residual add as its own
  // kernel before each norm); a part without rows keeps the bandwidth price below.
  struct Source {
    Part part;
    std::vector<std::vector<const char*>> choices;  // the first choice whose kernels are all measured
  };
  const Source sources[] = {
      {Part::kEmbedding, {{"embedding"}}},
      {Part::kAttnNorm, {{"add_rmsnorm"}, {"rmsnorm", "residual_add"}}},
      {Part::kMlpNorm, {{"add_rmsnorm"}, {"rmsnorm_post", "residual_add"}, {"rmsnorm", "residual_add"}}},
      {Part::kFinalNorm, {{"add_rmsnorm"}, {"rmsnorm", "residual_add"}}},
      {Part::kRope, {{"rope"}}},
      {Part::kKvWrite, {{"kv_append"}, {"residual_add"}}},
      {Part::kActivation, {{"silu_mul"}}},
      {Part::kSampling, {{"argmax"}, {"residual_add"}}}};
  const auto& ew = fits_->elementwise();
  std::size_t measured_parts = 0;
  for (const auto& src : sources)
    for (const auto& choice : src.choices) {
      if (!std::all_of(choice.begin(), choice.end(), [&](const char* k) { return ew.count(k) > 0; })) continue;
      auto& slot = elementwise_[static_cast<std::size_t>(src.part)];
      for (const char* k : choice) slot.push_back(&ew.at(k));
      ++measured_parts;
      if (choice.size() == 1 && choice[0] == std::string("residual_add"))
        notes_.push_back(fmt::format("{} priced as the measured residual add at its bytes (no kernel of its own in "
                                     "the profile)", part_name(src.part)));
      break;
    }
  if (measured_parts > 0 && measured_parts < std::size(sources))
    notes_.push_back(fmt::format("{} of {} elementwise parts measured; the rest at the copy bandwidth", measured_parts,
                                 std::size(sources)));
  if (opt_.tp > 1)
    if (auto it = fits_->allreduce().find(opt_.tp); it != fits_->allreduce().end()) allreduce_ = &it->second;
  copy_gbps_ = fits_->copy_gbps();
  if (copy_gbps_ <= 0) {
    copy_gbps_ = hw_.mem_bandwidth_gbps * 0.8;
    if (measured_parts < std::size(sources))
      notes_.push_back(fmt::format("elementwise at 0.8 x datasheet bandwidth (no ceiling rows)"));
  }
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
  if (!opt_.allow_scaling && !fits_->gemm().count({n, k}))
    throw InputError(fmt::format("{}: no gemm rows for the {} layer of {} at tp={} (n={} k={}); "
                                 "cost_model.allow_scaling is false", fits_->file(), layer, m_.name, opt_.tp, n, k));
  const Gemm g = fits_->gemm_price(n, k);
  if (g.scaled)
    notes_.push_back(fmt::format("gemm {} n={} k={} from n={} k={} by the ratio of their roofline guides (x{:.3f} at "
                                 "M=1, x{:.3f} at M=4096)", layer, n, k, g.measured.first, g.measured.second,
                                 g.to(1) / g.from(1), g.to(4096) / g.from(4096)));
  return g;
}

PartTimes CalibratedCostModel::parts(const BatchShape& b) const {
  PartTimes r{};
  if (b.empty()) return r;
  auto at = [&](Part p) -> double& { return r[static_cast<std::size_t>(p)]; };
  const auto layers = static_cast<double>(m_.layers);
  for (const Operation& op : operation_list(m_, opt_.tp, b)) {
    const double times = op.per_layer ? layers : 1.0;
    switch (op.kind) {
      case OpKind::kGemm: {
        const Gemm* g = op.part == Part::kQkv      ? &qkv_
                        : op.part == Part::kO      ? &o_
                        : op.part == Part::kGateUp ? &gate_up_
                        : op.part == Part::kDown   ? &down_
                                                   : &lm_head_;
        at(op.part) += times * queued((*g)(op.m));
        break;
      }
      case OpKind::kElementwise: {
        const auto& kernels = elementwise_[static_cast<std::size_t>(op.part)];
        double us = 0;
        for (const MonotoneCurve* c : kernels) us += queued((*c)(op.bytes));
        at(op.part) += times * (kernels.empty() ? op.bytes / (copy_gbps_ * 1e3) : us);
        break;
      }
      case OpKind::kAllreduce: {
        const double tp = opt_.tp;
        const double message = static_cast<double>(b.total_tokens()) * static_cast<double>(m_.hidden) * 2;  // [T, h] bf16
        if (allreduce_) {  // measured at this message size and GPU count
          at(op.part) = layers * 2 * (*allreduce_)(message);
          break;
        }
        const double bytes = 2.0 * (tp - 1) / tp * message;
        at(op.part) = layers * 2 * (opt_.allreduce_latency_us + bytes / (hw_.tp_allreduce_gbps * 1e3));
        break;
      }
      case OpKind::kAttention: break;  // the pricers, below
    }
  }
  at(Part::kAttentionPrefill) = attention_.prefill->us(b);
  at(Part::kAttentionDecode) = attention_.decode->us(b);
  if (attention_.kv) at(Part::kAttentionKv) = attention_.kv->us(b);
  at(Part::kLaunch) = layers * opt_.layer_overhead_us;
  at(Part::kOverhead) = opt_.iteration_overhead_us;
  return r;
}

void CalibratedCostModel::attention_parts(const BatchShape& b, PartTimes& p) const {
  p[static_cast<std::size_t>(Part::kAttentionPrefill)] = attention_.prefill->us(b);
  p[static_cast<std::size_t>(Part::kAttentionDecode)] = attention_.decode->us(b);
  if (attention_.kv) p[static_cast<std::size_t>(Part::kAttentionKv)] = attention_.kv->us(b);
}

Time CalibratedCostModel::time_of(const PartTimes& p) const {
  return std::max<Time>(1, seconds_to_time(group(p).total() * 1e-6));
}

double CalibratedCostModel::row_stem(const PartTimes& p) const { return group(p).stem(); }

Time CalibratedCostModel::time_of_stem(const PartTimes& p, double stem) const {
  return std::max<Time>(1, seconds_to_time(group(p).after_stem(stem) * 1e-6));
}

CalibratedCostModel::Breakdown CalibratedCostModel::breakdown(const BatchShape& b) const {
  if (b.empty()) return Breakdown{};
  return group(parts(b));
}

CalibratedCostModel::Breakdown CalibratedCostModel::group(const PartTimes& p) {
  Breakdown r;
  auto at = [&](Part x) { return p[static_cast<std::size_t>(x)]; };
  r.linear = at(Part::kQkv) + at(Part::kO) + at(Part::kGateUp) + at(Part::kDown);
  r.elementwise = at(Part::kAttnNorm) + at(Part::kRope) + at(Part::kKvWrite) + at(Part::kMlpNorm) +
                  at(Part::kActivation) + at(Part::kEmbedding) + at(Part::kFinalNorm) + at(Part::kSampling);
  r.allreduce = at(Part::kAllreduce);
  r.prefill_attention = at(Part::kAttentionPrefill);
  r.decode_attention = at(Part::kAttentionDecode);
  r.andpro = at(Part::kAttentionKv);
  r.lm_head = at(Part::kLmHead);
  r.overhead = at(Part::kOverhead) + at(Part::kLaunch);
  return r;
}

Time CalibratedCostModel::iteration_time(const BatchShape& b) const {
  if (b.empty()) return 0;
  return time_of(parts(b));
}

std::string CalibratedCostModel::identity() const {
  std::string s = fits_->synthetic() ? "calibrated from a SYNTHETIC profile (uncalibrated: not a measurement): "
                                     : "calibrated: ";
  s += fmt::format("profile {} [{}] {} tp={} {} iteration_overhead={}us", fits_->file(), fits_->provenance(), m_.name,
                   opt_.tp, attn_.describe(), opt_.iteration_overhead_us);
  if (opt_.tp > 1)
    s += allreduce_ ? fmt::format(" allreduce=measured ({} gpus; {})", opt_.tp, fits_->allreduce_source())
                    : std::string(" allreduce=datasheet interconnect");
  if (prefill_variant_ != "fa2") s += " prefill_variant=" + prefill_variant_;  // the fastest measured one (kernel_fits.h)
  if (launch_excess_us_ > 0) s += fmt::format(" launch_excess={:.3f}us", launch_excess_us_);
  if (!decode_rows_.empty()) s += " decode=rows(" + decode_rows_ + ")";
  if (!notes_.empty()) {
    s += " scaled:";
    for (const auto& n : notes_) s += " [" + n + "]";
  }
  for (char& c : s)
    if (c == ',') c = ';';  // a single report cell
  return s;
}

}  // namespace servesim
