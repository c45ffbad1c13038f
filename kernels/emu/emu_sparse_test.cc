// Runs the real source of the sparse kernels (kernels/sparse/quest_kernels.cu,
// andpro_kernels.cu, minference_{estimate,index,attention,buffers}.cu: kernels *and*
// their launchers, compiled for the CPU warp emulator) on small shapes and compares with
// the CPU references, the way the GPU checks of quest_family.cu, andpro_family.cu and
// minference_family.cu do. "Device" memory is host memory here, so host vectors are passed
// straight to the launchers. This is where these kernels first execute; speed and true
// concurrency are only checked on a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/common/attention_ref.h"
#include "kernels/common/cuda_util.cuh"
#include "kernels/common/host_util.h"
#include "kernels/common/layout.h"
#include "kernels/common/paged_kv_host.h"
#include "kernels/sparse/andpro_kernels.cuh"
#include "kernels/sparse/andpro_ref.h"
#include "kernels/sparse/minference_buffers.cuh"
#include "kernels/sparse/minference_plan.h"
#include "kernels/sparse/minference_ref.h"
#include "kernels/decode/decode_kernel.cuh"
#include "kernels/decode/decode_plan.h"
#include "kernels/sparse/quest_kernels.cuh"
#include "kernels/sparse/quest_ref.h"
#include "kernels/sparse/sparse_ref_util.h"

using namespace servesim::kernels;
using namespace servesim::kernels::sparse;

