// MInference family of `servesim-kernels` (check + bench); kernels in
// minference_kernels.cuh, reference in minference_ref.h.
//
// check: prompts with a different pattern on every head (scaled-down parameters so that
// small prompts are still sparse, plus the paper's own). The estimates are compared with
// the CPU estimates; the selected lines / blocks and the index must equal the CPU
// selection and Algorithm 4 applied to the GPU's own scores (exact); the attention must
// match the CPU sparse attention over the GPU's index (and, for heads whose blocks are
// all kept, dense causal attention - covered by the CPU property tests).
// bench: lengths 16K..256K (1M for one vertical-slash setting when memory allows) x the
// search space, each pattern on all 32 heads, timing the estimate, the index (top-k +
// build) and the attention separately and end to end (A-shape: the attention only, which
// is its whole path), with the visited area in params, plus our dense prefill on the same
// prompt (minf_dense_prefill). Uniform (worst-case area) data: vertical-slash only, up to
// 32K for all four settings and at 64K for the two extreme ones. Every (pattern, data,
// length) point asks the run's time budget first (bench_admit).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/bench/device_info.h"
#include "kernels/bench/gpu_timer.cuh"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/registry.h"
#include "kernels/common/cuda_util.cuh"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_device.cuh"
#include "kernels/prefill/prefill.cuh"
#include "kernels/sparse/minference_buffers.cuh"

