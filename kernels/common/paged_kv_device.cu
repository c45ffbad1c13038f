#include "kernels/common/paged_kv_device.cuh"

#include <numeric>
#include <stdexcept>

#include "kernels/common/host_util.h"

namespace servesim::kernels {

void DevicePagedKv::upload(const HostPagedKv& host) {
  k = upload_bf16(host.k_bits);
  v = upload_bf16(host.v_bits);
  table.page_indptr.upload(host.page_indptr);
  table.page_indices.upload(host.page_indices);
  table.kv_lens.upload(host.kv_lens);
  table.host_kv_lens = host.kv_lens;
}

void KvPagePool::reserve(int64_t num_pages, int num_kv_heads, int head_dim, uint64_t seed) {
  const size_t elems = size_t(num_pages) * num_kv_heads * kPageSize * head_dim;
  if (num_pages <= num_pages_ && num_kv_heads == num_kv_heads_ && head_dim == head_dim_) return;
  k_.resize(0);  // free first: the pool can be most of the GPU's memory
  v_.resize(0);
  k_.resize(elems);
  v_.resize(elems);
  fill_bf16_uniform_device(k_.get(), elems, derive_seed(seed, 1), -1.0f, 1.0f);
  fill_bf16_uniform_device(v_.get(), elems, derive_seed(seed, 2), -1.0f, 1.0f);
  SERVESIM_CUDA_CHECK(cudaDeviceSynchronize());
  num_pages_ = num_pages;
  num_kv_heads_ = num_kv_heads;
  head_dim_ = head_dim;
}

DevicePageTable KvPagePool::draw_table(const std::vector<int32_t>& kv_lens, uint64_t seed) const {
  std::vector<int32_t> indptr(1, 0);
  for (int32_t len : kv_lens) indptr.push_back(indptr.back() + pages_for_tokens(len));
  if (indptr.back() > num_pages_) throw std::invalid_argument("KvPagePool: batch needs more pages than the pool has");
  // Partial Fisher-Yates: the first indptr.back() entries become a random distinct sample.
  std::vector<int32_t> ids(static_cast<size_t>(num_pages_));
  std::iota(ids.begin(), ids.end(), 0);
  SplitMix64 g(seed);
  for (int32_t i = 0; i < indptr.back(); ++i) std::swap(ids[i], ids[g.uniform_int(i, num_pages_ - 1)]);
  ids.resize(indptr.back());
  DevicePageTable t;
  t.page_indptr.upload(indptr);
  t.page_indices.upload(ids);
  t.kv_lens.upload(kv_lens);
  t.host_kv_lens = kv_lens;
  return t;
}

}  // namespace servesim::kernels
