// The default service weights of VTC's measure of service: w_in per input
// (prompt) token, w_out per output token. The one place these defaults are
// stated: the fairness policies' options (VTC, DLPM, D²LPM) and the report's
// fairness measures (ScenarioConfig::w_in / w_out) initialise from them, and
// every other reader takes the value from a parsed or resolved config.
#pragma once

namespace servesim {

inline constexpr double kDefaultWIn = 1.0;
inline constexpr double kDefaultWOut = 2.0;

}  // namespace servesim