namespace servesim::kernels::sparse {
namespace {

constexpr int kDim = 128;

void run_stage(const std::string& stage, const MInfPrompt& pr, const MInfDeviceIndex& ix, __nv_bfloat16* out,
               float* lse, cudaStream_t s) {
  if (stage == "estimate" || stage == "e2e" || stage == "e2e_mma") {
    minf_vs_estimate(pr, ix.view(), s);
    minf_bs_estimate(pr, ix.view(), s);
  }
  if (stage == "index" || stage == "e2e" || stage == "e2e_mma") {
    minf_vs_index(pr, ix.view(), s);
    minf_bs_index(pr, ix.view(), s);
  }
  if (stage == "attention" || stage == "e2e") minf_attention({pr, ix.view(), out, lse}, s);
  if (stage == "attention_mma" || stage == "e2e_mma") minf_attention_mma({pr, ix.view(), out, lse}, s);
}

int check_minference(const CheckOptions& opts) {
  CheckReport report("minference", opts.verbose);
  const int H = 8, G = 2;
  const std::vector<MInfHeadPattern> patterns = {
      {MInfPattern::kAShape, 64, 200},       {MInfPattern::kVerticalSlash, 40, 60},
      {MInfPattern::kVerticalSlash, 100, 10}, {MInfPattern::kBlockSparse, 3, 0},
      kMInfBlockSparse,                       kMInfVerticalSlash[3],
      kMInfAShape,                            kMInfVerticalSlash[0]};
  std::vector<int> lengths = {300, 777};
  if (!opts.quick) lengths.push_back(1500);
  for (size_t ci = 0; ci < lengths.size(); ++ci) {
    const int n = lengths[ci];
    const std::string shape = " n=" + std::to_string(n) + " h=8/2";
    const float scale = 1.0f / std::sqrt(float(kDim));
    const std::vector<float> q = random_uniform(size_t(n) * H * kDim, derive_seed(opts.seed, 700 + ci), -2.0f, 2.0f);
    const HostPagedKv host = make_random_paged_kv({n}, G, kDim, derive_seed(opts.seed, 710 + ci), {.lo = -2.0f, .hi = 2.0f});
    const std::vector<float> k = host.gather_k(0), v = host.gather_v(0);
    DevicePagedKv dev;
    dev.upload(host);
    const auto dq = upload_bf16(to_bf16_bits(q));
    const MInfPrompt pr{dq.get(), dev.k.get(), dev.v.get(), dev.table.page_indices.get(), n, H, G, kDim, scale};
    const MInfPlan plan = plan_minference(patterns, n);
    MInfDeviceIndex ix(plan, H, G);
    fill_nan_device(ix.vertical.get(), ix.vertical.size());
    fill_nan_device(ix.bs_logits.get(), ix.bs_logits.size());

    // Estimates.
    minf_vs_estimate(pr, ix.view(), nullptr);
    minf_bs_estimate(pr, ix.view(), nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> vert = ix.vertical.download(), sl = ix.slash.download(), lg = ix.bs_logits.download();
    std::vector<float> got, want, row_v(n), row_s(n);
    for (size_t s = 0; s < plan.vs_heads.size(); ++s) {
      vs_estimate_ref(q.data(), k.data(), n, H, G, kDim, scale, plan.vs_heads[s], row_v.data(), row_s.data());
      got.insert(got.end(), vert.begin() + s * n, vert.begin() + (s + 1) * n);
      got.insert(got.end(), sl.begin() + s * n, sl.begin() + (s + 1) * n);
      want.insert(want.end(), row_v.begin(), row_v.end());
      want.insert(want.end(), row_s.begin(), row_s.end());
    }
    report.expect_close("vs_estimate" + shape, got, want, 1e-2);
    got.clear();
    want.clear();
    const int nb = plan.nb;
    std::vector<float> lref(size_t(nb) * nb);
    for (size_t s = 0; s < plan.bs_heads.size(); ++s) {
      bs_estimate_ref(q.data(), k.data(), n, H, G, kDim, scale, plan.bs_heads[s], lref.data());
      for (int i = 0; i < nb; ++i) {
        for (int j = 0; j <= i; ++j) {
          got.push_back(lg[(s * nb + i) * nb + j]);
          want.push_back(lref[size_t(i) * nb + j]);
        }
      }
    }
    report.expect_close("bs_estimate" + shape, got, want, 1e-2);

    // Index: must equal the CPU selection + build applied to the GPU scores.
    minf_vs_index(pr, ix.view(), nullptr);
    minf_bs_index(pr, ix.view(), nullptr);
    const std::vector<MInfHeadIndex> gpu_index = ix.download_index();
    const std::vector<int32_t> lv = ix.lines_v.download(), ls = ix.lines_s.download();
    bool same = true;
    for (size_t s = 0; s < plan.vs_heads.size(); ++s) {
      const MInfHeadDesc& d = plan.heads[plan.vs_heads[s]];
      const VsLines lines = vs_select_lines_ref(std::span<const float>(vert).subspan(s * n, n),
                                                std::span<const float>(sl).subspan(s * n, n), d.a, d.b);
      same = same && std::equal(lines.verticals.begin(), lines.verticals.end(), lv.begin() + s * plan.max_kv) &&
             std::equal(lines.slashes.begin(), lines.slashes.end(), ls.begin() + s * plan.max_ks);
      const std::vector<RowBlockIndex> rows = vs_build_index_ref(lines, n);
      for (int rb = 0; rb < nb; ++rb) {
        same = same && rows[rb].ranges == gpu_index[plan.vs_heads[s]].rows[rb].ranges &&
               rows[rb].columns == gpu_index[plan.vs_heads[s]].rows[rb].columns;
      }
    }
    report.expect_true("vs_index" + shape, same, same ? "lines and index equal the CPU build" : "index differs");
    same = true;
    for (size_t s = 0; s < plan.bs_heads.size(); ++s) {
      const int h = plan.bs_heads[s];
      const std::vector<RowBlockIndex> rows =
          bs_build_index_ref(std::span<const float>(lg).subspan(s * nb * nb, size_t(nb) * nb), n, plan.heads[h].a);
      for (int rb = 0; rb < nb; ++rb) same = same && rows[rb].ranges == gpu_index[h].rows[rb].ranges;
    }
    report.expect_true("bs_index" + shape, same, same ? "blocks equal the CPU top-k of GPU logits" : "blocks differ");

    // Attention over the GPU index.
    DeviceBuffer<__nv_bfloat16> out(q.size());
    DeviceBuffer<float> lse(size_t(n) * H);
    fill_nan_device(out.get(), out.size());
    fill_nan_device(lse.get(), lse.size());
    minf_attention({pr, ix.view(), out.get(), lse.get()}, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> ref(q.size()), lse_ref(size_t(n) * H);
    minference_attention_ref(q.data(), k.data(), v.data(), n, H, G, kDim, scale, gpu_index, ref.data(), lse_ref.data());
    report.expect_close("attention mixed patterns" + shape, download_bf16_as_float(out.get(), out.size()), ref, kBf16RelTol);
    report.expect_close("attention lse" + shape, lse.download(), lse_ref, 1e-3);
    // Variant mma: the same index on the mma.sync path with the gathered-key loader.
    fill_nan_device(out.get(), out.size());
    fill_nan_device(lse.get(), lse.size());
    minf_attention_mma({pr, ix.view(), out.get(), lse.get()}, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    report.expect_close("attention mma mixed patterns" + shape, download_bf16_as_float(out.get(), out.size()), ref,
                        kBf16RelTol);
    report.expect_close("attention mma lse" + shape, lse.download(), lse_ref, 1e-3);
  }
  return report.failures();
}

struct BenchPattern {
  std::string name;
  MInfHeadPattern pattern;
};

ProfileRow minf_row(const std::string& kernel, const std::string& variant, int n, int H, int G) {
  ProfileRow row;
  row.kernel = kernel;
  row.variant = variant;
  row.batch = 1;
  row.ctx = n;
  row.q_len = n;
  row.prefix = 0;
  row.heads = H;
  row.kv_heads = G;
  row.head_dim = kDim;
  row.page_size = kPageSize;
  return row;
}

void bench_minference(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  const int H = 32, G = 8, sms = current_device_sm_count();
  const AttentionHeads heads{H, G, kDim};
  std::vector<int> lengths = opts.quick ? std::vector<int>{16384} : std::vector<int>{16384, 32768, 65536, 131072, 262144};
  if (!opts.quick) lengths.push_back(1 << 20);
  const std::vector<BenchPattern> all = {
      {"ashape_1024_4096", kMInfAShape},       {"vs_30_2048", kMInfVerticalSlash[0]},
      {"vs_100_1800", kMInfVerticalSlash[1]},  {"vs_500_1500", kMInfVerticalSlash[2]},
      {"vs_3000_200", kMInfVerticalSlash[3]},  {"bs_100", kMInfBlockSparse}};
  for (int n : lengths) {
    const bool million = n > 262144;
    const int pages = pages_for_tokens(n);
    // Memory: q, out (2 B x H x 128 each per token), K/V cache, LSE, index and estimates.
    size_t free_b = 0, total_b = 0;
    SERVESIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double need = double(n) * (4.0 * H * kDim + 4.0 * G * kDim + 4.0 * H) + double(H) * (n / 64) * 2048 * 8.0;
    if (need > 0.8 * double(free_b)) {
      std::printf("  minference n=%d skipped: needs ~%.1f GiB, %.1f GiB free\n", n, need / (1 << 30), free_b / double(1 << 30));
      continue;
    }
    DeviceBuffer<__nv_bfloat16> q(size_t(n) * H * kDim), o(size_t(n) * H * kDim);
    DeviceBuffer<__nv_bfloat16> kc(size_t(pages) * G * kPageSize * kDim), vc(kc.size());
    DeviceBuffer<float> lse(size_t(n) * H);
    std::vector<int32_t> table(pages);
    for (int p = 0; p < pages; ++p) table[p] = p;
    SplitMix64 g(derive_seed(opts.seed, n));
    for (int p = pages - 1; p > 0; --p) std::swap(table[p], table[g.uniform_int(0, p)]);
    DeviceBuffer<int32_t> d_table, d_indptr, d_lens, d_qindptr;
    d_table.upload(table);
    d_indptr.upload({0, pages});
    d_lens.upload({n});
    d_qindptr.upload({0, n});
    const MInfPrompt pr{q.get(), kc.get(), vc.get(), d_table.get(), n, H, G, kDim, heads.default_scale()};
    for (const char* data : {"structured", "uniform"}) {
      const bool structured = std::string(data) == "structured";
      if (!structured && (n > 65536 || opts.quick)) continue;  // worst-case area: small prompts only
      if (structured) {
        fill_structured_prompt(q.get(), kc.get(), vc.get(), d_table.get(), n, H, G, opts.seed, nullptr);
      } else {
        fill_bf16_uniform_device(q.get(), q.size(), derive_seed(opts.seed, 1), -1.0f, 1.0f);
        fill_bf16_uniform_device(kc.get(), kc.size(), derive_seed(opts.seed, 2), -1.0f, 1.0f);
        fill_bf16_uniform_device(vc.get(), vc.size(), derive_seed(opts.seed, 3), -1.0f, 1.0f);
      }
      double dense_us = 0;
      if (structured && !million && prefill_supports(heads) &&
          bench_admit(opts, "minference dense prefill n=" + std::to_string(n))) {
        const PrefillPlan pplan = plan_prefill({0, n}, {n}, choose_prefill_rows_per_tile({0, n}, H, sms));
        PrefillRunner runner(pplan, heads);
        PrefillArgs args{q.get(), kc.get(), vc.get(), PagedKvView{1, d_indptr.get(), d_table.get(), d_lens.get()},
                         d_qindptr.get(), heads, heads.default_scale(), o.get(), nullptr};
        ProfileRow row = minf_row("minf_dense_prefill", "causal", n, H, G);
        fill_timing(row, timer.measure(opts, [&](cudaStream_t s) { runner.run(args, s); }));
        row.flops = prefill_flops({0, n}, {n}, H, kDim);
        row.bytes = double(n) * (2.0 * H + 2.0 * G) * kDim * 2;
        out.write_row(row);
        dense_us = row.median_us;
      }
      for (const BenchPattern& bp : all) {
        if (!structured && bp.pattern.type != MInfPattern::kVerticalSlash) continue;  // area independent of data
        if (million && bp.name != "vs_30_2048") continue;
        // Uniform data at 64K is the slowest point of the family (near-dense area): the two
        // extreme vertical-slash settings bound it.
        if (!structured && n >= 65536 && bp.name != "vs_30_2048" && bp.name != "vs_3000_200") continue;
        if (!bench_admit(opts, "minference " + bp.name + " " + data + " n=" + std::to_string(n))) continue;
        const MInfPlan plan = plan_minference(std::vector<MInfHeadPattern>(H, bp.pattern), n);
        MInfDeviceIndex ix(plan, H, G);
        run_stage("e2e", pr, ix, o.get(), lse.get(), nullptr);  // builds the index for the area
        const std::vector<MInfHeadIndex> index = ix.download_index();
        int64_t tiles = 0;
        for (int h = 0; h < H; ++h) tiles += ix.visited_tiles(index, h);
        const double causal_tiles = double(H) * plan.nb * (plan.nb + 1) / 2.0;
        const std::string params = "pattern=" + bp.name + ";data=" + data + ";tiles=" + std::to_string(tiles) +
                                   ";density=" + std::to_string(tiles / causal_tiles);
        double stage_us[4] = {0, 0, 0, 0};
        const char* stages[4] = {"estimate", "index", "attention", "e2e"};
        for (int si = 0; si < 4; ++si) {
          // A-shape is static: no estimate or index, so its end-to-end path is the attention
          // launch itself, timed once (as minf_attention), not twice.
          if (bp.pattern.type == MInfPattern::kAShape && si != 2) continue;
          ProfileRow row = minf_row(std::string("minf_") + stages[si], bp.name, n, H, G);
          row.params = params;
          const std::string stage = stages[si];
          fill_timing(row, timer.measure(opts, [&](cudaStream_t s) { run_stage(stage, pr, ix, o.get(), lse.get(), s); }));
          if (si >= 2) {
            row.flops = 4.0 * kDim * 64.0 * 64.0 * double(tiles);
            row.bytes = double(n) * (2.0 * H + 2.0 * G) * kDim * 2;
          }
          out.write_row(row);
          stage_us[si] = row.median_us;
        }
        // Variant mma of the attention (rows minf_attention_mma / minf_e2e_mma, kept apart
        // from the WMMA rows that the cost model fits until a GPU run has compared them).
        for (const char* stage : {"attention_mma", "e2e_mma"}) {
          if (bp.pattern.type == MInfPattern::kAShape && std::string(stage) == "e2e_mma") continue;
          ProfileRow row = minf_row(std::string("minf_") + stage, bp.name, n, H, G);
          row.params = params;
          fill_timing(row, timer.measure(opts, [&](cudaStream_t s) { run_stage(stage, pr, ix, o.get(), lse.get(), s); }));
          row.flops = 4.0 * kDim * 64.0 * 64.0 * double(tiles);
          row.bytes = double(n) * (2.0 * H + 2.0 * G) * kDim * 2;
          out.write_row(row);
          std::printf("  minference %-16s %s n=%-7d %s: %.0f us\n", bp.name.c_str(), data, n, stage, row.median_us);
        }
        if (bp.pattern.type == MInfPattern::kAShape) stage_us[3] = stage_us[2];  // same launch (see above)
        std::printf("  minference %-16s %s n=%-7d density %.4f: estimate %.0f + index %.0f + attention %.0f -> e2e %.0f us"
                    " (dense %.0f us%s)\n", bp.name.c_str(), data, n, tiles / causal_tiles, stage_us[0], stage_us[1],
                    stage_us[2], stage_us[3], dense_us, dense_us > 0 ? "" : ", not measured");
        std::fflush(stdout);
      }
    }
  }
}

}  // namespace
}  // namespace servesim::kernels::sparse

SERVESIM_REGISTER_KERNEL_FAMILY(minference, {.name = "minference",
                                             .description = "MInference: A-shape, vertical-slash and block-sparse prefill (estimate, index, attention)",
                                             .check = servesim::kernels::sparse::check_minference,
                                             .bench = servesim::kernels::sparse::bench_minference,
                                             .order = 110});
