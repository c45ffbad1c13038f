// KV capacity of one worker (a TP group of `tp` GPUs), computed from the model
// and hardware — never a hand-typed number:
//   pages = floor((tp × memory × utilization − weights − tp × activation_reserve)
//                 / (kv_bytes_per_token × page_size))
// Throws InputError (message without location; the caller adds it) when the
// weights do not fit or no page is left.
//
// metadata_per_page: extra bytes an attention method stores per KV page, as a
// share of the page's own KV bytes (Quest: kv_metadata_share()); a page then
// costs (1 + share) pages' worth of memory.
#pragma once
#include <cstdint>
#include <string>

#include "costmodel/attention_method.h"
#include "costmodel/hardware_spec.h"
#include "costmodel/model_spec.h"

namespace servesim {

struct KvCapacity {
  std::int64_t pages = 0;
  std::int64_t page_size = 16;
  double weight_gb_per_gpu = 0;
  double kv_gb = 0;  // KV pool of the whole worker (metadata excluded)
  double metadata_share = 0;  // extra bytes per page / page KV bytes
  std::int64_t tokens() const { return pages * page_size; }
  bool operator==(const KvCapacity&) const = default;
};

KvCapacity compute_kv_capacity(const ModelSpec& m, const HardwareSpec& hw, int tp, double utilization,
                               double activation_reserve_gb, std::int64_t page_size, double metadata_per_page = 0);

// Extra bytes the selected attention methods store per KV page, as a share of
// the page's KV (each method's registry entry, attention_registry.h; today
// only Quest: (layers − dense_layers) / (layers × page_size)). 0 for none.
double kv_metadata_share(const ModelSpec& m, const AttentionMethods& a, std::int64_t page_size);

}  // namespace servesim
