// BatchingOptions: per-worker continuous-batching budgets. Defaults follow
// production engines (SGLang/vLLM v1 on an H100); each field's comment says
// what raising it costs.
#pragma once
#include <cstdint>

namespace servesim {

enum class BatchMode : std::uint8_t {
  kMixed,         // decode tokens + prefill chunks in one iteration (Sarathi / SGLang / vLLM v1)
  kPrefillFirst,  // an iteration runs prefills only when any can be scheduled, else decodes (vLLM v0)
};

struct BatchingOptions {
  // Tokens one iteration may compute (decode tokens + prefill chunk tokens).
  // Higher: better throughput, longer iterations (worse TPOT for decodes).
  std::int64_t max_batch_tokens = 8192;
  // Most prefill tokens one request may compute in one iteration. A prompt of
  // P tokens alone on a worker takes ceil(P / chunk_size) iterations.
  std::int64_t chunk_size = 8192;
  // Most requests admitted at once (prefilling + decoding).
  std::int64_t max_running = 256;
  // Share of KV capacity that must stay free when admitting a request while
  // others run, so running requests can grow without preemption (vLLM's
  // watermark; SGLang's new_token_ratio plays the same role). Higher: fewer
  // preemptions, fewer concurrent requests.
  double reservation_ratio = 0.02;
  BatchMode mode = BatchMode::kMixed;
  // Speed only, not a scenario key: pure decode steps go through the worker's
  // decode lane (sim/worker.h). false runs the step-by-step passes, which give
  // the same outputs bit for bit (configs/decode_lane_test.cc compares them).
  bool decode_lane = true;
  bool operator==(const BatchingOptions&) const = default;
};

}  // namespace servesim
