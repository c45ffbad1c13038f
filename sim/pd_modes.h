// The two PD choices the engine reads (PdSetup, simulation.h) and the scenario
// parses (PdConfig, configs/scenario_config.h): where a request is prefilled, and
// when its KV moves. Each enum's order is the order of its YAML names in the
// scenario's option table (configs/option_tables.cc, pd_options()).
#pragma once
#include <cstdint>

namespace servesim {

enum class PdDecider : std::uint8_t {
  kAlways,       // prefill on the prefill pool, decode on the decode pool
  kPrefixAware,  // decode worker first; prefill there when its uncached prompt <= threshold_tokens
};
enum class PdStreaming : std::uint8_t {
  kNone,       // the transfer starts after the prefill (hand-off, then reservation)
  kLayerwise,  // reserved when the final prefill iteration starts; the transfer overlaps it
};

}  // namespace servesim
