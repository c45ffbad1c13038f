// Synthetic profile generation; see synthetic_profile.h. The grids mirror the
// bench drivers (kernels/{decode,prefill,gemm,sparse}/*_family.cu, full and
// --quick modes: every head shape — Llama-3-8B, Llama-3-70B at TP 1/2/4/8,
// Llama-2-7B's MHA 32/32 — and every GEMM shape of the shipped models at TP
// 1/2/4/8) so fitting and validation see the shapes a GPU run gives. Not
// mirrored: the prefill_hopper family (sm_90a only; its speed is not modelled
// here) and Quest's fused / tc variants (quest_select, quest_decode tc,
// quest_e2e fused*), which the cost model does not fit.
#include "costmodel/synthetic_profile.h"

#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "costmodel/attention_method.h"
#include "costmodel/andpro_fits.h"
#include "costmodel/gemm_shapes.h"
#include "costmodel/kernel_features.h"
#include "costmodel/minference_fits.h"
#include "costmodel/quest_fits.h"
#include "sim/core/rng.h"
#include "sim/core/text_split.h"

namespace servesim {
namespace {

struct Row {
  std::string kernel, variant;
  std::int64_t batch = -1, ctx = -1, q_len = -1, prefix = -1, heads = -1, kv_heads = -1, head_dim = -1,
               page_size = -1, budget = -1, m = -1, n = -1, k = -1;
  std::string params;
  double us = 0, bytes = 0, flops = 0;
};

class Writer {
 public:
  Writer(const SyntheticOptions& o) : o_(o), rng_(Rng::stream(o.seed, 0x5EED)) {}
  // Applies noise (unless `exact_us` says the time already carries it) and writes.
  void add(Row r, bool noisy = true) {
    if (noisy) r.us *= noise();
    out_ += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.0f},{:.0f},"
                        "{:.2f},{:.3f}\n",
                        r.kernel, r.variant, optional_cell(r.batch), optional_cell(r.ctx), optional_cell(r.q_len), optional_cell(r.prefix), optional_cell(r.heads),
                        optional_cell(r.kv_heads), optional_cell(r.head_dim), optional_cell(r.page_size), optional_cell(r.budget), optional_cell(r.m), optional_cell(r.n),
                        optional_cell(r.k), r.params, 20, r.us, r.us * 0.99, r.us * 1.01, r.us * 0.985, r.us * 1.02, r.bytes,
                        r.flops, r.bytes / (r.us * 1e3), r.flops / (r.us * 1e6));
  }
  double noise() { return o_.noise > 0 ? std::exp(o_.noise * rng_.normal()) : 1.0; }
  std::string& text() { return out_; }

 private:
  const SyntheticOptions& o_;
  Rng rng_;
  std::string out_;
};

struct Model {
  const char* name;
  HeadShape h;
};
// The bench's head shapes (kernels/{decode,prefill}/*_family.cu, kernels/sparse/quest_family.cu):
// one GPU's heads of each shipped model at the TP degrees the grid covers.
const Model kL8b{"llama3-8b", {32, 8, 128}}, kL70b{"llama3-70b", {64, 8, 128}}, kL70bTp8{"llama3-70b-tp8", {8, 1, 128}},
    kL70bTp4{"llama3-70b-tp4", {16, 2, 128}}, kL70bTp2{"llama3-70b-tp2", {32, 4, 128}},
    kL2_7b{"llama2-7b", {32, 32, 128}};  // multi-head attention

Row attention_row(const char* kernel, const char* variant, const HeadShape& h) {
  Row r;
  r.kernel = kernel;
  r.variant = variant;
  r.heads = h.heads;
  r.kv_heads = h.kv_heads;
  r.head_dim = h.head_dim;
  r.page_size = 16;
  return r;
}

double decode_us(const SyntheticTruth& t, const HeadShape& h, const DecodeWork& w) {
  const double bytes = w.kv_tokens * h.kv_token_bytes();
  return t.decode_t0_us + t.decode_per_seq_us * w.seqs + bytes / (t.decode_bw_gbps * 1e3) +
         bytes / w.seqs / (t.decode_seq_bw_gbps * 1e3);
}

double prefill_us(const SyntheticTruth& t, const HeadShape& h, const PrefillWork& w) {
  const auto f = prefill_features(h, w);
  return t.prefill_t0_us + f[1] / (t.prefill_tflops * 1e6) + f[2] / (t.prefill_row_tflops * 1e6) +
         f[3] / (t.prefill_bw_gbps * 1e3);
}