namespace {

constexpr int kD = 128;

const __nv_bfloat16* bf16(const std::vector<uint16_t>& bits) { return reinterpret_cast<const __nv_bfloat16*>(bits.data()); }
__nv_bfloat16* bf16(std::vector<uint16_t>& bits) { return reinterpret_cast<__nv_bfloat16*>(bits.data()); }
std::vector<uint16_t> nan_bf16(size_t n) { return std::vector<uint16_t>(n, 0x7FC0); }

std::span<const int32_t> page_table_of(const HostPagedKv& kv, int b) {
  return std::span<const int32_t>(kv.page_indices)
      .subspan(kv.page_indptr[b], kv.page_indptr[b + 1] - kv.page_indptr[b]);
}

// Emulated blocks of 512 threads (top-k) are slow on the CPU: the cases keep few rows.
void run_quest_case(const std::vector<int>& lens, int H, int G, const std::vector<bool>& per_query_head,
                    const std::vector<int>& budgets, uint64_t seed) {
  const int B = static_cast<int>(lens.size());
  const float scale = 1.0f / std::sqrt(float(kD));
  const HostPagedKv host = make_random_paged_kv(lens, G, kD, seed);
  const std::vector<float> kf = from_bf16_bits(host.k_bits), vf = from_bf16_bits(host.v_bits);
  const KvCacheF32 cpu_kv{kf.data(), vf.data(), G, kD};
  int max_pages = 1;
  for (int l : lens) max_pages = std::max(max_pages, pages_for_tokens(l));
  auto cache = [&](const int32_t* kv_lens) {
    return QuestCache{bf16(host.k_bits), bf16(host.v_bits), host.page_indptr.data(), host.page_indices.data(),
                      kv_lens, B, H, G, kD};
  };

  // Metadata: all but the last few tokens, then an append of those (straddles pages).
  std::vector<int32_t> old_lens(B), fresh(B);
  for (int b = 0; b < B; ++b) {
    fresh[b] = std::min(lens[b], 1 + 7 * b);
    old_lens[b] = lens[b] - fresh[b];
  }
  std::vector<uint16_t> meta = nan_bf16(size_t(host.num_pages) * G * 2 * kD);
  quest_update_metadata({cache(old_lens.data()), old_lens.data(), max_pages, bf16(meta)}, nullptr);
  quest_update_metadata({cache(host.kv_lens.data()), fresh.data(), 2, bf16(meta)}, nullptr);
  const std::vector<float> meta_gpu = from_bf16_bits(meta);
  std::vector<float> meta_ref(meta_gpu.size(), 0.0f);
  size_t mismatches = 0;
  for (int b = 0; b < B; ++b) {
    quest_recompute_metadata_ref(cpu_kv, page_table_of(host, b), lens[b], meta_ref.data());
    for (int32_t phys : page_table_of(host, b))
      for (int h = 0; h < G; ++h) {
        const int64_t off = quest_meta_offset(phys, h, G, kD);
        for (int i = 0; i < 2 * kD; ++i) mismatches += meta_gpu[off + i] != meta_ref[off + i];
      }
  }
  CHECK_MESSAGE(mismatches == 0, "page bounds differing from the CPU recompute: ", mismatches);

  const std::vector<float> q = random_uniform(size_t(B) * H * kD, seed + 1);
  const std::vector<uint16_t> q_bits = to_bf16_bits(q);
  for (bool per_q : per_query_head) {
    CAPTURE(per_q);
    const int rows = per_q ? H : G;
    std::vector<float> scores(size_t(B) * rows * max_pages, NAN);
    quest_estimate({cache(host.kv_lens.data()), bf16(q_bits), bf16(meta), per_q, max_pages, scores.data()}, nullptr);
    std::vector<float> got, want, row_ref(size_t(rows) * max_pages);
    for (int b = 0; b < B; ++b) {
      const int pages = pages_for_tokens(lens[b]);
      quest_estimate_ref(q.data() + size_t(b) * H * kD, meta_ref.data(), page_table_of(host, b), pages, H, G, kD, per_q,
                         row_ref.data());
      for (int r = 0; r < rows; ++r)
        for (int p = 0; p < pages; ++p) {
          got.push_back(scores[(size_t(b) * rows + r) * max_pages + p]);
          want.push_back(row_ref[size_t(r) * pages + p]);
        }
    }
    CHECK(relative_error(got, want) < 1e-3);

    for (int budget_pages : budgets) {
      budget_pages = std::min(budget_pages, max_pages);
      CAPTURE(budget_pages);
      std::vector<int32_t> selected(size_t(B) * rows * budget_pages, -7), count(size_t(B) * rows, -7);
      quest_topk({host.kv_lens.data(), scores.data(), B, rows, max_pages, budget_pages, selected.data(), count.data()},
                 nullptr);
      std::vector<std::vector<int32_t>> chosen(size_t(B) * rows);
      bool same = true;
      for (int b = 0; b < B; ++b)
        for (int r = 0; r < rows; ++r) {
          const size_t br = size_t(b) * rows + r;
          const std::vector<int32_t> ref = quest_select_pages_ref(
              std::span<const float>(scores).subspan(br * max_pages, max_pages), pages_for_tokens(lens[b]), budget_pages);
          chosen[br].assign(selected.begin() + br * budget_pages,
                            selected.begin() + br * budget_pages + std::clamp(count[br], 0, budget_pages));
          same = same && count[br] == static_cast<int32_t>(ref.size()) && chosen[br] == ref;
        }
      CHECK_MESSAGE(same, "page selection differs from the CPU top-k of the kernel's scores");
      if (!same) continue;

      if (!per_q) {  // the fused estimate + top-k selects the same pages in one launch
        std::vector<int32_t> fsel(selected.size(), -7), fcount(count.size(), -7);
        quest_estimate_topk({cache(host.kv_lens.data()), bf16(q_bits), bf16(meta), max_pages, budget_pages, fsel.data(),
                             fcount.data()},
                            nullptr);
        bool fused_same = true;
        for (size_t br = 0; br < chosen.size(); ++br) {
          const int n = std::clamp(fcount[br], 0, budget_pages);
          fused_same = fused_same && fcount[br] == count[br] &&
                       std::equal(chosen[br].begin(), chosen[br].end(), fsel.begin() + br * budget_pages,
                                  fsel.begin() + br * budget_pages + n);
        }
        CHECK_MESSAGE(fused_same, "fused estimate + top-k selects other pages than estimate then top-k");
      }

      for (int splits : {1, 3}) {
        CAPTURE(splits);
        std::vector<uint16_t> out = nan_bf16(q.size());
        std::vector<float> partial_o(size_t(B) * H * splits * kD, NAN), partial_lse(size_t(B) * H * splits, NAN);
        quest_sparse_decode({cache(host.kv_lens.data()), bf16(q_bits), selected.data(), count.data(), per_q,
                             budget_pages, scale, splits, partial_o.data(), partial_lse.data(), bf16(out), nullptr},
                            nullptr);
        std::vector<float> ref(q.size());
        for (int b = 0; b < B; ++b) {
          paged_decode_subset_ref(q.data() + size_t(b) * H * kD, cpu_kv, page_table_of(host, b), lens[b], H, scale, per_q,
                                  [&](int r) { return std::span<const int32_t>(chosen[size_t(b) * rows + r]); },
                                  ref.data() + size_t(b) * H * kD);
          if (budget_pages == max_pages) {  // every page selected: dense attention
            const std::vector<float> kd = host.gather_k(b), vd = host.gather_v(b);
            dense_attention_ref({q.data() + size_t(b) * H * kD, kd.data(), vd.data(), 1, lens[b], H, G, kD, scale},
                                full_mask(), ref.data() + size_t(b) * H * kD, nullptr);
          }
        }
        const std::vector<float> got_out = from_bf16_bits(out);
        CHECK_FALSE(has_non_finite(got_out));
        CHECK(relative_error(got_out, ref) < kBf16RelTol);
      }
      if (!per_q) {  // variant tc: the dense mma.sync decode over per-(sequence, KV head) page lists
        std::vector<int32_t> lists(size_t(B) * G * budget_pages, -1), vlens(B, -1), want_vlens(B);
        quest_page_lists({cache(host.kv_lens.data()), selected.data(), budget_pages, lists.data(), vlens.data()}, nullptr);
        for (int b = 0; b < B; ++b) want_vlens[b] = quest_virtual_len(lens[b], budget_pages);
        CHECK(vlens == want_vlens);
        std::vector<int32_t> indptr(size_t(B) * G + 1);
        for (size_t i = 0; i < indptr.size(); ++i) indptr[i] = static_cast<int32_t>(i * budget_pages);
        const DecodePlan plan = plan_decode(want_vlens, G, 132, 64);  // 64-token splits: the merge runs too
        std::vector<uint16_t> out = nan_bf16(q.size());
        std::vector<float> po(size_t(plan.num_work()) * H * kD, NAN), pl(size_t(plan.num_work()) * H, NAN);
        detail::DecodeParams p;
        p.a.q = bf16(q_bits);
        p.a.k_cache = bf16(host.k_bits);
        p.a.v_cache = bf16(host.v_bits);
        p.a.kv = PagedKvView{B, indptr.data(), lists.data(), vlens.data()};
        p.a.heads = AttentionHeads{H, G, kD};
        p.a.out = bf16(out);
        p.a.per_head_pages = true;
        p.work_seq = plan.work_seq.data();
        p.work_split = plan.work_split.data();
        p.seq_work_indptr = plan.seq_work_indptr.data();
        p.split_tokens = plan.split_tokens;
        p.scale_log2 = scale * kLog2e;
        p.partial_o = po.data();
        p.partial_lse = pl.data();
        servesim_emu::launch({unsigned(plan.num_work()), unsigned(G), 1}, {detail::kDecodeThreads, 1, 1},
                             detail::decode_smem_bytes<kD>(), [&] { detail::decode_splitkv_kernel<kD>(p); });
        if (plan.needs_merge())
          servesim_emu::launch({unsigned(B), unsigned(H), 1}, {kD, 1, 1}, 0, [&] { detail::decode_merge_kernel<kD>(p); });
        std::vector<float> ref(q.size());
        for (int b = 0; b < B; ++b)
          paged_decode_subset_ref(q.data() + size_t(b) * H * kD, cpu_kv, page_table_of(host, b), lens[b], H, scale, false,
                                  [&](int r) { return std::span<const int32_t>(chosen[size_t(b) * G + r]); },
                                  ref.data() + size_t(b) * H * kD);
        const std::vector<float> got_out = from_bf16_bits(out);
        CHECK_FALSE(has_non_finite(got_out));
        CHECK(relative_error(got_out, ref) < kBf16RelTol);
      }
    }
  }
}

void run_andpro_case(int n, int window, bool keep_first, int H, int G, uint64_t seed) {
  const AndproParams p{.window = window, .block = 16, .budget = 64, .keep_first_block = keep_first};
  const float scale = 1.0f / std::sqrt(float(kD));
  const HostPagedKv host = make_random_paged_kv({n}, G, kD, seed);
  const std::vector<float> kf = from_bf16_bits(host.k_bits), vf = from_bf16_bits(host.v_bits);
  const std::vector<float> k = host.gather_k(0), v = host.gather_v(0);
  const std::span<const int32_t> table(host.page_indices);
  const std::vector<float> q_win = random_uniform(size_t(window) * H * kD, seed + 1, -2.0f, 2.0f);
  std::vector<float> y(q_win.size()), lse(size_t(window) * H);
  dense_attention_ref({q_win.data(), k.data(), v.data(), window, n, H, G, kD, scale}, causal_mask(n - window), y.data(),
                      lse.data());
  for (float& x : y) x = round_to_bf16(x);
  const std::vector<uint16_t> q_bits = to_bf16_bits(q_win), y_bits = to_bf16_bits(y);

  const int cand = n - window, blocks = cand / p.block;
  const int kept_blocks = static_cast<int>(andpro_kept_blocks(n, p));
  const int kept_tokens = static_cast<int>(andpro_kept_tokens(n, p));
  std::vector<int32_t> dst_table(pages_for_tokens(kept_tokens));
  for (size_t i = 0; i < dst_table.size(); ++i) dst_table[i] = static_cast<int32_t>(dst_table.size() - 1 - i);
  std::vector<float> token_scores(size_t(G) * cand, NAN), block_scores(std::max(1, G * blocks), NAN);
  std::vector<int32_t> kept(std::max(1, G * kept_blocks), -7);
  std::vector<uint16_t> dst_k = nan_bf16(dst_table.size() * G * kPageSize * kD), dst_v = dst_k;
  AndproArgs a;
  a.k_cache = bf16(host.k_bits);
  a.v_cache = bf16(host.v_bits);
  a.page_table = host.page_indices.data();
  a.num_q_heads = H;
  a.num_kv_heads = G;
  a.head_dim = kD;
  a.n = n;
  a.window = window;
  a.block = p.block;
  a.kept_blocks = kept_blocks;
  a.keep_first_block = keep_first;
  a.scale = scale;
  a.q_win = bf16(q_bits);
  a.y_win = bf16(y_bits);
  a.lse_win = lse.data();
  a.token_scores = token_scores.data();
  a.block_scores = block_scores.data();
  a.kept = kept.data();
  a.dst_page_table = dst_table.data();
  a.dst_k = bf16(dst_k);
  a.dst_v = bf16(dst_v);

  andpro_score(a, nullptr);
  std::vector<float> tok_ref(token_scores.size());
  andpro_token_scores_ref(q_win.data(), y.data(), lse.data(), {kf.data(), vf.data(), G, kD}, table, n, window, H, scale,
                          tok_ref.data());
  CHECK(relative_error(token_scores, tok_ref) < 1e-2);

  andpro_merge(a, nullptr);
  const std::vector<float> blocks_ref = andpro_merge_blocks_ref(token_scores, G, n, p);
  block_scores.resize(blocks_ref.size());
  CHECK(relative_error(block_scores, blocks_ref) < 1e-5);

  andpro_select(a, nullptr);
  kept.resize(size_t(G) * kept_blocks);
  CHECK(kept == andpro_select_blocks_ref(block_scores, G, n, p));

  andpro_compact(a, nullptr);
  const std::vector<float> dk = from_bf16_bits(dst_k), dv = from_bf16_bits(dst_v);
  std::vector<float> rk(dk.size(), NAN), rv(dv.size(), NAN);
  andpro_compact_ref({kf.data(), vf.data(), G, kD}, table, kept, n, p, dst_table, rk.data(), rv.data());
  size_t diff = 0;
  for (int j = 0; j < kept_tokens; ++j)
    for (int g = 0; g < G; ++g) {
      const int64_t off = kv_cache_offset(dst_table[j / kPageSize], g, j % kPageSize, 0, G, kD);
      for (int d = 0; d < kD; ++d) diff += (dk[off + d] != rk[off + d]) + (dv[off + d] != rv[off + d]);
    }
  CHECK_MESSAGE(diff == 0, "compacted values differing from the CPU compaction: ", diff);

  // allocation: layer_topk (the default): one top-k over the layer, ragged compaction.
  // Head 0's block scores are raised on half of the cases so the heads' lengths differ.
  if (seed % 2 == 0)
    for (int b = 0; b < blocks; ++b) block_scores[b] += 1e3f;
  std::vector<int32_t> kept_layer(std::max(1, G * kept_blocks), -7);
  std::vector<int32_t> dst_table_r(andpro_ragged_pages_bound(n, p));
  for (size_t i = 0; i < dst_table_r.size(); ++i) dst_table_r[i] = static_cast<int32_t>(dst_table_r.size() - 1 - i);
  std::vector<uint16_t> rdst_k = nan_bf16(dst_table_r.size() * G * kPageSize * kD), rdst_v = rdst_k;
  AndproArgs l = a;
  l.block_scores = block_scores.data();
  l.kept = kept_layer.data();
  l.dst_page_table = dst_table_r.data();
  l.dst_k = bf16(rdst_k);
  l.dst_v = bf16(rdst_v);
  andpro_select_layer(l, nullptr);
  kept_layer.resize(size_t(G) * kept_blocks);
  CHECK(kept_layer == andpro_select_layer_ref(block_scores, G, n, p));
  const AndproRagged rag = andpro_ragged(kept_layer, G, n, p);
  if (seed % 2 == 0 && G > 1) CHECK(rag.tokens[0] > rag.tokens[1]);
  CHECK(rag.pages <= static_cast<int64_t>(dst_table_r.size()));
  andpro_compact_ragged(l, nullptr);
  const std::vector<float> gk = from_bf16_bits(rdst_k), gv = from_bf16_bits(rdst_v);
  std::vector<float> ck(gk.size(), NAN), cv(gv.size(), NAN);
  andpro_compact_ragged_ref({kf.data(), vf.data(), G, kD}, table, kept_layer, n, p, dst_table_r, ck.data(), cv.data());
  size_t rdiff = 0, rows = 0;
  for (size_t i = 0; i < gk.size(); ++i) {  // written rows equal, padding untouched (NaN) in both
    rdiff += !(gk[i] == ck[i] || (std::isnan(gk[i]) && std::isnan(ck[i])));
    rdiff += !(gv[i] == cv[i] || (std::isnan(gv[i]) && std::isnan(cv[i])));
    rows += !std::isnan(gk[i]);
  }
  CHECK_MESSAGE(rdiff == 0, "ragged compaction values differing from the CPU reference: ", rdiff);
  int64_t want_rows = 0;
  for (int64_t t : rag.tokens) want_rows += t;
  CHECK(rows == static_cast<size_t>(want_rows) * kD);
}

void run_minference_case(int n, const std::vector<MInfHeadPattern>& patterns, int G, uint64_t seed) {
  const int H = static_cast<int>(patterns.size());
  const float scale = 1.0f / std::sqrt(float(kD));
  const std::vector<float> q = random_uniform(size_t(n) * H * kD, seed, -2.0f, 2.0f);
  const std::vector<uint16_t> q_bits = to_bf16_bits(q);
  const HostPagedKv host = make_random_paged_kv({n}, G, kD, seed + 1, {.lo = -2.0f, .hi = 2.0f});
  const std::vector<float> k = host.gather_k(0), v = host.gather_v(0);
  const MInfPrompt pr{bf16(q_bits), bf16(host.k_bits), bf16(host.v_bits), host.page_indices.data(), n, H, G, kD, scale};
  const MInfPlan plan = plan_minference(patterns, n);
  MInfDeviceIndex ix(plan, H, G);
  std::fill_n(ix.vertical.get(), ix.vertical.size(), NAN);
  std::fill_n(ix.bs_logits.get(), ix.bs_logits.size(), NAN);

  // Estimates.
  minf_vs_estimate(pr, ix.view(), nullptr);
  minf_bs_estimate(pr, ix.view(), nullptr);
  const std::vector<float> vert = ix.vertical.download(), sl = ix.slash.download(), lg = ix.bs_logits.download();
  std::vector<float> got, want, row_v(n), row_s(n);
  for (size_t s = 0; s < plan.vs_heads.size(); ++s) {
    vs_estimate_ref(q.data(), k.data(), n, H, G, kD, scale, plan.vs_heads[s], row_v.data(), row_s.data());
    got.insert(got.end(), vert.begin() + s * n, vert.begin() + (s + 1) * n);
    got.insert(got.end(), sl.begin() + s * n, sl.begin() + (s + 1) * n);
    want.insert(want.end(), row_v.begin(), row_v.end());
    want.insert(want.end(), row_s.begin(), row_s.end());
  }
  CHECK_MESSAGE(relative_error(got, want) < 1e-2, "vertical-slash estimate");
  got.clear();
  want.clear();
  const int nb = plan.nb;
  std::vector<float> lref(size_t(nb) * nb);
  for (size_t s = 0; s < plan.bs_heads.size(); ++s) {
    bs_estimate_ref(q.data(), k.data(), n, H, G, kD, scale, plan.bs_heads[s], lref.data());
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j <= i; ++j) {
        got.push_back(lg[(s * nb + i) * nb + j]);
        want.push_back(lref[size_t(i) * nb + j]);
      }
  }
  CHECK_MESSAGE(relative_error(got, want) < 1e-2, "block-sparse estimate");

