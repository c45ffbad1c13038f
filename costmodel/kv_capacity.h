// KV capacity of one worker (a TP group of `tp` GPUs), computed from the model
// and hardware — never a hand-typed number:
//   pages = floor((tp × memory × utilization − weights − tp × activation_reserve)
//                 / (kv_bytes_per_token × page_size))
// Throws InputError (message without location; the caller adds it) when the
// weights do not fit or no page is left.
#pragma once
#include <cstdint>
#include <string>

#include "costmodel/hardware_spec.h"
#include "costmodel/model_spec.h"

namespace servesim {

struct KvCapacity {
  std::int64_t pages = 0;
  std::int64_t page_size = 16;
  double weight_gb_per_gpu = 0;
  double kv_gb = 0;  // KV pool of the whole worker
  std::int64_t tokens() const { return pages * page_size; }
};

KvCapacity compute_kv_capacity(const ModelSpec& m, const HardwareSpec& hw, int tp, double utilization,
                               double activation_reserve_gb, std::int64_t page_size);

}  // namespace servesim
