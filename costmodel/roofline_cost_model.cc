// Roofline arithmetic; see roofline_cost_model.h. Shapes are per GPU of the TP
// group: heads, KV heads and weight columns/rows are split tp ways.
#include "costmodel/roofline_cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "sim/core/error.h"

namespace servesim {

double roofline_gemm_compute_seconds(double m, double n, double k, int tm, int tn, int sms, double rate) {
  const double tiles_shapes[4][2] = {{static_cast<double>(tm), static_cast<double>(tn)},
                                     {static_cast<double>(tn), static_cast<double>(tm)},
                                     {static_cast<double>(tm), std::max(1.0, tn / 2.0)},
                                     {std::max(1.0, tm / 2.0), std::max(1.0, tn / 2.0)}};
  const double per_sm = rate / sms;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [a, b] : tiles_shapes) {
    const double tiles = std::ceil(m / a) * std::ceil(n / b);
    const double max_split = std::max(1.0, std::floor(k / 256));
    const double split = std::clamp(std::floor(sms / tiles), 1.0, max_split);
    const double waves = std::ceil(tiles * split / sms);
    best = std::min(best, waves * 2 * a * b * (k / split) / per_sm);
  }
  return best;
}

// The dense attention kernels of the hardware model (or of the flat model),
// one launch in one layer, µs.
class RooflineCostModel::DenseKernels final : public DenseAttentionKernels {
 public:
  DenseKernels(const ModelSpec& m, const HardwareSpec& hw, const RooflineOptions& o, bool flat, double floor_us)
      : hw_(hw), flat_(flat), floor_us_(floor_us),
        qh_(static_cast<double>(m.heads) / o.tp),
        kvh_int_(static_cast<double>(std::max<std::int64_t>(1, m.kv_heads / o.tp))),
        d_(static_cast<double>(m.head_dim)),
        kv_bytes_(m.kv_bytes),
        kv_token_bytes_(2.0 * std::max(1.0, static_cast<double>(m.kv_heads) / o.tp) * d_ * m.kv_bytes),
        flat_flops_(hw.bf16_tflops * 1e12 * o.compute_efficiency),
        flat_bytes_(hw.mem_bandwidth_gbps * 1e9 * o.memory_efficiency),
        flops_per_kv_(4.0 * qh_ * d_),
        decode_bytes_per_s_(hw.mem_bandwidth_gbps * 1e9 * hw.decode_attention_bandwidth_fraction),
        attention_flops_per_s_(hw.bf16_tflops * 1e12 * hw.prefill_attention_flops_fraction),
        bytes_per_s_(hw.mem_bandwidth_gbps * 1e9 * hw.bandwidth_fraction),
        sms_(hw.sms) {}

  double prefill_us(const PrefillWork& w) const override {
    const double flops = 4.0 * qh_ * d_ * w.visible;
    if (flat_) {
      const double bytes = w.kv_tokens * kv_token_bytes_ + 2.0 * w.rows * qh_ * d_ * kv_bytes_;
      return std::max(flops / flat_flops_, bytes / flat_bytes_) * 1e6;
    }
    const double bytes = w.kv_tokens * 2 * kvh_int_ * d_ * kv_bytes_ + 2.0 * w.rows * qh_ * d_ * 2;
    const double fill = wave_fill(w.q_tiles * qh_, hw_.sms);
    const double compute = flops / (attention_flops_per_s_ * fill);
    const double memory = bytes / bytes_per_s_;
    return std::max({compute * 1e6, memory * 1e6, floor_us_});
  }
  // The expressions' constant leading factors are products computed once, in the
  // same order (left to right), so every result has the same bits as before.
  double decode_us(const DecodeWork& w) const override {
    const double flops = flops_per_kv_ * w.kv_tokens;  // 4.0 * qh_ * d_ * w.kv_tokens
    if (flat_) {
      const double bytes = w.kv_tokens * kv_token_bytes_;
      return std::max(flops / flat_flops_, bytes / flat_bytes_) * 1e6;
    }
    const double bytes = w.kv_tokens * 2 * kvh_int_ * d_ * kv_bytes_ + 2.0 * w.seqs * qh_ * d_ * 2;
    // fill = min(1, items / sms): exactly 1 when items >= sms (a correctly rounded
    // quotient of x >= s > 0 is >= 1), and then the bandwidth's product is
    // decode_bytes_per_s_ * 1.0, itself: no division for the fill.
    const double items = w.kv_splits * kvh_int_;
    const double memory = items >= sms_ ? bytes / decode_bytes_per_s_
                                        : bytes / (decode_bytes_per_s_ * std::min(1.0, items / sms_));
    const double compute = flops / attention_flops_per_s_;
    return std::max({compute * 1e6, memory * 1e6, floor_us_});
  }

