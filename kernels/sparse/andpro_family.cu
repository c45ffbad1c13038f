// AnDPro family of `servesim-kernels` (check + bench); kernels in andpro_kernels.cuh,
// reference in andpro_ref.h.
//
// check: one prompt in a NaN-poisoned paged cache; the window rows' outputs and LSE come
// from the CPU dense attention (what the prefill hands over). Token scores are compared
// with the CPU scores; block merging with the CPU merge of the GPU token scores; the kept
// blocks must equal the CPU top-k of the GPU block scores (exact); the compacted cache
// must equal the CPU compaction bit for bit.
// bench: context x window (spec grid), budget 2048, block 16: scoring, selection (merge +
// top-k), compaction and the three together, plus our dense prefill of the same prompt
// length (andpro_dense_prefill) for the "scoring <= 5% of prefill" comparison; and the
// layer_topk allocation's kernels: andpro_select_layer (merge + one layer-wide top-k) and
// andpro_compact_ragged (over the ragged lengths the real scores of the row select).
// check (layer_topk): the layer-wide kept blocks must equal the CPU layer top-k of the GPU
// block scores (head 0 raised so the lengths differ); the ragged compaction must equal
// the CPU one bit for bit, padding untouched.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/bench/device_info.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/common/attention_ref.h"
#include "kernels/common/cuda_util.cuh"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_device.cuh"
#include "kernels/prefill/prefill.cuh"
#include "kernels/sparse/andpro_kernels.cuh"
#include "kernels/sparse/andpro_ref.h"

