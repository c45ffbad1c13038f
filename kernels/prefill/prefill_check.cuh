// The set-up both prefill families check with (prefill_family.cu,
// prefill_hopper_family.cu): for one case, a random paged KV cache and queries,
// the CPU reference (prefill_ref), and the device buffers a kernel reads and
// writes; poison() fills the outputs with NaN before a launch, expect() checks
// them against the reference.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/bench/check_report.h"
#include "kernels/common/cuda_util.cuh"
#include "kernels/common/host_util.h"
#include "kernels/common/paged_kv_device.cuh"
#include "kernels/prefill/prefill_args.h"
#include "kernels/prefill/prefill_ref.h"

namespace servesim::kernels {

struct PrefillCheckSetup {
  PrefillCheckSetup(const std::vector<int>& kv_lens, const std::vector<int>& q_lens, const AttentionHeads& h,
                    uint64_t seed)
      : heads(h), kv(make_random_paged_kv(kv_lens, h.num_kv_heads, h.head_dim, seed)) {
    for (int l : q_lens) q_indptr.push_back(q_indptr.back() + l);
    rows = static_cast<size_t>(q_indptr.back());
    q = random_uniform(rows * h.num_q_heads * h.head_dim, seed + 1);
    prefill_ref({&kv, &q_indptr, &q, h.num_q_heads, h.default_scale()}, &ref, &ref_lse);
    dkv.upload(kv);
    dq_indptr.upload(q_indptr);
    dq = upload_bf16(to_bf16_bits(q));
    dout.resize(q.size());
    dlse.resize(rows * h.num_q_heads);
  }

  void poison() {
    fill_nan_device(dout.get(), dout.size());
    fill_nan_device(dlse.get(), dlse.size());
  }

  PrefillArgs args() const {
    PrefillArgs a;
    a.q = dq.get();
    a.k_cache = dkv.k.get();
    a.v_cache = dkv.v.get();
    a.kv = dkv.table.view();
    a.q_indptr = dq_indptr.get();
    a.heads = heads;
    a.out = dout.get();
    a.lse = dlse.get();
    return a;
  }

  // Compares the outputs of the last launch (synchronized) with the reference.
  void expect(CheckReport& report, const std::string& name) const {
    report.expect_close(name + " out", download_bf16_as_float(dout.get(), dout.size()), ref, kBf16RelTol);
    report.expect_close(name + " lse", dlse.download(), ref_lse, 1e-3);
  }

  AttentionHeads heads;
  HostPagedKv kv;
  std::vector<int32_t> q_indptr{0};
  size_t rows = 0;
  std::vector<float> q, ref, ref_lse;
  DevicePagedKv dkv;
  DeviceBuffer<int32_t> dq_indptr;
  DeviceBuffer<__nv_bfloat16> dq, dout;
  DeviceBuffer<float> dlse;
};

}  // namespace servesim::kernels