 private:
  HardwareSpec hw_;
  bool flat_;
  double floor_us_;
  double qh_, kvh_int_, d_;
  int kv_bytes_;
  double kv_token_bytes_;  // flat: K and V of one token, one layer
  double flat_flops_, flat_bytes_;
  double flops_per_kv_;           // 4 * qh * d: decode attention FLOPs per KV token read
  double decode_bytes_per_s_;     // BW * decode_attention_bandwidth_fraction (fill 1)
  double attention_flops_per_s_;  // peak * prefill_attention_flops_fraction
  double bytes_per_s_;            // BW * bandwidth_fraction
  double sms_;
};

RooflineCostModel::RooflineCostModel(ModelSpec model, HardwareSpec hw, RooflineOptions opt,
                                     const AttentionMethods& attention)
    : m_(std::move(model)), hw_(std::move(hw)), opt_(opt) {
  flat_ = opt_.model == RooflineModel::kFlat;
  flops_per_s_ = hw_.bf16_tflops * 1e12 * opt_.compute_efficiency;
  bytes_per_s_ = hw_.mem_bandwidth_gbps * 1e9 * opt_.memory_efficiency;
  const HeadShape shape{m_.heads / opt_.tp, std::max<std::int64_t>(1, m_.kv_heads / opt_.tp), m_.head_dim};
  dense_eager_ = std::make_unique<DenseKernels>(m_, hw_, opt_, flat_, kernel_floor_us(false));
  dense_graph_ = std::make_unique<DenseKernels>(m_, hw_, opt_, flat_, kernel_floor_us(true));
  dense_methods_ = attention.all_dense();
  eager_ = make_attention_pricers(attention, AttentionPricingContext{dense_eager_.get(), nullptr, shape, m_.layers, opt_.tp});
  graph_ = make_attention_pricers(attention, AttentionPricingContext{dense_graph_.get(), nullptr, shape, m_.layers, opt_.tp});
}

double RooflineCostModel::kernel_floor_us(bool graph) const {
  return graph ? hw_.min_kernel_us : std::max(hw_.min_kernel_us, hw_.kernel_launch_us);
}

double RooflineCostModel::gemm_kernel_us(double m, double n, double k) const {
  const double bytes = static_cast<double>(m_.weight_bytes) * (m * k + k * n + m * n);
  const double memory = bytes / (hw_.mem_bandwidth_gbps * 1e9 * hw_.bandwidth_fraction);
  const double compute = roofline_gemm_compute_seconds(m, n, k, hw_.gemm_tile_m, hw_.gemm_tile_n, hw_.sms,
                                              hw_.bf16_tflops * 1e12 * hw_.gemm_flops_fraction);
  return std::max(memory, compute) * 1e6;
}

double RooflineCostModel::elementwise_kernel_us(double bytes) const {
  return bytes / (hw_.mem_bandwidth_gbps * 1e9 * hw_.bandwidth_fraction) * 1e6;
}

PartTimes RooflineCostModel::hardware_parts(const BatchShape& batch) const {
  PartTimes p{};
  const bool graph = graph_replay(batch);
  const double floor = kernel_floor_us(graph);
  const auto layers = static_cast<double>(m_.layers);
  for (const Operation& op : operation_list(m_, opt_.tp, batch)) {
    double us = 0;
    switch (op.kind) {
      case OpKind::kGemm: us = std::max(gemm_kernel_us(op.m, op.n, op.k), floor); break;
      case OpKind::kElementwise: us = std::max(elementwise_kernel_us(op.bytes), floor); break;
      case OpKind::kAllreduce:
        us = op.launches * std::max(op.bytes / op.launches / (hw_.tp_allreduce_gbps * 1e9) * 1e6, floor);
        break;
      case OpKind::kAttention: continue;  // priced by the attention method's pricer below
    }
    p[static_cast<std::size_t>(op.part)] += (op.per_layer ? layers : 1.0) * us;
  }
  attention_parts(batch, p);
  if (graph) p[static_cast<std::size_t>(Part::kLaunch)] = hw_.kernel_launch_us;  // one graph launch
  p[static_cast<std::size_t>(Part::kOverhead)] = opt_.iteration_overhead_us;
  return p;
}

void RooflineCostModel::attention_parts(const BatchShape& batch, PartTimes& p) const {
  const AttentionPricers& a = pricers(batch);
  p[static_cast<std::size_t>(Part::kAttentionPrefill)] = a.prefill->us(batch);
  p[static_cast<std::size_t>(Part::kAttentionDecode)] = a.decode->us(batch);
  if (a.kv) p[static_cast<std::size_t>(Part::kAttentionKv)] = a.kv->us(batch);
}

