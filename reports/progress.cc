#include "reports/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace servesim {

ProgressBar::ProgressBar(std::optional<std::uint64_t> total)
    : total_(total), tty_(isatty(STDERR_FILENO) != 0), last_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(Time sim_now, std::uint64_t reported, bool final) {
  if (!tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (!final && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  std::string line;
  if (total_ && *total_ > 0) {
    double f = std::min(1.0, static_cast<double>(reported) / static_cast<double>(*total_));
    int filled = static_cast<int>(f * 30);
    line = fmt::format("\r[{}{}] {:5.1f}%  {}/{} requests  sim {:.1f} s", std::string(filled, '#'),
                       std::string(30 - filled, ' '), 100 * f, reported, *total_, time_to_seconds(sim_now));
  } else {
    line = fmt::format("\r{} requests reported  sim {:.1f} s", reported, time_to_seconds(sim_now));
  }
  std::fputs(line.c_str(), stderr);
  drawn_ = true;
  if (final && drawn_) std::fputs("\n", stderr);
  std::fflush(stderr);
}

}  // namespace servesim