void decode_rows(Writer& out, const SyntheticTruth& t, const Model& m, const std::vector<std::int64_t>& lens,
                 bool ragged) {
  DecodeWork w{static_cast<double>(lens.size()), 0};
  std::int64_t lo = lens[0], hi = lens[0], sum = 0;
  for (auto l : lens) sum += l, lo = std::min(lo, l), hi = std::max(hi, l);
  w.kv_tokens = static_cast<double>(sum);
  Row r = attention_row("decode", "splitkv", m.h);
  r.batch = static_cast<std::int64_t>(lens.size());
  r.ctx = (sum + r.batch / 2) / r.batch;
  r.q_len = 1;
  r.params = fmt::format("model={};ragged={};ctx_min={};ctx_max={};ctx_sum={};split_tokens=0;work_items=0", m.name,
                         ragged ? 1 : 0, lo, hi, sum);
  r.bytes = w.kv_tokens * m.h.kv_token_bytes();
  r.flops = 4.0 * static_cast<double>(m.h.head_dim * m.h.heads) * w.kv_tokens;
  r.us = decode_us(t, m.h, w);
  out.add(r);
}

void prefill_rows(Writer& out, const SyntheticTruth& t, const Model& m, const std::vector<std::int64_t>& q,
                  const std::vector<std::int64_t>& prefix, bool ragged, const char* variant = "fa2") {
  PrefillWork w;
  for (std::size_t i = 0; i < q.size(); ++i) w.add(static_cast<double>(q[i]), static_cast<double>(prefix[i]));
  Row r = attention_row("prefill", variant, m.h);
  r.batch = static_cast<std::int64_t>(q.size());
  const auto rows = static_cast<std::int64_t>(w.rows), kv = static_cast<std::int64_t>(w.kv_tokens);
  r.ctx = (kv + r.batch / 2) / r.batch;
  r.q_len = (rows + r.batch / 2) / r.batch;
  r.prefix = r.ctx - r.q_len;
  r.params = fmt::format("model={};ragged={};q_sum={};ctx_sum={};rows_per_tile=64;tiles=0", m.name, ragged ? 1 : 0,
                         rows, kv);
  r.flops = prefill_features(m.h, w)[1];
  r.bytes = w.kv_tokens * m.h.kv_token_bytes();
  // Forced tiles and the Q-in-registers diagnostic variant: a bit slower in this model.
  r.us = prefill_us(t, m.h, w) * (variant == std::string("fa2") ? 1.0 : 1.07);
  out.add(r);
}

void decode_family(Writer& out, const SyntheticTruth& t, bool quick, Rng& g) {
  constexpr std::int64_t max_tokens = std::int64_t{1} << 21;  // B * ctx bound, as the bench's
  auto grid = [&](const Model& m, std::vector<std::int64_t> batches, std::vector<std::int64_t> ctxs,
                  std::int64_t cap) {
    for (auto c : ctxs)
      for (auto b : batches)
        if (b * c <= cap) decode_rows(out, t, m, std::vector<std::int64_t>(b, c), false);
  };
  auto ragged = [&](std::int64_t b, double lo, double hi) {
    std::vector<std::int64_t> lens(b);
    for (auto& l : lens) l = static_cast<std::int64_t>(std::exp(g.uniform(std::log(lo), std::log(hi))));
    decode_rows(out, t, kL8b, lens, true);
  };
  if (quick) {
    grid(kL8b, {1, 16}, {1024, 8192}, max_tokens);
    ragged(16, 256, 8192);
    return;
  }
  grid(kL8b, {1, 2, 4, 8, 16, 32, 64, 128, 256}, {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072},
       max_tokens);
  for (std::int64_t b : {8, 32, 128}) ragged(b, 256, 32768);
  ragged(256, 512, 4096);
  grid(kL70b, {1, 8, 32, 128}, {1024, 8192, 32768, 131072}, max_tokens);
  grid(kL70bTp8, {1, 8, 32, 128, 256}, {1024, 8192, 32768, 131072}, max_tokens);
  grid(kL70bTp4, {1, 8, 32, 128, 256}, {1024, 8192, 32768, 131072}, max_tokens);
  grid(kL70bTp2, {1, 8, 32, 128}, {1024, 8192, 32768, 131072}, max_tokens);
  // MHA: 4x the KV bytes per token of llama3-8b, so a quarter of the token bound.
  grid(kL2_7b, {1, 4, 16, 64, 256}, {512, 1024, 2048, 4096, 8192, 32768}, max_tokens / 4);
}

