// servesim: the command-line program. Each command group lives in its own
// cmd_*.cc file (see commands.h). Only this file exits: library code throws
// InputError (bad input, exit 2) or InvariantViolation (a servesim bug, exit 3).
// Exit codes (docs/failure.md): 0 success (and --help/--version); 2 bad
// input: a command-line usage error (CLI11's message), an InputError, or a
// filesystem error (its message names the path); 3 internal error; 1 any
// other library exception (unexpected: please report it too).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "sim/cli/commands.h"
#include "sim/core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"servesim: a discrete-event simulator of LLM serving clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "servesim 0.1.0");
  servesim::cli::add_run_command(app);
  servesim::cli::add_trace_commands(app);
  servesim::cli::add_sweep_commands(app);
  servesim::cli::add_plot_command(app);
  servesim::cli::add_compare_command(app);
  servesim::cli::add_calibrate_commands(app);
  servesim::cli::add_ltr_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the usage error
    return code == 0 ? 0 : 2;
  } catch (const servesim::InputError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "servesim: error: {}\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "servesim: error: {}\n", e.what());
    return 2;
  } catch (const servesim::InvariantViolation& e) {
    std::fflush(stdout);
    fmt::print(stderr, "servesim: internal error (please report): {}\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "servesim: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
