// servesim-kernels: correctness checks and the calibration benchmark of every registered
// kernel family (registry.h), and `merge`, which joins per-family profiles (no GPU).
// Exit codes: 0 success, 1 a check or bench failed, 2 usage error (or a merge refused),
// 77 no usable GPU (CTest's SKIP_RETURN_CODE: reported as skipped, never passed).
// A bench whose time budget ran out still exits 0: the skipped points are listed at the
// end ("budget-skip: ..." lines, which gpu_calibrate.sh copies into summary.txt).
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/bench/bench_budget.h"
#include "kernels/bench/cli_args.h"
#include "kernels/bench/device_info.h"
#include "kernels/bench/profile_csv.h"
#include "kernels/bench/profile_merge.h"
#include "kernels/bench/registry.h"
#include "kernels/replay/replay_command.h"

using namespace servesim::kernels;

namespace {

constexpr int kExitSkip = 77;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<KernelFamily> families_or_report(const KernelsCli& cli, bool* ok) {
  std::vector<std::string> unknown;
  std::vector<KernelFamily> families = select_kernel_families(cli.families, &unknown);
  for (const auto& u : unknown) std::fprintf(stderr, "servesim-kernels: unknown family '%s' (see `list`)\n", u.c_str());
  *ok = unknown.empty();
  return families;
}

int run_check(const KernelsCli& cli) {
  bool ok = true;
  const auto families = families_or_report(cli, &ok);
  if (!ok) return 2;
  std::printf("servesim-kernels check%s on %s\n", cli.quick ? " --quick" : "", device_summary().c_str());
  CheckOptions opts;
  opts.quick = cli.quick;
  opts.seed = cli.seed;
  opts.verbose = cli.verbose;
  int failures = 0;
  for (const auto& f : families) {
    if (!f.check) continue;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const int fails = f.check(opts);
      failures += fails;
      std::printf("== %s: %s (%.1f s)\n", f.name.c_str(), fails ? "FAILED" : "passed", seconds_since(t0));
    } catch (const std::exception& e) {
      ++failures;
      std::printf("[FAIL] %s: exception: %s\n", f.name.c_str(), e.what());
    }
    std::fflush(stdout);
  }
  std::printf("check: %s (%d failure%s)\n", failures ? "FAILED" : "all passed", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}

int run_bench(const KernelsCli& cli, const std::string& command_line) {
  bool ok = true;
  const auto families = families_or_report(cli, &ok);
  if (!ok) return 2;
  std::ofstream out(cli.output);
  if (!out) {
    std::fprintf(stderr, "servesim-kernels: cannot write %s\n", cli.output.c_str());
    return 2;
  }
  BenchOptions opts;
  opts.quick = cli.quick;
  opts.seed = cli.seed;
  if (cli.quick) opts.target_ms_per_point = 5.0;
  if (cli.target_ms > 0) opts.target_ms_per_point = cli.target_ms;
  BenchBudget budget(cli.budget_s);
  opts.budget = &budget;
  ProfileWriter writer(out);
  writer.write_provenance(collect_provenance({cli.git_commit, cli.quick ? "quick" : "full", cli.families, command_line}));
  std::printf("servesim-kernels bench%s on %s -> %s\n", cli.quick ? " --quick" : "", device_summary().c_str(),
              cli.output.c_str());
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  for (const auto& f : families) {
    if (!f.bench) continue;
    const auto t0 = std::chrono::steady_clock::now();
    const int rows0 = writer.rows_written();
    try {
      f.bench(opts, writer);
      std::printf("== %s: %d rows (%.1f s)\n", f.name.c_str(), writer.rows_written() - rows0, seconds_since(t0));
    } catch (const std::exception& e) {
      ++failures;
      std::printf("[FAIL] %s: exception after %d rows: %s\n", f.name.c_str(), writer.rows_written() - rows0, e.what());
    }
    std::fflush(stdout);
  }
  for (const std::string& point : budget.skipped()) std::printf("budget-skip: %s\n", point.c_str());
  std::printf("bench: %d rows in %.1f s%s; %d points skipped by the %.0f s budget\n", writer.rows_written(),
              seconds_since(start), failures ? " (with failures)" : "", int(budget.skipped().size()), cli.budget_s);
  return failures ? 1 : 0;
}

// Reads `path` into *input; false (with the message on stderr) when it cannot be read.
bool read_merge_input(const std::string& path, ProfileInput* input) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "servesim-kernels merge: cannot read %s\n", path.c_str());
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  *input = {path, text.str()};
  return true;
}

int run_merge(const KernelsCli& cli) {
  std::vector<ProfileInput> inputs(cli.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!read_merge_input(cli.inputs[i], &inputs[i])) return 2;
  ProfileInput repeat;
  if (!cli.repeat.empty() && !read_merge_input(cli.repeat, &repeat)) return 2;
  std::string merged, error;
  if (!merge_profiles(inputs, &merged, &error, cli.sessions, cli.add_variants,
                      cli.repeat.empty() ? nullptr : &repeat)) {
    std::fprintf(stderr, "servesim-kernels merge: refused: %s\n", error.c_str());
    return 2;
  }
  std::ofstream out(cli.output);
  out << merged;
  out.close();
  if (!out) {
    std::fprintf(stderr, "servesim-kernels merge: cannot write %s\n", cli.output.c_str());
    return 2;
  }
  std::printf("merge: %zu profiles -> %s\n", inputs.size(), cli.output.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  KernelsCli cli;
  std::string error;
  if (!parse_kernels_cli(argc, argv, &cli, &error)) {
    std::fprintf(stderr, "servesim-kernels: %s\n%s", error.c_str(), kernels_cli_usage().c_str());
    return 2;
  }
  if (cli.command == "help") {
    std::printf("%s", kernels_cli_usage().c_str());
    return 0;
  }
  if (cli.command == "list") {
    for (const auto& f : kernel_families())
      std::printf("%-16s %s%s%s\n", f.name.c_str(), f.description.c_str(), f.check ? "" : " [no check]",
                  f.bench ? "" : " [no bench]");
    return 0;
  }
  if (cli.command == "merge") return run_merge(cli);
  std::string why;
  if (!cuda_device_available(&why)) {
    std::printf("servesim-kernels %s: SKIPPED, no usable GPU (%s)\n", cli.command.c_str(), why.c_str());
    return kExitSkip;
  }
  std::string command_line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) command_line += ' ';
    command_line += argv[i];
  }
  try {
    if (cli.command == "replay") return run_replay(cli);
    return cli.command == "check" ? run_check(cli) : run_bench(cli, command_line);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "servesim-kernels: %s\n", e.what());
    return 1;
  }
}