void prefill_family(Writer& out, const SyntheticTruth& t, bool quick, Rng& g) {
  auto point = [&](const Model& m, std::int64_t b, std::int64_t q, std::int64_t prefix, const char* v = "fa2") {
    prefill_rows(out, t, m, std::vector<std::int64_t>(b, q), std::vector<std::int64_t>(b, prefix), false, v);
  };
  auto varlen = [&](std::int64_t b, std::int64_t max_q, std::int64_t max_prefix) {
    std::vector<std::int64_t> q(b), p(b);
    for (std::int64_t i = 0; i < b; ++i) {
      q[i] = 128 + static_cast<std::int64_t>(g.below(static_cast<std::uint64_t>(max_q - 127)));
      p[i] = static_cast<std::int64_t>(g.below(static_cast<std::uint64_t>(max_prefix + 1)));
    }
    prefill_rows(out, t, kL8b, q, p, true);
  };
  if (quick) {
    for (std::int64_t len : {512, 2048}) point(kL8b, 1, len, 0);
    point(kL8b, 1, 512, 4096);
    varlen(4, 1024, 4096);
    return;
  }
  const std::vector<std::int64_t> prompts = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
  for (auto len : prompts) point(kL8b, 1, len, 0);
  for (std::int64_t chunk : {256, 512, 1024, 2048, 4096, 8192})
    for (std::int64_t prefix : {1024, 4096, 16384, 32768, 65536, 131072}) point(kL8b, 1, chunk, prefix);
  for (std::int64_t b : {4, 16})
    for (std::int64_t len : {512, 2048}) point(kL8b, b, len, 0);
  for (std::int64_t b : {4, 16}) varlen(b, 2048, 16384);
  for (std::int64_t len : {1024, 4096, 16384}) {
    point(kL70b, 1, len, 0);
    point(kL70bTp8, 1, len, 0);
    point(kL70bTp4, 1, len, 0);
    point(kL70bTp2, 1, len, 0);
  }
  for (const Model* m : {&kL70bTp4, &kL70bTp2}) point(*m, 1, 2048, 16384);  // a chunk over a cached prefix
  for (std::int64_t len : {512, 1024, 2048, 4096}) point(kL2_7b, 1, len, 0);  // llama-2-7b: 4K context
  point(kL2_7b, 1, 512, 2048);
  point(kL2_7b, 4, 1024, 0);
  for (auto len : prompts) {  // diagnostics: both tile widths forced, and Q in registers
    point(kL8b, 1, len, 0, "fa2_m64");
    point(kL8b, 1, len, 0, "fa2_m128");
    point(kL8b, 1, len, 0, "fa2_qreg");
  }
}

void gemm_family(Writer& out, const SyntheticTruth& t, bool quick) {
  std::vector<std::pair<const char*, LinearDims>> models = {{"llama3-8b", {4096, 32, 8, 128, 14336, 128256}}};
  std::vector<std::int64_t> tps = {1}, ms = {1, 64, 1024};
  if (!quick) {
    models.push_back({"llama3-70b", {8192, 64, 8, 128, 28672, 128256}});
    models.push_back({"llama2-7b", {4096, 32, 32, 128, 11008, 32000}});  // MHA, intermediate 11008, vocab 32000
    tps = {1, 2, 4, 8};
    ms = gemm_bench_tokens(16384);
  }
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, double> measured;  // one noise draw per shape
  for (const auto& [name, dims] : models)
    for (auto tp : tps)
      for (const GemmShape& s : gemm_shapes(dims, tp))
        for (auto m : ms) {
          const double md = static_cast<double>(m), nd = static_cast<double>(s.n), kd = static_cast<double>(s.k);
          const double bytes = 2.0 * (md * kd + nd * kd + md * nd);
          auto key = std::make_tuple(m, s.n, s.k);
          if (!measured.count(key)) {
            // Like a library heuristic: the tile shape whose whole waves finish first
            // (smaller tiles run at a lower share of the per-SM peak).
            double compute = std::numeric_limits<double>::infinity();
            for (const auto& [tm, tn, eff] : {std::tuple{64.0, 128.0, 0.7}, {128.0, 128.0, 0.85}, {128.0, 256.0, 1.0},
                                              {256.0, 128.0, 1.0}}) {
              const double waves = std::ceil(std::ceil(md / tm) * std::ceil(nd / tn) / 132);
              compute = std::min(compute, waves * 2.0 * tm * tn * kd / (eff * t.gemm_tflops * 1e6 / 132));
            }
            measured[key] = (t.gemm_t0_us + std::max(bytes / (t.gemm_bw_gbps * 1e3), compute)) * out.noise();
          }
          Row r;
          r.kernel = "gemm";
          r.variant = "cublaslt";
          r.m = m, r.n = s.n, r.k = s.k;
          r.params = fmt::format("model={};layer={};tp={}{}", name, s.layer, tp,
                                 is_gemm_probe_token(m) ? ";probe=1" : "");
          r.bytes = bytes;
          r.flops = 2.0 * md * nd * kd;
          r.us = measured[key];
          out.add(r, false);
        }
}

