// Errors at the edges (YAML, trace files, CSV, CUDA): an exception carrying a
// complete human message that already names the file, line and field. Only
// main() catches these and exits non-zero; library code never exits.
//
// SIM_CHECK is for engine invariants (bugs, not bad input): it throws
// InvariantViolation naming the source file/line and the failed condition.
#pragma once
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace servesim {

// Bad input: the message is meant for the user and names where the problem is.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& msg) : std::runtime_error(msg) {}
};

// A broken engine invariant: a bug in servesim (or a policy), never user error.
class InvariantViolation : public std::logic_error {
 public:
  explicit InvariantViolation(const std::string& msg) : std::logic_error(msg) {}
};

// "file:line: message", or "file: message" when line is unknown (<= 0).
inline std::string located(const std::string& file, long line, const std::string& msg) {
  if (line > 0) return fmt::format("{}:{}: {}", file, line, msg);
  return fmt::format("{}: {}", file, msg);
}

}  // namespace servesim

#define SIM_CHECK(cond, ...)                                                                  \
  do {                                                                                        \
    if (!(cond)) [[unlikely]] {                                                               \
      throw ::servesim::InvariantViolation(fmt::format("{}:{}: invariant failed: {}: {}",     \
                                                       __FILE__, __LINE__, #cond,             \
                                                       fmt::format(__VA_ARGS__)));            \
    }                                                                                         \
  } while (0)
