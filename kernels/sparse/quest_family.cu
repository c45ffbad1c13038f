// Quest family of `servesim-kernels` (check + bench); kernels in quest_kernels.cuh,
// reference in quest_ref.h.
//
// check: ragged batches on a NaN-poisoned paged cache. Metadata built in two appends must
// equal the CPU recomputation exactly (max/min of bf16 are bf16); the estimate is compared
// with the CPU estimate; top-k must equal the CPU selection applied to the GPU's own
// scores (exact); sparse decode must match the CPU attention over the GPU's selection,
// and with every page selected the dense CPU attention.
// bench: context x budget x batch (spec grid, B * ctx <= 1M tokens), timing the metadata
// update of a decode step, the estimate, top-k, sparse decode and the three together
// (quest_e2e), plus our dense split-KV decode on the same cache (quest_dense_decode) so
// the speedup is read off one run. Rows per kernel/variant: see docs/sparse_kernels.md.
#include <algorithm>
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
#include "kernels/decode/decode.cuh"
#include "kernels/sparse/quest_kernels.cuh"
#include "kernels/sparse/quest_ref.h"

namespace servesim::kernels::sparse {
namespace {

constexpr AttentionHeads kHeads{32, 8, 128};

struct QuestBuffers {
  DeviceBuffer<__nv_bfloat16> q, meta, out;
  DeviceBuffer<float> scores, partial_o, partial_lse;
  DeviceBuffer<int32_t> selected, selected_count;
};

QuestCache cache_of(const __nv_bfloat16* k, const __nv_bfloat16* v, const DevicePageTable& t, const int32_t* lens,
                    const AttentionHeads& h = kHeads) {
  return QuestCache{k, v, t.page_indptr.get(), t.page_indices.get(), lens, static_cast<int>(t.host_kv_lens.size()),
                    h.num_q_heads, h.num_kv_heads, h.head_dim};
}

int max_pages_of(const std::vector<int32_t>& lens) {
  int m = 1;
  for (int32_t l : lens) m = std::max(m, pages_for_tokens(l));
  return m;
}

void run_decode(const QuestCache& c, QuestBuffers& b, bool per_q, int budget_pages, int splits, float scale,
                cudaStream_t s) {
  b.partial_o.resize(std::max<size_t>(1, size_t(c.batch) * c.num_q_heads * splits * c.head_dim));
  b.partial_lse.resize(std::max<size_t>(1, size_t(c.batch) * c.num_q_heads * splits));
  quest_sparse_decode({c, b.q.get(), b.selected.get(), b.selected_count.get(), per_q, budget_pages, scale, splits,
                       b.partial_o.get(), b.partial_lse.get(), b.out.get(), nullptr},
                      s);
}

// Variant tc: the selected pages as per-(sequence, KV head) page lists for the dense
// decode (QuestPageListArgs). The lists have a fixed stride of budget_pages.
struct TcLists {
  DeviceBuffer<int32_t> indptr, lists, vlens;
  std::vector<int32_t> host_vlens;
};

void make_tc_lists(const QuestCache& c, QuestBuffers& buf, const std::vector<int32_t>& lens, int budget_pages, TcLists& tc,
                   cudaStream_t s) {
  const int rows = c.batch * c.num_kv_heads;
  std::vector<int32_t> indptr(size_t(rows) + 1);
  for (size_t i = 0; i < indptr.size(); ++i) indptr[i] = static_cast<int32_t>(i * budget_pages);
  tc.indptr.upload(indptr);
  tc.lists.resize(size_t(rows) * budget_pages);
  tc.vlens.resize(size_t(c.batch));
  tc.host_vlens.resize(lens.size());
  for (size_t b = 0; b < lens.size(); ++b) tc.host_vlens[b] = quest_virtual_len(lens[b], budget_pages);
  quest_page_lists({c, buf.selected.get(), budget_pages, tc.lists.get(), tc.vlens.get()}, s);
}

DecodeArgs tc_decode_args(const QuestCache& c, QuestBuffers& buf, const TcLists& tc, float scale) {
  DecodeArgs args;
  args.q = buf.q.get();
  args.k_cache = c.k;
  args.v_cache = c.v;
  args.kv = PagedKvView{c.batch, tc.indptr.get(), tc.lists.get(), tc.vlens.get()};
  args.heads = AttentionHeads{c.num_q_heads, c.num_kv_heads, c.head_dim};
  args.scale = scale;
  args.out = buf.out.get();
  args.per_head_pages = true;
  return args;
}

int check_quest(const CheckOptions& opts) {
  CheckReport report("quest", opts.verbose);
  std::vector<std::vector<int>> batches = {{1, 17, 300, 1000}, {16, 33, 2048}};
  if (!opts.quick) batches.push_back({5000, 123, 9000});
  const float scale = kHeads.default_scale();
  const int H = kHeads.num_q_heads, G = kHeads.num_kv_heads, D = kHeads.head_dim;
  for (size_t ci = 0; ci < batches.size(); ++ci) {
    const std::vector<int>& lens = batches[ci];
    const int B = static_cast<int>(lens.size());
    const HostPagedKv host = make_random_paged_kv(lens, G, D, derive_seed(opts.seed, 500 + ci));
    DevicePagedKv dev;
    dev.upload(host);
    const std::vector<float> kf = from_bf16_bits(host.k_bits), vf = from_bf16_bits(host.v_bits);
    const KvCacheF32 cpu_kv{kf.data(), vf.data(), G, D};
    auto table_of = [&](int b) {
      return std::span<const int32_t>(host.page_indices).subspan(host.page_indptr[b], host.page_indptr[b + 1] - host.page_indptr[b]);
    };
    const std::string shape = "b=" + std::to_string(B) + " ctx<=" + std::to_string(*std::max_element(lens.begin(), lens.end()));

    // Metadata: a prefill of all but the last few tokens, then an append of those.
    std::vector<int32_t> old_lens(B), fresh(B);
    for (int b = 0; b < B; ++b) {
      fresh[b] = std::min(lens[b], 1 + 7 * b);
      old_lens[b] = lens[b] - fresh[b];
    }
    QuestBuffers buf;
    DeviceBuffer<int32_t> d_old, d_fresh;
    d_old.upload(old_lens);
    d_fresh.upload(fresh);
    buf.meta.resize(size_t(host.num_pages) * G * 2 * D);
    fill_nan_device(buf.meta.get(), buf.meta.size());
    const int max_pages = max_pages_of(host.kv_lens);
    quest_update_metadata({cache_of(dev.k.get(), dev.v.get(), dev.table, d_old.get()), d_old.get(), max_pages, buf.meta.get()}, nullptr);
    quest_update_metadata({cache_of(dev.k.get(), dev.v.get(), dev.table, dev.table.kv_lens.get()), d_fresh.get(), 2, buf.meta.get()}, nullptr);
    SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> meta_gpu = download_bf16_as_float(buf.meta.get(), buf.meta.size());
    std::vector<float> meta_ref(meta_gpu.size(), 0.0f);
    size_t mismatches = 0, compared = 0;
    for (int b = 0; b < B; ++b) {
      quest_recompute_metadata_ref(cpu_kv, table_of(b), lens[b], meta_ref.data());
      for (int32_t phys : table_of(b)) {
        for (int h = 0; h < G; ++h) {
          const int64_t off = quest_meta_offset(phys, h, G, D);
          for (int i = 0; i < 2 * D; ++i, ++compared) mismatches += meta_gpu[off + i] != meta_ref[off + i];
        }
      }
    }
    report.expect_true("metadata append " + shape, mismatches == 0,
                       std::to_string(mismatches) + " of " + std::to_string(compared) + " bounds differ");

    const std::vector<float> q = random_uniform(size_t(B) * H * D, derive_seed(opts.seed, 600 + ci));
    buf.q = upload_bf16(to_bf16_bits(q));
    buf.out.resize(q.size());
    for (bool per_q : {false, true}) {
      const int rows = per_q ? H : G;
      const std::string variant = std::string(per_q ? "qhead " : "kvhead ") + shape;
      buf.scores.resize(size_t(B) * rows * max_pages);
      fill_nan_device(buf.scores.get(), buf.scores.size());
      const QuestCache c = cache_of(dev.k.get(), dev.v.get(), dev.table, dev.table.kv_lens.get());
      quest_estimate({c, buf.q.get(), buf.meta.get(), per_q, max_pages, buf.scores.get()}, nullptr);
      SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> scores_gpu = buf.scores.download(), got, want;
      std::vector<float> row_ref(size_t(rows) * max_pages);
      for (int b = 0; b < B; ++b) {
        const int pages = pages_for_tokens(lens[b]);
        quest_estimate_ref(q.data() + size_t(b) * H * D, meta_ref.data(), table_of(b), pages, H, G, D, per_q, row_ref.data());
        for (int r = 0; r < rows; ++r) {
          for (int p = 0; p < pages; ++p) {
            got.push_back(scores_gpu[(size_t(b) * rows + r) * max_pages + p]);
            want.push_back(row_ref[size_t(r) * pages + p]);
          }
        }
      }
      report.expect_close("estimate " + variant, got, want, 1e-3);

      for (int budget_pages : {4, 32, max_pages}) {
        buf.selected.resize(size_t(B) * rows * budget_pages);
        buf.selected_count.resize(size_t(B) * rows);
        quest_topk({dev.table.kv_lens.get(), buf.scores.get(), B, rows, max_pages, budget_pages, buf.selected.get(),
                    buf.selected_count.get()}, nullptr);
        SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<int32_t> sel = buf.selected.download(), cnt = buf.selected_count.download();
        bool same = true;
        std::vector<std::vector<int32_t>> chosen(size_t(B) * rows);
        for (int b = 0; b < B; ++b) {
          for (int r = 0; r < rows; ++r) {
            const size_t br = size_t(b) * rows + r;
            const std::span<const float> srow(scores_gpu.data() + br * max_pages, max_pages);
            const std::vector<int32_t> ref = quest_select_pages_ref(srow, pages_for_tokens(lens[b]), budget_pages);
            chosen[br].assign(sel.begin() + br * budget_pages, sel.begin() + br * budget_pages + std::min(cnt[br], budget_pages));
            same = same && cnt[br] == static_cast<int32_t>(ref.size()) && chosen[br] == ref;
          }
        }
        const std::string bp = " budget_pages=" + std::to_string(budget_pages);
        report.expect_true("topk " + variant + bp, same, same ? "selection equals CPU top-k of GPU scores" : "selection differs");
        if (!same) continue;
        if (!per_q) {  // variant fused: estimate + top-k in one launch must select the same pages
          DeviceBuffer<int32_t> fsel(buf.selected.size()), fcnt(buf.selected_count.size());
          quest_estimate_topk({c, buf.q.get(), buf.meta.get(), max_pages, budget_pages, fsel.get(), fcnt.get()}, nullptr);
          SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
          const std::vector<int32_t> fs = fsel.download(), fc = fcnt.download();
          bool fused_same = true;
          for (size_t br = 0; br < chosen.size(); ++br)
            fused_same = fused_same && fc[br] == cnt[br] &&
                         std::equal(chosen[br].begin(), chosen[br].end(), fs.begin() + br * budget_pages);
          report.expect_true("fused estimate+topk " + variant + bp, fused_same,
                             fused_same ? "selection equals the two-launch selection" : "selection differs");
        }
        for (int splits : {1, 3}) {
          fill_nan_device(buf.out.get(), buf.out.size());
          run_decode(c, buf, per_q, budget_pages, splits, scale, nullptr);
          SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
          const std::vector<float> out_gpu = download_bf16_as_float(buf.out.get(), buf.out.size());
          std::vector<float> ref(q.size());
          for (int b = 0; b < B; ++b) {
            paged_decode_subset_ref(q.data() + size_t(b) * H * D, cpu_kv, table_of(b), lens[b], H, scale, per_q,
                                    [&](int r) { return std::span<const int32_t>(chosen[size_t(b) * rows + r]); },
                                    ref.data() + size_t(b) * H * D);
            if (budget_pages == max_pages) {  // every page selected: must equal dense attention
              const std::vector<float> kd = host.gather_k(b), vd = host.gather_v(b);
              std::vector<float> dense(size_t(H) * D);
              dense_attention_ref({q.data() + size_t(b) * H * D, kd.data(), vd.data(), 1, lens[b], H, G, D, scale},
                                  full_mask(), dense.data(), nullptr);
              std::copy(dense.begin(), dense.end(), ref.begin() + size_t(b) * H * D);
            }
          }
          report.expect_close("decode " + variant + bp + " splits=" + std::to_string(splits), out_gpu, ref, kBf16RelTol);
        }
        if (!per_q) {  // variant tc: dense mma.sync decode over per-(sequence, KV head) page lists
          TcLists tc;
          make_tc_lists(c, buf, lens, budget_pages, tc, nullptr);
          fill_nan_device(buf.out.get(), buf.out.size());
          const DecodeRunner runner(plan_decode(tc.host_vlens, G, current_device_sm_count()), kHeads);
          runner.run(tc_decode_args(c, buf, tc, scale), nullptr);
          SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
          std::vector<float> ref(q.size());
          for (int b = 0; b < B; ++b)
            paged_decode_subset_ref(q.data() + size_t(b) * H * D, cpu_kv, table_of(b), lens[b], H, scale, false,
                                    [&](int r) { return std::span<const int32_t>(chosen[size_t(b) * rows + r]); },
                                    ref.data() + size_t(b) * H * D);
          report.expect_close("decode tc " + variant + bp, download_bf16_as_float(buf.out.get(), buf.out.size()), ref,
                              kBf16RelTol);
        }
      }
    }
  }
  return report.failures();
}

ProfileRow quest_row(const std::string& kernel, const std::string& variant, int B, int ctx, int budget,
                     const AttentionHeads& h) {
  ProfileRow row;
  row.kernel = kernel;
  row.variant = variant;
  row.batch = B;
  row.ctx = ctx;
  row.q_len = 1;
  row.heads = h.num_q_heads;
  row.kv_heads = h.num_kv_heads;
  row.head_dim = h.head_dim;
  row.page_size = kPageSize;
  row.budget = budget;
  return row;
}

// A stream's work captured once into a CUDA graph and replayed with one launch (the Quest
// step: fused select, sparse decode, merge). The captured work must not allocate.
class CapturedStep {
 public:
  template <class Enqueue>
  explicit CapturedStep(Enqueue&& enqueue) {
    SERVESIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    SERVESIM_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    enqueue(stream_);
    SERVESIM_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
    SERVESIM_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;
  ~CapturedStep() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  void launch(cudaStream_t s) const { SERVESIM_CUDA_CHECK(cudaGraphLaunch(exec_, s)); }

 private:
  cudaStream_t stream_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// One head shape's grid. `model` names the shape (as in the decode rows) and goes to params.
struct QuestShape {
  const char* model;
  AttentionHeads heads;
  std::vector<int> ctxs, budgets, batch_sizes;
  int64_t max_tokens;
};

void bench_quest_shape(const BenchOptions& opts, ProfileWriter& out, GpuTimer& timer, int sms, const QuestShape& shape) {
  const AttentionHeads& hs = shape.heads;
  const std::vector<int>& ctxs = shape.ctxs;
  const std::vector<int>& budgets = shape.budgets;
  const int64_t max_tokens = shape.max_tokens;
  const int H = hs.num_q_heads, G = hs.num_kv_heads, D = hs.head_dim;
  const float scale = hs.default_scale();
  const std::string model = shape.model;
  auto quest_row = [&](const std::string& kernel, const std::string& variant, int B, int ctx, int budget) {
    ProfileRow row = sparse::quest_row(kernel, variant, B, ctx, budget, hs);
    row.params = "model=" + model;
    return row;
  };
  KvPagePool pool;
  pool.reserve(max_tokens / kPageSize + 64, G, D, opts.seed);
  QuestBuffers buf;
  buf.meta.resize(size_t(pool.num_pages()) * G * 2 * D);
  DeviceBuffer<int32_t> d_new;
  for (int B : shape.batch_sizes) {
    for (int ctx : ctxs) {
      if (int64_t{B} * ctx > max_tokens) continue;
      if (!bench_admit(opts, "quest " + model + " B=" + std::to_string(B) + " ctx=" + std::to_string(ctx) + " (metadata, dense, estimate)"))
        continue;
      const std::vector<int32_t> lens(B, ctx);
      const DevicePageTable table = pool.draw_table(lens, derive_seed(opts.seed, uint64_t(B) * 1000003 + ctx));
      const QuestCache c = cache_of(pool.k(), pool.v(), table, table.kv_lens.get(), hs);
      const int pages = pages_for_tokens(ctx);
      buf.q.resize(size_t(B) * H * D);
      fill_bf16_uniform_device(buf.q.get(), buf.q.size(), derive_seed(opts.seed, 7), -1.0f, 1.0f);
      buf.out.resize(buf.q.size());
      // Metadata of the whole context (untimed), then the timed decode-step update.
      d_new.upload(lens);
      quest_update_metadata({c, d_new.get(), pages, buf.meta.get()}, nullptr);
      d_new.upload(std::vector<int32_t>(B, 1));
      {
        ProfileRow row = quest_row("quest_metadata", "decode_step", B, ctx, -1);
        fill_timing(row, timer.measure(opts, [&](cudaStream_t s) { quest_update_metadata({c, d_new.get(), 1, buf.meta.get()}, s); }));
        row.bytes = double(B) * G * D * 2 * (kPageSize + 4);  // worst case: the page's keys and its bounds
        out.write_row(row);
      }
      // Dense baseline on the same cache and queries.
      TimingStats dense{};
      if (decode_supports(hs)) {
        DecodeRunner runner(plan_decode(lens, G, sms), hs);
        DecodeArgs args{buf.q.get(), pool.k(), pool.v(), table.view(), hs, scale, buf.out.get(), nullptr};
        dense = timer.measure(opts, [&](cudaStream_t s) { runner.run(args, s); });
        ProfileRow row = quest_row("quest_dense_decode", "splitkv", B, ctx, -1);
        fill_timing(row, dense);
        row.bytes = double(B) * ctx * G * D * 2 * 2;
        row.flops = 4.0 * B * ctx * H * D;
        out.write_row(row);
      }
      for (bool per_q : {false, true}) {
        const int rows = per_q ? H : G;
        const std::string variant = per_q ? "qhead" : "kvhead";
        buf.scores.resize(size_t(B) * rows * pages);
        const QuestEstimateArgs est{c, buf.q.get(), buf.meta.get(), per_q, pages, buf.scores.get()};
        ProfileRow erow = quest_row("quest_estimate", variant, B, ctx, -1);
        fill_timing(erow, timer.measure(opts, [&](cudaStream_t s) { quest_estimate(est, s); }));
        erow.bytes = double(B) * pages * G * 2 * D * 2 + double(B) * rows * pages * 4;
        erow.flops = 4.0 * B * pages * H * D;
        out.write_row(erow);
        for (int budget : budgets) {
          if (per_q && budget != 2048) continue;  // per-query-head selection: one budget suffices
          if (!bench_admit(opts, "quest " + model + " " + variant + " B=" + std::to_string(B) + " ctx=" + std::to_string(ctx) +
                                     " budget=" + std::to_string(budget)))
            continue;
          const int bp = static_cast<int>(quest_budget_pages(budget));
          buf.selected.resize(size_t(B) * rows * bp);
          buf.selected_count.resize(size_t(B) * rows);
          const QuestTopkArgs topk{table.kv_lens.get(), buf.scores.get(), B, rows, pages, bp, buf.selected.get(),
                                   buf.selected_count.get()};
          const int splits = quest_decode_splits(B, rows, bp, sms);
          const double sel_tokens = double(std::min(bp, pages)) * kPageSize;
          const std::string params = "model=" + model + ";splits=" + std::to_string(splits);
          ProfileRow trow = quest_row("quest_topk", variant, B, ctx, budget);
          fill_timing(trow, timer.measure(opts, [&](cudaStream_t s) { quest_topk(topk, s); }));
          trow.bytes = double(B) * rows * (pages * 4.0 + bp * 4.0);
          out.write_row(trow);
          ProfileRow drow = quest_row("quest_decode", variant, B, ctx, budget);
          drow.params = params;
          fill_timing(drow, timer.measure(opts, [&](cudaStream_t s) { run_decode(c, buf, per_q, bp, splits, scale, s); }));
          drow.bytes = double(B) * rows * sel_tokens * D * 2 * 2;
          drow.flops = 4.0 * B * H * sel_tokens * D;
          out.write_row(drow);
          ProfileRow row = quest_row("quest_e2e", variant, B, ctx, budget);
          row.params = params;
          const TimingStats e2e = timer.measure(opts, [&](cudaStream_t s) {
            quest_estimate(est, s);
            quest_topk(topk, s);
            run_decode(c, buf, per_q, bp, splits, scale, s);
          });
          fill_timing(row, e2e);
          row.bytes = erow.bytes + trow.bytes + drow.bytes;
          row.flops = erow.flops + drow.flops;
          out.write_row(row);
          if (!per_q && pages <= kQuestSelectMaxPages) {
            // Variant fused: estimate + top-k in one launch, then the same sparse decode; and
            // that step captured once as a CUDA graph and replayed (one launch per step).
            const QuestSelectArgs sel{c, buf.q.get(), buf.meta.get(), pages, bp, buf.selected.get(),
                                      buf.selected_count.get()};
            ProfileRow srow = quest_row("quest_select", "fused", B, ctx, budget);
            fill_timing(srow, timer.measure(opts, [&](cudaStream_t s) { quest_estimate_topk(sel, s); }));
            srow.bytes = double(B) * pages * G * 2 * D * 2 + double(B) * rows * bp * 4.0;
            srow.flops = erow.flops;
            out.write_row(srow);
            auto step = [&](cudaStream_t s) {
              quest_estimate_topk(sel, s);
              run_decode(c, buf, false, bp, splits, scale, s);  // buffers already sized: no allocation
            };
            ProfileRow frow = quest_row("quest_e2e", "fused", B, ctx, budget);
            frow.params = params;
            fill_timing(frow, timer.measure(opts, step));
            frow.bytes = srow.bytes + drow.bytes;
            frow.flops = srow.flops + drow.flops;
            out.write_row(frow);
            const CapturedStep graph(step);
            ProfileRow grow = quest_row("quest_e2e", "fused_graph", B, ctx, budget);
            grow.params = params;
            fill_timing(grow, timer.measure(opts, [&](cudaStream_t s) { graph.launch(s); }));
            grow.bytes = frow.bytes;
            grow.flops = frow.flops;
            out.write_row(grow);
            std::printf("  quest %s fused B=%d ctx=%d budget=%d: select %.1f, e2e %.1f, graph %.1f us\n", model.c_str(), B,
                        ctx, budget, srow.median_us, frow.median_us, grow.median_us);
            // Variant tc: page lists + the dense tensor-core decode over them (its own split plan).
            TcLists tc;
            make_tc_lists(c, buf, lens, bp, tc, nullptr);
            const DecodeRunner tc_runner(plan_decode(tc.host_vlens, G, sms), hs);
            const DecodeArgs tc_args = tc_decode_args(c, buf, tc, scale);
            ProfileRow trow_tc = quest_row("quest_decode", "tc", B, ctx, budget);
            trow_tc.params = "model=" + model;
            fill_timing(trow_tc, timer.measure(opts, [&](cudaStream_t s) {
                          quest_page_lists({c, buf.selected.get(), bp, tc.lists.get(), tc.vlens.get()}, s);
                          tc_runner.run(tc_args, s);
                        }));
            trow_tc.bytes = drow.bytes;
            trow_tc.flops = drow.flops;
            out.write_row(trow_tc);
            ProfileRow erow_tc = quest_row("quest_e2e", "fused_tc", B, ctx, budget);
            erow_tc.params = "model=" + model;
            fill_timing(erow_tc, timer.measure(opts, [&](cudaStream_t s) {
                          quest_estimate_topk(sel, s);
                          quest_page_lists({c, buf.selected.get(), bp, tc.lists.get(), tc.vlens.get()}, s);
                          tc_runner.run(tc_args, s);
                        }));
            erow_tc.bytes = srow.bytes + drow.bytes;
            erow_tc.flops = srow.flops + drow.flops;
            out.write_row(erow_tc);
            std::printf("  quest %s tc B=%d ctx=%d budget=%d: decode %.1f, fused e2e %.1f us\n", model.c_str(), B, ctx,
                        budget, trow_tc.median_us, erow_tc.median_us);
          }
          std::printf("  quest %s %s B=%d ctx=%d budget=%d: estimate %.1f + topk %.1f + decode %.1f = %.1f us"
                      " (dense %.1f us, %.2fx)\n", model.c_str(), variant.c_str(), B, ctx, budget, erow.median_us, trow.median_us,
                      drow.median_us, e2e.median_us, dense.median_us, dense.median_us / e2e.median_us);
          std::fflush(stdout);
        }
      }
    }
  }
}

void bench_quest(const BenchOptions& opts, ProfileWriter& out) {
  GpuTimer timer;
  const int sms = current_device_sm_count();
  if (opts.quick) {
    bench_quest_shape(opts, out, timer, sms, {"llama3-8b", kHeads, {4096, 32768}, {2048}, {1}, 65536});
    return;
  }
  bench_quest_shape(opts, out, timer, sms,
                    {"llama3-8b", kHeads, {4096, 8192, 16384, 32768, 65536, 131072}, {256, 512, 1024, 2048, 4096},
                     {1, 8, 32}, int64_t{1} << 20});
  // The other per-GPU head shapes of the shipped models: 70B at TP 4 and TP 2, and the
  // MHA shape of llama-2-7b (Quest's own setting). A smaller grid around the 32K / 2048 anchor.
  const std::vector<int> ctxs = {8192, 32768, 131072}, budgets = {1024, 2048, 4096}, batches = {1, 8};
  bench_quest_shape(opts, out, timer, sms, {"llama3-70b-tp4", {16, 2, 128}, ctxs, budgets, batches, int64_t{1} << 20});
  bench_quest_shape(opts, out, timer, sms, {"llama3-70b-tp2", {32, 4, 128}, ctxs, budgets, batches, int64_t{1} << 20});
  bench_quest_shape(opts, out, timer, sms,
                    {"llama2-7b", {32, 32, 128}, {4096, 8192, 32768}, budgets, batches, int64_t{1} << 18});
}

}  // namespace
}  // namespace servesim::kernels::sparse

SERVESIM_REGISTER_KERNEL_FAMILY(quest, {.name = "quest",
                                        .description = "Quest: page bounds, criticality estimate, top-k pages, sparse paged decode",
                                        .check = servesim::kernels::sparse::check_quest,
                                        .bench = servesim::kernels::sparse::bench_quest,
                                        .order = 100});
