// ProgressBar: progress of a long run on stderr — a redrawn bar when stderr is
// a terminal, nothing otherwise (logs stay clean). Never writes to stdout.
// Wall-clock throttled: at most ~5 redraws per second.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>

#include "sim/core/time.h"

namespace servesim {

class ProgressBar {
 public:
  explicit ProgressBar(std::optional<std::uint64_t> total);
  void update(Time sim_now, std::uint64_t reported, bool final = false);

 private:
  std::optional<std::uint64_t> total_;
  bool tty_;
  std::chrono::steady_clock::time_point last_;
  bool drawn_ = false;
};

}  // namespace servesim
