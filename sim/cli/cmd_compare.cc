// `servesim compare DIR... [--out FILE]`: the headline metrics of run folders,
// sweep point folders or sweep folders side by side (reports/compare.h), as an
// aligned table on stdout and, with --out, as CSV. Reads the folders under a
// shared lock, so it never reads a run that is being written.
#include <memory>

#include <fmt/format.h>

#include "reports/compare.h"
#include "reports/output_dir.h"
#include "sim/cli/commands.h"

namespace servesim::cli {

void add_compare_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> dirs;
    std::string out;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmp = app.add_subcommand("compare", "Print the headline metrics of runs or sweep points side by side");
  cmp->add_option("dirs", a->dirs, "Run folders, sweep point folders (points/<id>) or sweep folders")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmp->add_option("-o,--out", a->out, "Also write the table as CSV to this file");
  cmp->callback([a] {
    std::vector<CompareInput> inputs;
    for (const auto& d : a->dirs) {
      OutputLock lock(d, OutputLock::Mode::kShared);
      for (auto& in : compare_inputs(d)) inputs.push_back(std::move(in));
    }
    const CompareTable t = compare_table(inputs);
    fmt::print("{}", format_table(t));
    if (!a->out.empty()) {
      write_compare_csv(t, a->out);
      fmt::print("  wrote {}\n", a->out);
    }
  });
}

}  // namespace servesim::cli
