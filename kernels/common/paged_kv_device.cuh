// Paged KV caches on the device (layout: layout.h), for checks and benches of every
// attention family.
//
//  * DevicePagedKv::upload(host): a HostPagedKv (paged_kv_host.h) copied as is, NaN
//    poison in unused slots included: what the checks run on.
//  * KvPagePool + DevicePageTable: benches. One large pool of random bf16 pages is filled
//    once on the device; each measured point draws a page table of distinct, randomly
//    scattered pages from it (as a real paged allocator would hand out), so multi-GiB
//    batches cost no host-side data generation.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

#include "kernels/common/cuda_util.cuh"
#include "kernels/common/layout.h"
#include "kernels/common/paged_kv_host.h"

namespace servesim::kernels {

struct DevicePageTable {
  DeviceBuffer<int32_t> page_indptr, page_indices, kv_lens;
  std::vector<int32_t> host_kv_lens;
  PagedKvView view() const {
    return PagedKvView{static_cast<int>(host_kv_lens.size()), page_indptr.get(), page_indices.get(), kv_lens.get()};
  }
  int64_t total_pages() const { return static_cast<int64_t>(page_indices.size()); }
};

struct DevicePagedKv {
  DeviceBuffer<__nv_bfloat16> k, v;
  DevicePageTable table;
  void upload(const HostPagedKv& host);
};

class KvPagePool {
 public:
  // Sizes the pool for `num_pages` pages of `num_kv_heads` x 16 x head_dim and fills K
  // and V with uniform random bf16 in [-1, 1). Keeps the allocation when it is already
  // large enough (only re-fills when the shape changed).
  void reserve(int64_t num_pages, int num_kv_heads, int head_dim, uint64_t seed);
  int64_t num_pages() const { return num_pages_; }
  // Pages a point of shape (num_kv_heads, head_dim) may keep: all of them when the pool
  // already has that shape, none otherwise (a pool sized for 8 KV heads must not be
  // re-created at the same page count for 32).
  int64_t pages_of_shape(int num_kv_heads, int head_dim) const {
    return num_kv_heads == num_kv_heads_ && head_dim == head_dim_ ? num_pages_ : 0;
  }
  const __nv_bfloat16* k() const { return k_.get(); }
  const __nv_bfloat16* v() const { return v_.get(); }

  // A page table for sequences of the given lengths: distinct pool pages in random order.
  // REQUIRES: sum of pages_for_tokens(len) <= num_pages().
  DevicePageTable draw_table(const std::vector<int32_t>& kv_lens, uint64_t seed) const;

 private:
  DeviceBuffer<__nv_bfloat16> k_, v_;
  int64_t num_pages_ = 0;
  int num_kv_heads_ = 0, head_dim_ = 0;
};

}  // namespace servesim::kernels