  // Index: equal to the CPU selection + build applied to the kernel's own scores.
  minf_vs_index(pr, ix.view(), nullptr);
  minf_bs_index(pr, ix.view(), nullptr);
  const std::vector<MInfHeadIndex> index = ix.download_index();
  const std::vector<int32_t> lv = ix.lines_v.download(), ls = ix.lines_s.download();
  for (size_t s = 0; s < plan.vs_heads.size(); ++s) {
    const MInfHeadDesc& d = plan.heads[plan.vs_heads[s]];
    const VsLines lines = vs_select_lines_ref(std::span<const float>(vert).subspan(s * n, n),
                                              std::span<const float>(sl).subspan(s * n, n), d.a, d.b);
    CHECK(std::equal(lines.verticals.begin(), lines.verticals.end(), lv.begin() + s * plan.max_kv));
    CHECK(std::equal(lines.slashes.begin(), lines.slashes.end(), ls.begin() + s * plan.max_ks));
    const std::vector<RowBlockIndex> rows = vs_build_index_ref(lines, n);
    for (int rb = 0; rb < nb; ++rb) {
      CHECK(rows[rb].ranges == index[plan.vs_heads[s]].rows[rb].ranges);
      CHECK(rows[rb].columns == index[plan.vs_heads[s]].rows[rb].columns);
    }
  }
  for (size_t s = 0; s < plan.bs_heads.size(); ++s) {
    const int h = plan.bs_heads[s];
    const std::vector<RowBlockIndex> rows =
        bs_build_index_ref(std::span<const float>(lg).subspan(s * nb * nb, size_t(nb) * nb), n, plan.heads[h].a);
    for (int rb = 0; rb < nb; ++rb) CHECK(rows[rb].ranges == index[h].rows[rb].ranges);
  }

