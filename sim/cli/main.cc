// servesim: the command-line program. Each command group lives in its own
// cmd_*.cc file (see commands.h). Only this file exits: library code throws
// InputError (bad input, exit 2) or InvariantViolation (a servesim bug, exit 3).
// Exit codes (docs/failure.md): 0 success (and --help/--version); 2 bad
// input: a command-line usage error (CLI11's message), an InputError, or a
// filesystem error (its message names the path); 3 internal error; 1 any
// other library exception (unexpected: please report it too). A failed write to
// stdout or stderr (a full disk) is an error too: exit 2, never an abort - the
// messages below are written with stdio, which reports failure instead of throwing.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/cli/commands.h"
#include "sim/core/error.h"
#include "sim/core/huge_page_allocator.h"
#include "sim/core/option_table.h"

namespace {

// Never throws (fmt::print throws on a failed write; a throw inside a catch block ends in
// std::terminate, SIGABRT).
void print_error(const char* prefix, const char* what) noexcept {
  std::fflush(stdout);
  std::fprintf(stderr, "servesim: %s%s\n", prefix, what);
  std::fflush(stderr);
}

using servesim::edit_distance;  // for "did you mean" (sim/core/option_table.h, as the config errors)

// "servesim frobnicate": CLI11 would say "A subcommand is required". Names the word and
// the nearest command instead. Empty when argv[1] is an option or a command.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return {};
  const std::string word = argv[1];
  std::string best;
  size_t best_distance = 0;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(word)) return {};
    const size_t d = edit_distance(word, sub->get_name());
    if (best.empty() || d < best_distance) best = sub->get_name(), best_distance = d;
  }
  std::string message = "unknown command '" + word + "'";
  if (!best.empty() && best_distance <= std::max<size_t>(2, best.size() / 3)) message += "; did you mean '" + best + "'?";
  return message + " (servesim --help lists the commands)";
}

// "servesim run x.yaml --repeats 3": CLI11 would say "The following arguments were not
// expected". Names the first unknown --option of the command and the nearest known one.
// Empty when every --option is known (the parse failed for another reason).
std::string unknown_option(CLI::App& app, int argc, char** argv) {
  if (argc < 2) return {};
  CLI::App* cmd = nullptr;
  int i = 1;
  for (CLI::App* at = &app; i < argc && argv[i][0] != '-'; ++i) {
    CLI::App* sub = nullptr;
    for (CLI::App* s : at->get_subcommands([](const CLI::App*) { return true; }))
      if (s->check_name(argv[i])) sub = s;
    if (!sub) break;
    cmd = at = sub;
  }
  if (!cmd) return {};
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd->get_options([](const CLI::Option*) { return true; }))
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  names.push_back("--help");
  for (int k = i; k < argc; ++k) {
    std::string word = argv[k];
    if (word == "--") break;
    if (word.rfind("--", 0) != 0) continue;
    word = word.substr(0, word.find('='));
    if (std::find(names.begin(), names.end(), word) != names.end()) continue;
    std::string best;
    size_t best_distance = 0;
    for (const auto& n : names) {
      const size_t d = edit_distance(word, n);
      if (best.empty() || d < best_distance) best = n, best_distance = d;
    }
    std::string message = fmt::format("unknown option '{}' for '{}'", word, cmd->get_name());
    if (!best.empty() && best_distance <= std::max<size_t>(2, best.size() / 3)) message += "; did you mean '" + best + "'?";
    return message + fmt::format(" (servesim {} --help lists its options)", cmd->get_name());
  }
  return {};
}

// Everything written to stdout must have reached it: a full disk turns exit 0 into 2.
int checked_exit(int code) noexcept {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    std::fprintf(stderr, "servesim: error: writing standard output: %s\n", err ? std::strerror(err) : "write failed");
    return code == 0 ? 2 : code;
  }
  if (std::fflush(stderr) != 0 || std::ferror(stderr)) return code == 0 ? 2 : code;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"servesim: a discrete-event simulator of LLM serving clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "servesim 0.1.0");
  // Every usage error starts "servesim: error:" like the others.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return "servesim: error: " + CLI::FailureMessage::simple(a, e);
  });
  servesim::cli::add_run_command(app);
  servesim::cli::add_trace_commands(app);
  servesim::cli::add_sweep_commands(app);
  servesim::cli::add_plot_command(app);
  servesim::cli::add_compare_command(app);
  servesim::cli::add_report_command(app);
  servesim::cli::add_calibrate_commands(app);
  servesim::cli::add_ltr_commands(app);
  if (const std::string bad = servesim::huge_pages::env_error(); !bad.empty()) {
    print_error("error: ", bad.c_str());
    return 2;
  }
  try {
    if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
      print_error("error: ", unknown.c_str());
      return 2;
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0)
      if (const std::string unknown = unknown_option(app, argc, argv); !unknown.empty()) {
        print_error("error: ", unknown.c_str());
        return 2;
      }
    const int code = app.exit(e);  // prints help, the version or the usage error
    return checked_exit(code == 0 ? 0 : 2);
  } catch (const servesim::InputError& e) {
    print_error("error: ", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    print_error("error: ", e.what());
    return 2;
  } catch (const servesim::InvariantViolation& e) {
    print_error("internal error (please report): ", e.what());
    return 3;
  } catch (const std::exception& e) {
    if (std::ferror(stdout)) {  // fmt::print's write to stdout failed (a full disk): not a bug
      print_error("error: writing standard output: ", e.what());
      return 2;
    }
    print_error("error: ", e.what());
    return 1;
  }
  return checked_exit(0);
}
