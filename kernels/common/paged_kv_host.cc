#include "kernels/common/paged_kv_host.h"

#include <algorithm>
#include <numeric>

#include "kernels/common/host_util.h"

namespace servesim::kernels {

namespace {

int64_t slot_offset(const HostPagedKv& kv, int seq, int token, int kv_head, int d) {
  const int32_t page = kv.page_indices[kv.page_indptr[seq] + token / kPageSize];
  return kv_cache_offset(page, kv_head, token % kPageSize, d, kv.num_kv_heads, kv.head_dim);
}

std::vector<float> gather(const HostPagedKv& kv, const std::vector<uint16_t>& bits, int seq) {
  const int len = kv.kv_lens[seq];
  std::vector<float> out(static_cast<size_t>(len) * kv.num_kv_heads * kv.head_dim);
  size_t i = 0;
  for (int t = 0; t < len; ++t)
    for (int h = 0; h < kv.num_kv_heads; ++h)
      for (int d = 0; d < kv.head_dim; ++d) out[i++] = bf16_bits_to_float(bits[slot_offset(kv, seq, t, h, d)]);
  return out;
}

}  // namespace

float HostPagedKv::k(int seq, int token, int kv_head, int d) const {
  return bf16_bits_to_float(k_bits[slot_offset(*this, seq, token, kv_head, d)]);
}
float HostPagedKv::v(int seq, int token, int kv_head, int d) const {
  return bf16_bits_to_float(v_bits[slot_offset(*this, seq, token, kv_head, d)]);
}
std::vector<float> HostPagedKv::gather_k(int seq) const { return gather(*this, k_bits, seq); }
std::vector<float> HostPagedKv::gather_v(int seq) const { return gather(*this, v_bits, seq); }

int64_t HostPagedKv::total_tokens() const {
  return std::accumulate(kv_lens.begin(), kv_lens.end(), int64_t{0});
}

HostPagedKv make_random_paged_kv(const std::vector<int>& kv_lens, int num_kv_heads, int head_dim,
                                 uint64_t data_seed, const PagedKvOptions& options) {
  HostPagedKv kv;
  kv.num_kv_heads = num_kv_heads;
  kv.head_dim = head_dim;
  kv.kv_lens.assign(kv_lens.begin(), kv_lens.end());
  kv.page_indptr.assign(1, 0);
  for (int len : kv_lens) kv.page_indptr.push_back(kv.page_indptr.back() + pages_for_tokens(len));
  const int used_pages = kv.page_indptr.back();
  kv.num_pages = used_pages + options.spare_pages;

  std::vector<int32_t> ids(kv.num_pages);
  std::iota(ids.begin(), ids.end(), 0);
  if (options.shuffle_pages) {
    SplitMix64 g(options.page_seed);
    for (int i = kv.num_pages - 1; i > 0; --i) std::swap(ids[i], ids[g.uniform_int(0, i)]);
  }
  kv.page_indices.assign(ids.begin(), ids.begin() + used_pages);

  const size_t elems = static_cast<size_t>(kv.num_pages) * num_kv_heads * kPageSize * head_dim;
  kv.k_bits.assign(elems, kBf16QuietNaN);
  kv.v_bits.assign(elems, kBf16QuietNaN);
  for (int s = 0; s < kv.batch(); ++s) {
    for (int t = 0; t < kv_lens[s]; ++t) {
      for (int h = 0; h < num_kv_heads; ++h) {
        // One stream per (sequence, token, head): independent of the page permutation.
        const uint64_t stream = (static_cast<uint64_t>(s) << 40) ^ (static_cast<uint64_t>(t) << 8) ^ h;
        SplitMix64 g(derive_seed(data_seed, stream));
        const int64_t base = slot_offset(kv, s, t, h, 0);
        for (int d = 0; d < head_dim; ++d) {
          kv.k_bits[base + d] = float_to_bf16_bits(static_cast<float>(g.uniform(options.lo, options.hi)));
          kv.v_bits[base + d] = float_to_bf16_bits(static_cast<float>(g.uniform(options.lo, options.hi)));
        }
      }
    }
  }
  return kv;
}

}  // namespace servesim::kernels
