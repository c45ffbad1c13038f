// The GPU replay's small kernels (kernels/replay/replay_kernels.cuh) run in the CPU warp
// emulator against the tiny model's references (kernels/replay/tiny_model.h): CI's check
// of their indexing and reductions without a GPU.
#include <doctest/doctest.h>

#include <cmath>

#include "kernels/common/host_util.h"
#include "kernels/emu/warp_emu.h"
#include "kernels/replay/replay_kernels.cuh"
#include "kernels/replay/tiny_model.h"

using namespace servesim::kernels;
using namespace servesim::kernels::replay_detail;

namespace {

std::vector<__nv_bfloat16> bf16(const std::vector<float>& v) {
  std::vector<__nv_bfloat16> out;
  for (float x : v) out.push_back(__float2bfloat16(x));
  return out;
}
std::vector<float> floats(const std::vector<__nv_bfloat16>& v) {
  std::vector<float> out;
  for (auto x : v) out.push_back(__bfloat162float(x));
  return out;
}
void run(unsigned blocks, const std::function<void()>& body, int threads = kReplayThreads) {
  servesim_emu::launch({blocks, 1, 1}, {unsigned(threads), 1, 1}, 0, body);
}

}  // namespace

TEST_CASE("emu replay kernels: fused add + RMSNorm matches the reference, first layer copies x") {
  const int rows = 2, h = 1300;  // h not a multiple of the block: the stride loop's tail
  const std::vector<float> x = random_uniform(rows * h, 1), res = random_uniform(rows * h, 2), w = random_uniform(h, 3, 0.5f, 1.5f);
  auto dx = bf16(x), dres = bf16(res), dw = bf16(w);
  std::vector<__nv_bfloat16> out(rows * h);
  run(rows, [&] { add_rmsnorm_kernel(dx.data(), dres.data(), dw.data(), out.data(), h, 1e-5f, 1); }, kWideThreads);
  std::vector<float> sum(rows * h), ref;
  for (int i = 0; i < rows * h; ++i) sum[i] = round_to_bf16(res[i] + x[i]);
  rms_norm_ref(sum, w, rows, h, &ref);
  CHECK(relative_error(floats(dres), sum) == 0);
  CHECK(relative_error(floats(out), ref) < 1e-2);
  auto dres2 = bf16(res);
  run(rows, [&] { add_rmsnorm_kernel(dx.data(), dres2.data(), dw.data(), out.data(), h, 1e-5f, 0); }, kWideThreads);
  CHECK(relative_error(floats(dres2), x) == 0);
}

