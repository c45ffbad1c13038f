// `servesim compare DIR... [--baseline CONFIG] [--metrics a,b] [--runs] [--out FILE]`:
// configurations (run folders, sweep points, a sweep's points with their
// repetitions) side by side, aggregated over repetitions with 95% intervals,
// and each against a baseline with the difference, the ratio and a p-value
// (reports/compare.h); --runs lists every run instead. Text on stdout and,
// with --out, the same table as CSV. Reads the folders under a shared lock,
// so it never reads a run that is being written. No row is ever cut.
#include <memory>

#include <fmt/format.h>

#include "reports/compare.h"
#include "reports/output_dir.h"
#include "sim/cli/commands.h"

namespace servesim::cli {

void add_compare_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> dirs;
    std::string out, baseline;
    std::vector<std::string> metrics;
    bool runs = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmp = app.add_subcommand(
      "compare", "Compare runs, sweep points and sweeps: mean ± 95% CI per configuration, and against a baseline");
  cmp->add_option("dirs", a->dirs, "Run folders, sweep point folders (points/<id>) or sweep folders")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmp->add_option("-o,--out", a->out, "Also write the table as CSV to this file");
  cmp->add_option("-b,--baseline", a->baseline,
                  "The configuration the others are compared with: its label or row number (default: the first)");
  cmp->add_option("-m,--metrics", a->metrics,
                  "Columns to compare (summary.csv names), e.g. --metrics e2e_p99_s,extend_service_diff_max "
                  "(default: latency, throughput, unfinished, cache hit rate, the fairness measures that move, goodput)")
      ->delimiter(',');
  cmp->add_flag("--runs", a->runs, "One row per run, not aggregated (the values as each run wrote them)");
  cmp->callback([a] {
    std::vector<CompareInput> inputs;
    for (const auto& d : a->dirs) {
      OutputLock lock(d, OutputLock::Mode::kShared);
      for (auto& in : compare_inputs(d)) inputs.push_back(std::move(in));
    }
    CompareTable t;
    if (a->runs) {
      t = compare_table(inputs);
      fmt::print("{}", format_table(t));
    } else {
      t = compare_aggregate(inputs, CompareOptions{a->metrics, a->baseline});
      fmt::print("{}", format_aggregate(t));
    }
    if (!a->out.empty()) {
      write_compare_csv(t, a->out);
      fmt::print("  wrote {}\n", a->out);
    }
  });
}

}  // namespace servesim::cli