namespace servesim::kernels::sparse {
namespace {

constexpr AttentionHeads kHeads{32, 8, 128};

struct AndproBuffers {
  DeviceBuffer<__nv_bfloat16> q_win, y_win, dst_k, dst_v;
  DeviceBuffer<float> lse_win, token_scores, block_scores;
  DeviceBuffer<int32_t> kept, dst_table;
};

AndproArgs make_args(const __nv_bfloat16* k, const __nv_bfloat16* v, const int32_t* table, int n,
                     const AndproParams& p, AndproBuffers& b) {
  AndproArgs a;
  a.k_cache = k;
  a.v_cache = v;
  a.page_table = table;
  a.num_q_heads = kHeads.num_q_heads;
  a.num_kv_heads = kHeads.num_kv_heads;
  a.head_dim = kHeads.head_dim;
  a.n = n;
  a.window = p.window;
  a.block = p.block;
  a.kept_blocks = static_cast<int>(andpro_kept_blocks(n, p));
  a.keep_first_block = p.keep_first_block;
  a.scale = kHeads.default_scale();
  const int G = kHeads.num_kv_heads, cand = n - p.window;
  const int kept_tokens = static_cast<int>(andpro_kept_tokens(n, p));
  b.token_scores.resize(size_t(G) * cand);
  b.block_scores.resize(std::max<size_t>(1, size_t(G) * (cand / p.block)));
  b.kept.resize(std::max<size_t>(1, size_t(G) * a.kept_blocks));
  b.dst_k.resize(size_t(pages_for_tokens(kept_tokens)) * G * kPageSize * kHeads.head_dim);
  b.dst_v.resize(b.dst_k.size());
  a.q_win = b.q_win.get();
  a.y_win = b.y_win.get();
  a.lse_win = b.lse_win.get();
  a.token_scores = b.token_scores.get();
  a.block_scores = b.block_scores.get();
  a.kept = b.kept.get();
  a.dst_page_table = b.dst_table.get();
  a.dst_k = b.dst_k.get();
  a.dst_v = b.dst_v.get();
  return a;
}

int check_andpro(const CheckOptions& opts) {
  CheckReport report("andpro", opts.verbose);
  struct Case { int n, window; bool keep_first; };
  std::vector<Case> cases = {{300, 16, true}, {1000, 32, false}};
  if (!opts.quick) cases.push_back({2100, 64, true});
  const int H = kHeads.num_q_heads, G = kHeads.num_kv_heads, D = kHeads.head_dim;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const auto [n, w, keep_first] = cases[ci];
    const AndproParams p{.window = w, .block = 16, .budget = 128, .keep_first_block = keep_first};
    const std::string shape = " n=" + std::to_string(n) + " w=" + std::to_string(w);
    const HostPagedKv host = make_random_paged_kv({n}, G, D, derive_seed(opts.seed, 800 + ci));
    const std::vector<float> kf = from_bf16_bits(host.k_bits), vf = from_bf16_bits(host.v_bits);
    const std::vector<float> k = host.gather_k(0), v = host.gather_v(0);
    const std::span<const int32_t> table(host.page_indices);
    // What the prefill hands over for the window rows: q, output (bf16) and LSE.
    const std::vector<float> q_win = random_uniform(size_t(w) * H * D, derive_seed(opts.seed, 810 + ci), -2.0f, 2.0f);
    std::vector<float> y(q_win.size()), lse(size_t(w) * H);
    dense_attention_ref({q_win.data(), k.data(), v.data(), w, n, H, G, D, kHeads.default_scale()}, causal_mask(n - w),
                        y.data(), lse.data());
    for (float& x : y) x = round_to_bf16(x);
    DevicePagedKv dev;
    dev.upload(host);
    AndproBuffers b;
    b.q_win = upload_bf16(to_bf16_bits(q_win));
    b.y_win = upload_bf16(to_bf16_bits(y));
    b.lse_win.upload(lse);
    const int kept_tokens = static_cast<int>(andpro_kept_tokens(n, p));
    std::vector<int32_t> dst_table(pages_for_tokens(kept_tokens));
    for (size_t i = 0; i < dst_table.size(); ++i) dst_table[i] = static_cast<int32_t>(dst_table.size() - 1 - i);
    b.dst_table.upload(dst_table);
    const AndproArgs a = make_args(dev.k.get(), dev.v.get(), dev.table.page_indices.get(), n, p, b);
    fill_nan_device(b.token_scores.get(), b.token_scores.size());
    fill_nan_device(b.block_scores.get(), b.block_scores.size());
    fill_nan_device(b.dst_k.get(), b.dst_k.size());
    fill_nan_device(b.dst_v.get(), b.dst_v.size());

    andpro_score(a, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> tok = b.token_scores.download();
    std::vector<float> tok_ref(tok.size());
    andpro_token_scores_ref(q_win.data(), y.data(), lse.data(), {kf.data(), vf.data(), G, D}, table, n, w, H,
                            kHeads.default_scale(), tok_ref.data());
    report.expect_close("score" + shape, tok, tok_ref, 1e-2);

    andpro_merge(a, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> blocks = andpro_merge_blocks_ref(tok, G, n, p);
    const int n_blocks = (n - w) / p.block;
    std::vector<float> blocks_gpu = b.block_scores.download();
    blocks_gpu.resize(blocks.size());
    report.expect_close("merge" + shape, blocks_gpu, blocks, 1e-5);

    andpro_select(a, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int32_t> kept = b.kept.download();
    kept.resize(size_t(G) * a.kept_blocks);
    const bool same = kept == andpro_select_blocks_ref(blocks_gpu, G, n, p);
    report.expect_true("select" + shape, same, same ? "kept blocks equal the CPU top-k" : "kept blocks differ");

    andpro_compact(a, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> dk = download_bf16_as_float(b.dst_k.get(), b.dst_k.size());
    const std::vector<float> dv = download_bf16_as_float(b.dst_v.get(), b.dst_v.size());
    std::vector<float> rk(dk.size(), NAN), rv(dv.size(), NAN);
    andpro_compact_ref({kf.data(), vf.data(), G, D}, table, kept, n, p, dst_table, rk.data(), rv.data());
    size_t diff = 0;
    for (int j = 0; j < kept_tokens; ++j) {
      for (int g = 0; g < G; ++g) {
        const int64_t off = kv_cache_offset(dst_table[j / kPageSize], g, j % kPageSize, 0, G, D);
        for (int d = 0; d < D; ++d) diff += (dk[off + d] != rk[off + d]) + (dv[off + d] != rv[off + d]);
      }
    }
    report.expect_true("compact" + shape, diff == 0, std::to_string(diff) + " values differ from the CPU compaction");

    // allocation: layer_topk. Head 0's scores are raised so the heads' lengths differ.
    for (int bi = 0; bi < n_blocks; ++bi) blocks_gpu[bi] += 1e3f;
    b.block_scores.upload(blocks_gpu);
    const int rpages = static_cast<int>(andpro_ragged_pages_bound(n, p));
    std::vector<int32_t> rtable(rpages);
    for (int i = 0; i < rpages; ++i) rtable[i] = rpages - 1 - i;
    AndproBuffers rb;
    rb.dst_table.upload(rtable);
    rb.dst_k.resize(size_t(rpages) * G * kPageSize * D);
    rb.dst_v.resize(rb.dst_k.size());
    fill_nan_device(rb.dst_k.get(), rb.dst_k.size());
    fill_nan_device(rb.dst_v.get(), rb.dst_v.size());
    AndproArgs l = a;
    l.dst_page_table = rb.dst_table.get();
    l.dst_k = rb.dst_k.get();
    l.dst_v = rb.dst_v.get();
    andpro_select_layer(l, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int32_t> kept_layer = b.kept.download();
    kept_layer.resize(size_t(G) * a.kept_blocks);
    const bool same_layer = kept_layer == andpro_select_layer_ref(blocks_gpu, G, n, p);
    report.expect_true("select_layer" + shape, same_layer,
                       same_layer ? "kept blocks equal the CPU layer top-k" : "kept blocks differ");
    andpro_compact_ragged(l, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> gk = download_bf16_as_float(rb.dst_k.get(), rb.dst_k.size());
    const std::vector<float> gv = download_bf16_as_float(rb.dst_v.get(), rb.dst_v.size());
    std::vector<float> ck(gk.size(), NAN), cv(gv.size(), NAN);
    andpro_compact_ragged_ref({kf.data(), vf.data(), G, D}, table, kept_layer, n, p, rtable, ck.data(), cv.data());
    size_t rdiff = 0;
    for (size_t i = 0; i < gk.size(); ++i) {
      rdiff += !(gk[i] == ck[i] || (std::isnan(gk[i]) && std::isnan(ck[i])));
      rdiff += !(gv[i] == cv[i] || (std::isnan(gv[i]) && std::isnan(cv[i])));
    }
    report.expect_true("compact_ragged" + shape, rdiff == 0,
                       std::to_string(rdiff) + " values differ from the CPU ragged compaction");
  }
  return report.failures();
}

void bench_andpro(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  const int H = kHeads.num_q_heads, G = kHeads.num_kv_heads, D = kHeads.head_dim, sms = current_device_sm_count();
  const std::vector<int> ctxs = opts.quick ? std::vector<int>{8192} : std::vector<int>{4096, 8192, 16384, 32768, 65536, 131072};
  const std::vector<int> windows = opts.quick ? std::vector<int>{32} : std::vector<int>{16, 32, 64};
  KvPagePool pool;
  pool.reserve(pages_for_tokens(ctxs.back()) + 16, G, D, opts.seed);
  for (int n : ctxs) {
    const DevicePageTable table = pool.draw_table({n}, derive_seed(opts.seed, n));
    double dense_us = 0;
    if (prefill_supports(kHeads) && bench_admit(opts, "andpro dense prefill n=" + std::to_string(n))) {  // dense prefill of the same prompt length
      DeviceBuffer<__nv_bfloat16> q(size_t(n) * H * D), o(q.size());
      fill_bf16_uniform_device(q.get(), q.size(), derive_seed(opts.seed, 9), -1.0f, 1.0f);
      DeviceBuffer<int32_t> q_indptr;
      q_indptr.upload({0, n});
      PrefillRunner runner(plan_prefill({0, n}, {n}, choose_prefill_rows_per_tile({0, n}, H, sms)), kHeads);
      const PrefillArgs args{q.get(), pool.k(), pool.v(), table.view(), q_indptr.get(), kHeads, 0.0f, o.get(), nullptr};
      ProfileRow row;
      row.kernel = "andpro_dense_prefill";
      row.variant = "causal";
      row.batch = 1;
      row.ctx = row.q_len = n;
      row.prefix = 0;
      row.heads = H;
      row.kv_heads = G;
      row.head_dim = D;
      row.page_size = kPageSize;
      fill_timing(row, timer.measure(opts, [&](cudaStream_t s) { runner.run(args, s); }));
      row.flops = prefill_flops({0, n}, {n}, H, D);
      out.write_row(row);
      dense_us = row.median_us;
    }
    for (int w : windows) {
      if (!bench_admit(opts, "andpro n=" + std::to_string(n) + " w=" + std::to_string(w))) continue;
      const AndproParams p{.window = w, .block = 16, .budget = 2048, .keep_first_block = true};
      AndproBuffers b;
      b.q_win.resize(size_t(w) * H * D);
      b.y_win.resize(b.q_win.size());
      fill_bf16_uniform_device(b.q_win.get(), b.q_win.size(), derive_seed(opts.seed, 10), -1.0f, 1.0f);
      fill_bf16_uniform_device(b.y_win.get(), b.y_win.size(), derive_seed(opts.seed, 11), -1.0f, 1.0f);
      b.lse_win.upload(std::vector<float>(size_t(w) * H, std::log(float(n))));  // values do not change the time
      const int kept_tokens = static_cast<int>(andpro_kept_tokens(n, p));
      std::vector<int32_t> dst(pages_for_tokens(kept_tokens));
      for (size_t i = 0; i < dst.size(); ++i) dst[i] = static_cast<int32_t>(i);
      b.dst_table.upload(dst);
      const AndproArgs a = make_args(pool.k(), pool.v(), table.page_indices.get(), n, p, b);
      const double cand = n - w, group = double(H) / G;
      struct Stage { const char* kernel; double bytes, flops; };
      const Stage stages[6] = {
          {"andpro_score", cand * G * D * 2 * 2, 4.0 * cand * G * group * w * D},
          {"andpro_select", cand * G * 4 * 2, 0},
          {"andpro_compact", double(kept_tokens) * G * D * 2 * 2 * 2, 0},
          {"andpro_e2e", cand * G * D * 2 * 2 + double(kept_tokens) * G * D * 8, 4.0 * cand * G * group * w * D},
          // allocation: layer_topk (after andpro_merge, whose time andpro_select includes).
          {"andpro_select_layer", cand * G * 4 * 2, 0},
          {"andpro_compact_ragged", double(kept_tokens) * G * D * 2 * 2 * 2, 0}};
      const int rpages = static_cast<int>(andpro_ragged_pages_bound(n, p));
      AndproBuffers rb;
      std::vector<int32_t> rdst(rpages);
      for (int i = 0; i < rpages; ++i) rdst[i] = i;
      rb.dst_table.upload(rdst);
      rb.dst_k.resize(size_t(rpages) * G * kPageSize * D);
      rb.dst_v.resize(rb.dst_k.size());
      rb.kept.resize(std::max<size_t>(1, size_t(G) * a.kept_blocks));  // flat ids, apart from the equal split's
      AndproArgs l = a;
      l.kept = rb.kept.get();
      l.dst_page_table = rb.dst_table.get();
      l.dst_k = rb.dst_k.get();
      l.dst_v = rb.dst_v.get();
      andpro_score(a, nullptr);  // real scores for the layer selection's ragged lengths
      andpro_merge(a, nullptr);
      andpro_select_layer(l, nullptr);
      SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
      double us[6] = {0, 0, 0, 0, 0, 0};
      for (int si = 0; si < 6; ++si) {
        ProfileRow row;
        row.kernel = stages[si].kernel;
        row.variant = "w" + std::to_string(w);
        row.batch = 1;
        row.ctx = n;
        row.heads = H;
        row.kv_heads = G;
        row.head_dim = D;
        row.page_size = kPageSize;
        row.budget = p.budget;
        row.params = "window=" + std::to_string(w) + ";block=" + std::to_string(p.block);
        fill_timing(row, timer.measure(opts, [&](cudaStream_t s) {
          if (si == 0 || si == 3) andpro_score(a, s);
          if (si == 1 || si == 3) {
            andpro_merge(a, s);
            andpro_select(a, s);
          }
          if (si == 2 || si == 3) andpro_compact(a, s);
          if (si == 4) {
            andpro_merge(l, s);
            andpro_select_layer(l, s);
          }
          if (si == 5) andpro_compact_ragged(l, s);
        }));
        row.bytes = stages[si].bytes;
        row.flops = stages[si].flops;
        out.write_row(row);
        us[si] = row.median_us;
      }
      std::printf("  andpro n=%d w=%d: score %.1f + select %.1f + compact %.1f = %.1f us; dense prefill %.1f us"
                  " (scoring %.2f%%); layer_topk: select %.1f, compact %.1f us\n", n, w, us[0], us[1], us[2], us[3],
                  dense_us, dense_us > 0 ? 100.0 * us[0] / dense_us : 0.0, us[4], us[5]);
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace servesim::kernels::sparse

SERVESIM_REGISTER_KERNEL_FAMILY(andpro, {.name = "andpro",
                                         .description = "AnDPro: projection scores over the observation window, block top-k (per head or layer-wide), KV compaction",
                                         .check = servesim::kernels::sparse::check_andpro,
                                         .bench = servesim::kernels::sparse::bench_andpro,
                                         .order = 120});