TEST_CASE("emu replay kernels: RoPE writes rotated q contiguous and rotates k in place, KV append lands in its page slot") {
  const int hq = 4, hk = 2, d = 64, rows = 2, n = (hq + 2 * hk) * d;
  const std::vector<float> qkv = random_uniform(rows * n, 4);
  auto dqkv = bf16(qkv);
  std::vector<int32_t> pos = {0, 1234};
  std::vector<__nv_bfloat16> q(rows * hq * d);
  // 2 chunks per row of 64-thread blocks: (hq + hk)·d/2 = 192 pairs, each thread 1 or 2 of them.
  run(rows * 2, [&] { rope_kernel(dqkv.data(), pos.data(), q.data(), hq, hk, d, 500000.0f, 2); }, 64);
  std::vector<float> ref = qkv;
  for (int r = 0; r < rows; ++r) {
    rope_ref(ref.data() + r * n, hq, d, pos[r]);
    rope_ref(ref.data() + r * n + hq * d, hk, d, pos[r]);
  }
  std::vector<float> q_ref, k_ref, k_out, v_out, v_ref;
  const std::vector<float> got = floats(dqkv), gq = floats(q);
  for (int r = 0; r < rows; ++r) {
    q_ref.insert(q_ref.end(), ref.begin() + r * n, ref.begin() + r * n + hq * d);
    k_ref.insert(k_ref.end(), ref.begin() + r * n + hq * d, ref.begin() + r * n + (hq + hk) * d);
    k_out.insert(k_out.end(), got.begin() + r * n + hq * d, got.begin() + r * n + (hq + hk) * d);
    v_ref.insert(v_ref.end(), qkv.begin() + r * n + (hq + hk) * d, qkv.begin() + (r + 1) * n);
    v_out.insert(v_out.end(), got.begin() + r * n + (hq + hk) * d, got.begin() + (r + 1) * n);
  }
  CHECK(relative_error(gq, q_ref) < 1e-2);
  CHECK(relative_error(k_out, k_ref) < 1e-2);
  CHECK(relative_error(v_out, v_ref) == 0);  // v untouched
  // KV append: token 0 -> page 3 slot 5, token 1 -> page 0 slot 15.
  std::vector<int64_t> slot = {3 * kPageSize + 5, 15};
  std::vector<__nv_bfloat16> kc(4 * hk * kPageSize * d, __float2bfloat16(0)), vc = kc;
  run(rows, [&] { kv_append_kernel(dqkv.data(), slot.data(), kc.data(), vc.data(), hq, hk, d); });
  for (int hd = 0; hd < hk; ++hd)
    for (int i = 0; i < d; i += 7) {
      CHECK(__bfloat162float(kc[kv_cache_offset(3, hd, 5, i, hk, d)]) == got[hq * d + hd * d + i]);
      CHECK(__bfloat162float(vc[kv_cache_offset(0, hd, 15, i, hk, d)]) == got[n + (hq + hk) * d + hd * d + i]);
    }
}

TEST_CASE("emu replay kernels: embedding gather and row gather") {
  const int vocab = 40, h = 8;
  const std::vector<float> table = random_uniform(vocab * h, 5);
  auto dt = bf16(table);
  std::vector<int32_t> toks = {7, 39, 0};
  std::vector<__nv_bfloat16> emb(3 * h);
  run(3, [&] { embedding_kernel(toks.data(), dt.data(), emb.data(), h); });
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < h; ++i) CHECK(__bfloat162float(emb[r * h + i]) == table[toks[r] * h + i]);
  std::vector<int32_t> rows = {2, 0};
  std::vector<__nv_bfloat16> gathered(2 * h);
  run(2, [&] { gather_rows_kernel(emb.data(), rows.data(), gathered.data(), h); });
  CHECK(__bfloat162float(gathered[0]) == table[toks[2] * h]);
  CHECK(__bfloat162float(gathered[h]) == table[toks[0] * h]);
}

TEST_CASE("emu replay kernels: SiLU·mul and greedy argmax") {
  const int inter = 600;  // 3 chunks of 256: the last one partly idle
  const int chunks = replay_row_chunks(inter);
  CHECK(chunks == 3);
  const std::vector<float> gu = random_uniform(2 * 2 * inter, 6, -4, 4);
  auto dgu = bf16(gu);
  std::vector<__nv_bfloat16> act(2 * inter);
  run(2 * chunks, [&] { silu_mul_kernel(dgu.data(), act.data(), inter, chunks); });
  std::vector<float> ref;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < inter; ++i)
      ref.push_back(round_to_bf16(round_to_bf16(silu_ref(gu[r * 2 * inter + i])) * gu[r * 2 * inter + inter + i]));
  CHECK(relative_error(floats(act), ref) < 1e-2);
  const int vocab = 2100;  // over two strides of the 1,024-thread block
  std::vector<float> logits(2 * vocab, 0.0f);
  logits[123] = 5;
  logits[1147] = 5;  // a tie across threads: the lower id wins
  logits[vocab + 2099] = 1;
  auto dl = bf16(logits);
  std::vector<int32_t> sampled(2, -1);
  run(2, [&] { argmax_kernel(dl.data(), vocab, sampled.data()); }, kWideThreads);
  CHECK(sampled == std::vector<int32_t>{123, 2099});
}