  // Attention over the kernel's index.
  std::vector<uint16_t> out = nan_bf16(q.size());
  std::vector<float> lse(size_t(n) * H, NAN);
  minf_attention({pr, ix.view(), bf16(out), lse.data()}, nullptr);
  std::vector<float> ref(q.size()), lse_ref(size_t(n) * H);
  minference_attention_ref(q.data(), k.data(), v.data(), n, H, G, kD, scale, index, ref.data(), lse_ref.data());
  const std::vector<float> got_out = from_bf16_bits(out);
  CHECK_FALSE(has_non_finite(got_out));
  CHECK(relative_error(got_out, ref) < kBf16RelTol);
  CHECK(relative_error(lse, lse_ref) < 1e-3);

  // Variant mma (tensor-core path with the gathered-key loader) on the same index.
  std::vector<uint16_t> out_mma = nan_bf16(q.size());
  std::vector<float> lse_mma(size_t(n) * H, NAN);
  minf_attention_mma({pr, ix.view(), bf16(out_mma), lse_mma.data()}, nullptr);
  const std::vector<float> got_mma = from_bf16_bits(out_mma);
  CHECK_FALSE(has_non_finite(got_mma));
  CHECK(relative_error(got_mma, ref) < kBf16RelTol);
  CHECK(relative_error(lse_mma, lse_ref) < 1e-3);
}

}  // namespace

