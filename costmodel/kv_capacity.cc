#include "costmodel/kv_capacity.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "costmodel/attention_registry.h"
#include "sim/core/error.h"

namespace servesim {

KvCapacity compute_kv_capacity(const ModelSpec& m, const HardwareSpec& hw, int tp, double utilization,
                               double activation_reserve_gb, std::int64_t page_size, double metadata_per_page) {
  KvCapacity c;
  c.page_size = page_size;
  c.metadata_share = metadata_per_page;
  const double weights_gb = m.weight_bytes_total() / 1e9;
  c.weight_gb_per_gpu = weights_gb / tp;
  const double usable_per_gpu = hw.memory_gb * utilization - activation_reserve_gb;
  const double free_gb = tp * usable_per_gpu - weights_gb;
  if (c.weight_gb_per_gpu >= usable_per_gpu || free_gb <= 0)
    throw InputError(fmt::format(
        "model '{}' does not fit: {:.1f} GB of weights per GPU (tp={}) but {} has {:.0f} GB × utilization {} − "
        "{} GB activation reserve = {:.1f} GB usable; raise cluster.tp or use a larger GPU",
        m.name, c.weight_gb_per_gpu, tp, hw.name, hw.memory_gb, utilization, activation_reserve_gb, usable_per_gpu));
  const double page_bytes = static_cast<double>(m.kv_bytes_per_token()) * page_size;
  c.pages = static_cast<std::int64_t>(std::floor(free_gb * 1e9 / (page_bytes * (1 + metadata_per_page))));
  c.kv_gb = c.pages * page_bytes / 1e9;
  if (c.pages < 1)
    throw InputError(fmt::format("model '{}' on {} (tp={}) leaves no room for a single KV page", m.name, hw.name, tp));
  return c;
}

double kv_metadata_share(const ModelSpec& m, const AttentionMethods& a, std::int64_t page_size) {
  double share = 0;
  for (const AttentionMethodType* t : selected_methods(a))
    if (t->kv_metadata_share) share += t->kv_metadata_share(m, a, page_size);
  return share;
}

}  // namespace servesim