void quest_shape(Writer& out, const SyntheticTruth& t, const HeadShape& h, const std::vector<std::int64_t>& ctxs,
                 const std::vector<std::int64_t>& budgets, const std::vector<std::int64_t>& batches,
                 std::int64_t max_tokens) {
  for (auto b : batches)
    for (auto ctx : ctxs) {
      if (b * ctx > max_tokens) continue;
      auto row = [&](const char* kernel, const char* variant, std::int64_t budget) {
        Row r = attention_row(kernel, variant, h);
        r.batch = b, r.ctx = ctx, r.q_len = 1, r.budget = budget;
        return r;
      };
      QuestWork w0;
      for (std::int64_t i = 0; i < b; ++i) w0.add(static_cast<double>(ctx), 0);
      Row meta = row("quest_metadata", "decode_step", -1);
      meta.us = t.quest_meta_t0_us + t.quest_meta_per_seq_us * w0.seqs;
      out.add(meta);
      Row dense = row("quest_dense_decode", "splitkv", -1);
      dense.us = decode_us(t, h, DecodeWork{static_cast<double>(b), static_cast<double>(b * ctx)});
      out.add(dense);
      for (bool per_q : {false, true}) {
        const char* variant = per_q ? "qhead" : "kvhead";
        const double rows_factor = per_q ? static_cast<double>(h.heads / h.kv_heads) : 1.0;  // per query head: G x work
        Row est = row("quest_estimate", variant, -1);
        est.us = t.quest_est_t0_us + quest_estimate_features(h, w0)[1] / (t.quest_est_bw_gbps * 1e3);
        out.add(est);
        for (auto budget : budgets) {
          if (per_q && budget != 2048) continue;
          QuestWork w;
          for (std::int64_t i = 0; i < b; ++i) w.add(static_cast<double>(ctx), budget);
          const auto tk = quest_topk_features(h, w);
          const auto dc = quest_decode_features(h, w);
          const double topk_us = t.quest_topk_t0_us + rows_factor * (t.quest_topk_per_score_us * tk[1] +
                                                                      t.quest_topk_per_selected_us * tk[2]);
          const double dec_us = t.quest_dec_t0_us + t.quest_dec_per_seq_us * w.seqs +
                                rows_factor * dc[2] / (t.quest_dec_bw_gbps * 1e3);
          Row topk = row("quest_topk", variant, budget);
          topk.us = topk_us;
          out.add(topk);
          Row dec = row("quest_decode", variant, budget);
          dec.params = "splits=1";
          dec.us = dec_us;
          out.add(dec);
          Row e2e = row("quest_e2e", variant, budget);
          e2e.params = "splits=1";
          e2e.us = est.us + topk_us + dec_us;
          out.add(e2e);
        }
      }
    }
}

void quest_family(Writer& out, const SyntheticTruth& t, bool quick) {
  if (quick) {
    quest_shape(out, t, kL8b.h, {4096, 32768}, {2048}, {1}, 65536);
    return;
  }
  quest_shape(out, t, kL8b.h, {4096, 8192, 16384, 32768, 65536, 131072}, {256, 512, 1024, 2048, 4096}, {1, 8, 32},
              std::int64_t{1} << 20);
  // The other per-GPU head shapes of the shipped models, around the 32K / 2048 anchor.
  const std::vector<std::int64_t> ctxs = {8192, 32768, 131072}, budgets = {1024, 2048, 4096}, batches = {1, 8};
  quest_shape(out, t, kL70bTp4.h, ctxs, budgets, batches, std::int64_t{1} << 20);
  quest_shape(out, t, kL70bTp2.h, ctxs, budgets, batches, std::int64_t{1} << 20);
  quest_shape(out, t, kL2_7b.h, {4096, 8192, 32768}, budgets, batches, std::int64_t{1} << 18);
}