TEST_CASE("emulated Quest kernels: page bounds, estimate, top-k pages (two launches and fused) and sparse decode (CUDA-core and tensor-core) match the references") {
  // Group 2, ragged (a 1-token sequence, a partial last page), KV-head selection; budget 1
  // keeps only the current page, 3 selects, 1000 (all pages) must equal dense decode.
  run_quest_case({1, 40, 250}, 4, 2, {false}, {1, 3, 1000}, 51);
}

TEST_CASE("emulated Quest kernels select per query head and serve the largest GQA group (8)") {
  run_quest_case({90, 200}, 8, 1, {false, true}, {4}, 52);
}

TEST_CASE("emulated AnDPro kernels: scores, block merge, top-k keep and compaction (equal and layer_topk) match the references") {
  run_andpro_case(300, 16, true, 4, 2, 61);
  run_andpro_case(260, 32, false, 4, 1, 62);
  run_andpro_case(300, 16, true, 4, 2, 64);  // layer_topk: head 0 takes all but head 1's forced block
}

TEST_CASE("emulated MInference kernels: estimates, index and sparse attention (WMMA and mma variants) match the references per head") {
  // Scaled-down parameters so a small prompt is still sparse, one pattern per head.
  const std::vector<MInfHeadPattern> patterns = {{MInfPattern::kAShape, 64, 100},
                                                 {MInfPattern::kVerticalSlash, 40, 60},
                                                 {MInfPattern::kVerticalSlash, 100, 10},
                                                 {MInfPattern::kBlockSparse, 2, 0}};
  run_minference_case(300, patterns, 2, 71);
}
