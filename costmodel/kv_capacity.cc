#include "costmodel/kv_capacity.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/error.h"

namespace servesim {

KvCapacity compute_kv_capacity(const ModelSpec& m, const HardwareSpec& hw, int tp, double utilization,
                               double activation_reserve_gb, std::int64_t page_size) {
  KvCapacity c;
  c.page_size = page_size;
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
  c.pages = static_cast<std::int64_t>(std::floor(free_gb * 1e9 / page_bytes));
  c.kv_gb = c.pages * page_bytes / 1e9;
  if (c.pages < 1)
    throw InputError(fmt::format("model '{}' on {} (tp={}) leaves no room for a single KV page", m.name, hw.name, tp));
  return c;
}

}  // namespace servesim