struct Pattern {
  const char* name;
  double kv, ks, bs;  // vertical lines, slash lines, blocks (the search space's parameters)
  bool is_static;
};
const std::vector<Pattern> kPatterns = {{"ashape_1024_4096", 0, 0, 0, true}, {"vs_30_2048", 30, 2048, 0, false},
                                        {"vs_100_1800", 100, 1800, 0, false}, {"vs_500_1500", 500, 1500, 0, false},
                                        {"vs_3000_200", 3000, 200, 0, false}, {"bs_100", 0, 0, 100, false}};

void minference_family(Writer& out, const SyntheticTruth& t, bool quick) {
  const HeadShape h = kL8b.h;
  const auto heads = static_cast<double>(h.heads);
  std::vector<std::int64_t> lengths = quick ? std::vector<std::int64_t>{16384}
                                            : std::vector<std::int64_t>{16384, 32768, 65536, 131072, 262144, 1 << 20};
  for (auto n : lengths) {
    const bool million = n > 262144;
    const auto nd = static_cast<double>(n);
    for (const char* data : {"structured", "uniform"}) {
      const bool structured = std::string(data) == "structured";
      if (!structured && (n > 65536 || quick)) continue;
      auto row = [&](const std::string& kernel, const char* variant) {
        Row r = attention_row(kernel.c_str(), variant, h);
        r.batch = 1, r.ctx = n, r.q_len = n, r.prefix = 0;
        return r;
      };
      if (structured && !million) {
        PrefillWork w;
        w.add(nd, 0);
        Row dense = row("minf_dense_prefill", "causal");
        dense.us = prefill_us(t, h, w);
        dense.flops = prefill_features(h, w)[1];
        out.add(dense);
      }
      for (const Pattern& p : kPatterns) {
        if (!structured && p.ks == 0) continue;
        if (million && std::string(p.name) != "vs_30_2048") continue;
        // Uniform data scatters the vertical-slash lines: about three times the area.
        const double width = synthetic_minf_band_width(p.name) * (structured ? 1.0 : 3.0);
        const double tiles = std::round(minf_band_tiles(nd, width) * heads);
        const double nb = std::ceil(nd / 64);
        const std::string params = fmt::format("pattern={};data={};tiles={:.0f};density={:.6f}", p.name, data, tiles,
                                               tiles / (heads * nb * (nb + 1) / 2));
        const double n2 = p.bs > 0 ? 1.0 : 0.0;  // only block-sparse estimates and indexes over n² block pairs
        const double est = t.minf_est_t0_us + t.minf_est_per_nh_us * nd * heads + n2 * t.minf_est_per_n2h_us * nd * nd * heads;
        const double idx = t.minf_idx_t0_us + t.minf_idx_per_nh_us * nd * heads + n2 * t.minf_idx_per_n2h_us * nd * nd * heads;
        const double att = t.minf_att_t0_us + t.minf_att_per_nh_us * nd * heads + t.minf_att_per_tile_us * tiles;
        const double stage_us[4] = {est, idx, att, (p.is_static ? 0.0 : est + idx) + att};
        const char* stages[4] = {"estimate", "index", "attention", "e2e"};
        for (int si = 0; si < 4; ++si) {
          if (p.is_static && si < 2) continue;
          Row r = row(std::string("minf_") + stages[si], p.name);
          r.params = params;
          r.us = stage_us[si];
          if (si >= 2) r.flops = 4.0 * 128 * 64 * 64 * tiles;
          out.add(r);
        }
      }
    }
  }
}

