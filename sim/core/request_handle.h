// RequestHandle: the engine's slot number of a live request, stable while it
// lives (reused after it is reported). Policies keep it to name a request back
// to the engine (AdmissionContext::preempt); it carries no meaning across runs.
#pragma once
#include <cstdint>

namespace servesim {

using RequestHandle = std::uint32_t;

}  // namespace servesim