// The sum of every part in Part order, split where the parts start to vary between
// batches of one size (attention): time_of() is the two halves, one after the other.
// The second half leaves out the additions of a zero part: adding +0.0 to the
// running sum (a positive number, or +0.0) leaves it as it is, so the bits are the
// same, and the sum's chain of dependent additions (on an iteration's critical
// path) is shorter.
namespace {
constexpr std::size_t kFirstVarying = static_cast<std::size_t>(Part::kAttentionPrefill);
constexpr std::size_t kFirstTail = static_cast<std::size_t>(Part::kAttentionKv) + 1;  // the parts after attention

// us + p[from] + ... + p[kPartCount - 1], in Part order, zero parts left out.
double add_parts(double us, const PartTimes& p, std::size_t from) {
  for (std::size_t i = from; i < kPartCount; ++i)
    if (p[i] != 0) us += p[i];
  return us;
}

Time iteration_time_of_us(double us) { return std::max<Time>(1, seconds_to_time(us * 1e-6)); }

// iteration_time_of_us(exact) from `approx`, when that is sure to give the same
// answer; nullopt otherwise. `approx` is (stem + attention) + tail, the tail summed
// ahead (row_tail); `exact` adds the same positive parts to stem + attention one
// by one. Each is within k·2^-53 (relative) of the true sum for k <= 12 tail parts,
// so they differ by less than 2^-48 relative, and by less than 2^-47 once both are
// scaled to ns by the same two multiplications. Rounding half away from zero
// changes its answer only at a half (x.5; at an integer both sides round alike),
// so when approx's ns lies farther than 2^-40 relative from one (256 times the
// bound), the exact sum's ns rounds to the same integer. (Near one: about one
// iteration in 10^5; the caller then sums exactly.)
std::optional<Time> time_if_clear(double approx) {
  const double ns = approx * 1e-6 * 1e9;  // seconds_to_time(us * 1e-6)'s arithmetic
  if (!(ns > 0 && ns < 0x1p52)) return std::nullopt;
  const auto i = static_cast<std::int64_t>(ns);  // ns > 0: truncation is floor
  const double f = ns - static_cast<double>(i);  // exact
  if (std::fabs(f - 0.5) <= ns * 0x1p-40) return std::nullopt;
  return std::max<Time>(1, f > 0.5 ? i + 1 : i);
}
}  // namespace

std::optional<Time> roofline_time_if_clear_for_test(double approx_us) { return time_if_clear(approx_us); }

Time RooflineCostModel::time_of(const PartTimes& p) const { return time_of_stem(p, row_stem(p)); }

double RooflineCostModel::row_stem(const PartTimes& p) const {
  double us = 0;
  for (std::size_t i = 0; i < kFirstVarying; ++i) us += p[i];
  return us;
}

Time RooflineCostModel::time_of_stem(const PartTimes& p, double stem) const {
  return iteration_time_of_us(add_parts(stem, p, kFirstVarying));
}

double RooflineCostModel::row_tail(const PartTimes& p) const {
  double tail = 0;
  for (std::size_t i = kFirstTail; i < kPartCount; ++i) tail += p[i];
  return tail;
}

double RooflineCostModel::dense_decode_from_sums(const BatchShape& b) const {
  // DenseDecode::us's arithmetic, term for term, on the kernels pricers(b) holds
  // (b has no prefills: the graph's with cuda_graph_decode).
  const auto& k = static_cast<const DenseKernels&>(opt_.cuda_graph_decode ? *dense_graph_ : *dense_eager_);
  return static_cast<double>(m_.layers) * k.decode_us(decode_work_from_sums(b));
}

// time_of_stem(row with the batch's attention parts, stem), without writing them
// into a copy of the row (zero parts left out, as there). With the default
// methods and the engine's decode sums, the attention is priced directly (the
// prefill pricer gives 0 without prefills, there is no KV pricer); then, unless
// the answer is near a rounding boundary, the tail is added as one sum.
Time RooflineCostModel::decode_time(const BatchShape& b, const PartTimes& row, double stem, double tail) const {
  double us = stem;
  if (dense_methods_ && b.decode_sums && !b.decode_contexts.empty()) {
    if (const double x = dense_decode_from_sums(b); x != 0) us += x;
  } else {
    const AttentionPricers& a = pricers(b);
    if (const double x = a.prefill->us(b); x != 0) us += x;
    if (const double x = a.decode->us(b); x != 0) us += x;
    if (a.kv)
      if (const double x = a.kv->us(b); x != 0) us += x;
  }
  if (const std::optional<Time> t = time_if_clear(us + tail)) return *t;
  return iteration_time_of_us(add_parts(us, row, kFirstTail));
}

// ---- flat model (before the hardware model; unchanged arithmetic) ----

double RooflineCostModel::gemm_seconds(double m, double n, double k) const {
  // C[m,n] = A[m,k] · B[k,n], bf16 in/out: read A and B, write C.
  double flops = 2.0 * m * n * k;
  double bytes = static_cast<double>(m_.weight_bytes) * (m * k + k * n + m * n);
  return std::max(flops / flops_per_s_, bytes / bytes_per_s_);
}