void andpro_family(Writer& out, const SyntheticTruth& t, bool quick) {
  const HeadShape h = kL8b.h;
  const std::vector<std::int64_t> ctxs = quick ? std::vector<std::int64_t>{8192}
                                               : std::vector<std::int64_t>{4096, 8192, 16384, 32768, 65536, 131072};
  const std::vector<std::int64_t> windows = quick ? std::vector<std::int64_t>{32} : std::vector<std::int64_t>{16, 32, 64};
  for (auto n : ctxs) {
    const auto nd = static_cast<double>(n);
    PrefillWork pw;
    pw.add(nd, 0);
    Row dense = attention_row("andpro_dense_prefill", "causal", h);
    dense.batch = 1, dense.ctx = n, dense.q_len = n, dense.prefix = 0;
    dense.us = prefill_us(t, h, pw);
    dense.flops = prefill_features(h, pw)[1];
    out.add(dense);
    for (auto w : windows) {
      AndproParams a;
      a.window = w;
      a.layer_topk = false;
      AndproParams layer = a;
      layer.layer_topk = true;
      const double cand = andpro_scan_features(h, nd, static_cast<double>(w))[1];
      const double kept = andpro_compact_features(h, static_cast<double>(a.kept_tokens(n)))[0];
      const double kept_ragged = andpro_compact_features(h, static_cast<double>(layer.kept_tokens(n)))[0];
      const double score = t.andpro_score_t0_us + t.andpro_score_per_cand_us * cand;
      const double select = t.andpro_select_t0_us + t.andpro_select_per_cand_us * cand;
      const double compact = t.andpro_compact_per_kept_us * kept;
      const std::pair<const char*, double> stages[6] = {
          {"andpro_score", score}, {"andpro_select", select}, {"andpro_compact", compact},
          {"andpro_e2e", score + select + compact},
          {"andpro_select_layer", t.andpro_select_layer_t0_us + t.andpro_select_layer_per_cand_us * cand},
          {"andpro_compact_ragged", t.andpro_compact_ragged_per_kept_us * kept_ragged}};
      for (const auto& [kernel, us] : stages) {
        Row r = attention_row(kernel, "", h);
        r.variant = fmt::format("w{}", w);
        r.batch = 1, r.ctx = n, r.budget = a.budget;
        r.params = fmt::format("window={};block={}", w, a.block);
        r.us = us;
        out.add(r);
      }
    }
  }
}

void ceiling_family(Writer& out, const SyntheticTruth& t) {
  const double buffer = 1024.0 * 1024 * 1024;
  for (const auto& [variant, factor] : {std::pair{"copy_memcpy", 2.0}, {"copy_kernel", 2.0}, {"read_kernel", 1.0}}) {
    Row r;
    r.kernel = "ceiling";
    r.variant = variant;
    r.params = fmt::format("buffer_bytes={:.0f}", buffer);
    r.bytes = factor * buffer;
    r.us = r.bytes / (t.copy_gbps * 1e3);
    out.add(r);
  }
}

}  // namespace

double synthetic_minf_band_width(const std::string& pattern) {
  for (const Pattern& p : kPatterns) {
    if (pattern != p.name) continue;
    if (p.is_static) return (1024 + 4096) / 64.0 + 1;  // sink + window tiles, + the diagonal tile
    if (p.bs > 0) return p.bs;
    return std::ceil(p.kv / 64) + std::ceil(p.ks / 32) + 2;  // gathered columns + slash ranges + forced diagonals
  }
  return 0;
}

std::string synthetic_profile_csv(const SyntheticOptions& o) {
  Writer out(o);
  std::string& s = out.text();
  s += "# format=servesim-kernel-profile\n# schema_version=1\n# synthetic=true\n";
  s += "# gpu=SYNTHETIC\n# note=generated from known formulas by servesim calibrate synth; not a measurement\n";
  s += "# gpu_sms=132\n# git_commit=none\n# date_utc=none\n";
  s += fmt::format("# mode={}\n# families=ceilings,gemm,decode,prefill,quest,minference,andpro\n",
                   o.quick ? "quick" : "full");
  s += fmt::format("# command=servesim calibrate synth --seed {} --noise {}{}\n", o.seed, o.noise,
                   o.quick ? " --quick" : "");
  s += "kernel,variant,batch,ctx,q_len,prefix,heads,kv_heads,head_dim,page_size,budget,m,n,k,params,reps,median_us,"
       "p10_us,p90_us,min_us,max_us,bytes,flops,gbps,tflops\n";
  Rng g = Rng::stream(o.seed, 0x6A1D);
  ceiling_family(out, o.truth);
  gemm_family(out, o.truth, o.quick);
  decode_family(out, o.truth, o.quick, g);
  prefill_family(out, o.truth, o.quick, g);
  quest_family(out, o.truth, o.quick);
  minference_family(out, o.truth, o.quick);
  andpro_family(out, o.truth, o.quick);
  return s;
}

}  // namespace servesim
