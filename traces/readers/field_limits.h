// The documented range of every number a trace field may hold (docs/traces.md
// "Field ranges"). Readers check these where they parse a field and throw
// RowError naming it; downstream code (rate_scale, spreading, the engine's
// time arithmetic) relies on them to stay far from int64 overflow:
// kMaxTraceTimeNs + kMaxTraceTimeNs still fits in an int64.
#pragma once
#include <cstdint>

namespace servesim {

// Prompt and output tokens of one request: 1 .. 10^9.
inline constexpr std::int64_t kMaxTraceTokens = 1'000'000'000;
// Arrival and think times: 0 .. 4*10^18 ns (about 126 years, so UNIX-epoch
// nanoseconds until 2096 fit); seconds fields up to 4*10^9 s, Mooncake ms up
// to 4*10^12. Azure dates: years 1970 .. 2095.
inline constexpr std::int64_t kMaxTraceTimeNs = 4'000'000'000'000'000'000;
inline constexpr double kMaxTraceTimeS = 4e9;
inline constexpr int kMinTraceYear = 1970;
inline constexpr int kMaxTraceYear = 2095;
// Prefix block size (tokens per block): 1 .. 2^20.
inline constexpr std::int64_t kMaxTraceBlockSize = 1 << 20;
// turn, dependents: 0 .. 2^31-1; category: -2^31 .. 2^31-1 (int32 fields).
inline constexpr std::int64_t kMaxTraceInt32 = 2'147'483'647;

// Trace workload settings (docs/configuration.md): rate_scale 10^-6 .. 10^6;
// window.start_s/end_s 0 .. kMaxTraceTimeS; spread.bucket_s (0, 1 day].
inline constexpr double kMinRateScale = 1e-6;
inline constexpr double kMaxRateScale = 1e6;
inline constexpr double kMaxSpreadBucketS = 86400;

}  // namespace servesim