double RooflineCostModel::linear_seconds_per_layer(double tokens) const {
  const double tp = opt_.tp;
  const double h = static_cast<double>(m_.hidden);
  const double qkv = static_cast<double>((m_.heads + 2 * m_.kv_heads) * m_.head_dim) / tp;
  const double o_in = static_cast<double>(m_.heads * m_.head_dim) / tp;
  const double ffn = static_cast<double>(m_.intermediate) / tp;
  double t = gemm_seconds(tokens, qkv, h)        // QKV projection
             + gemm_seconds(tokens, h, o_in)     // output projection
             + gemm_seconds(tokens, 2 * ffn, h)  // gate + up
             + gemm_seconds(tokens, h, ffn);     // down
  if (opt_.tp > 1) {
    // Ring all-reduce of the [tokens, hidden] activations after attention and after the MLP.
    double bytes = 2.0 * (tp - 1) / tp * tokens * h * m_.weight_bytes;
    t += 2 * bytes / (hw_.tp_allreduce_gbps * 1e9);
  }
  return t;
}

static double flat_logits(const BatchShape& batch) { return logit_rows(batch); }

PartTimes RooflineCostModel::flat_parts(const BatchShape& batch) const {
  // The flat model's sum, split only coarsely: linear layers (with the
  // all-reduce) under "other", attention by phase, launches, LM head, overhead.
  PartTimes p{};
  const double tokens = static_cast<double>(batch.total_tokens());
  const auto layers = static_cast<double>(m_.layers);
  p[static_cast<std::size_t>(Part::kOther)] = layers * linear_seconds_per_layer(tokens) * 1e6;
  p[static_cast<std::size_t>(Part::kLaunch)] = layers * opt_.kernels_per_layer * hw_.kernel_launch_us;
  p[static_cast<std::size_t>(Part::kAttentionPrefill)] = eager_.prefill->us(batch);
  p[static_cast<std::size_t>(Part::kAttentionDecode)] = eager_.decode->us(batch);
  const double logits = flat_logits(batch);
  if (logits > 0)
    p[static_cast<std::size_t>(Part::kLmHead)] =
        gemm_seconds(logits, static_cast<double>(m_.vocab) / opt_.tp, static_cast<double>(m_.hidden)) * 1e6;
  p[static_cast<std::size_t>(Part::kOverhead)] = opt_.iteration_overhead_us;
  return p;
}

PartTimes RooflineCostModel::parts(const BatchShape& batch) const {
  if (batch.empty()) return PartTimes{};
  return flat_ ? flat_parts(batch) : hardware_parts(batch);
}

Time RooflineCostModel::iteration_time(const BatchShape& batch) const {
  if (batch.empty()) return 0;
  if (flat_) {  // the old expression, term for term (pinned numbers stay bit-identical)
    const double tokens = static_cast<double>(batch.total_tokens());
    double per_layer = linear_seconds_per_layer(tokens) + opt_.kernels_per_layer * hw_.kernel_launch_us * 1e-6;
    const double attention_us = eager_.prefill->us(batch) + eager_.decode->us(batch);
    const double logits = flat_logits(batch);
    double lm_head = logits > 0 ? gemm_seconds(logits, static_cast<double>(m_.vocab) / opt_.tp,
                                               static_cast<double>(m_.hidden))
                                : 0;
    double seconds = static_cast<double>(m_.layers) * per_layer + attention_us * 1e-6 + lm_head +
                     opt_.iteration_overhead_us * 1e-6;
    return std::max<Time>(1, seconds_to_time(seconds));
  }
  return time_of(hardware_parts(batch));
}

std::string RooflineCostModel::identity() const {
  if (flat_)
    return fmt::format("roofline (uncalibrated; flat): {} on {} tp={} compute_eff={} memory_eff={}", m_.name,
                       hw_.name, opt_.tp, opt_.compute_efficiency, opt_.memory_efficiency);
  return fmt::format("roofline (uncalibrated): {} on {} tp={} sms={} bw_frac={} gemm_frac={} prefill_attn_frac={} "
                     "decode_attn_bw_frac={} tile={}x{} min_kernel={}us launch={}us cuda_graph_decode={}",
                     m_.name, hw_.name, opt_.tp, hw_.sms, hw_.bandwidth_fraction, hw_.gemm_flops_fraction,
                     hw_.prefill_attention_flops_fraction, hw_.decode_attention_bandwidth_fraction, hw_.gemm_tile_m,
                     hw_.gemm_tile_n, hw_.min_kernel_us, hw_.kernel_launch_us, opt_.cuda_graph_decode);
}

}  // namespace servesim
