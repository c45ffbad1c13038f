// `servesim sweep SWEEP.yaml [--jobs N] [--out DIR] [--shard I/N] [--set k=v]`
// and `servesim merge DIR... [-o sweep.csv]`.
#include <filesystem>

#include <fmt/format.h>

#include "configs/sweep_runner.h"
#include "reports/sweep_merge.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"

namespace servesim::cli {

void add_sweep_commands(CLI::App& app) {
  struct Args {
    std::string file, out, shard, merge_out;
    int jobs = 1;
    std::vector<std::string> sets, dirs;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sweep = app.add_subcommand("sweep", "Run a grid of scenarios (in parallel threads) and write sweep.csv");
  sweep->add_option("sweep", a->file, "Sweep YAML file")->required();
  sweep->add_option("-j,--jobs", a->jobs, "Points run in parallel (results do not depend on it)")->check(CLI::PositiveNumber);
  sweep->add_option("-o,--out", a->out, "Sweep folder (default runs/sweeps/<name>)");
  sweep->add_option("--shard", a->shard, "Run only points with index % N == I, e.g. --shard 3/16 (job arrays)");
  sweep->add_option("-s,--set", a->sets, "Override a key in every point, e.g. --set workload.requests=500")->take_all();
  sweep->callback([a] {
    SweepSpec spec = load_sweep(a->file);
    SweepOutcome r = run_sweep(spec, SweepOptions{a->out, a->jobs, a->shard, a->sets, true});
    fmt::print("servesim sweep: {}: {} points selected{}, {} ran, {} already done, {} failed\n", spec.name,
               r.selected, a->shard.empty() ? "" : " (shard " + a->shard + ")", r.ran, r.skipped, r.failures.size());
    fmt::print("  {}/sweep.csv: {} points\n", r.out_dir, r.merged);
    if (!r.failures.empty()) {
      for (const auto& f : r.failures) fmt::print(stderr, "  failed: {}\n", f);
      throw InputError(fmt::format("{} of {} points failed; sweep.csv holds only the {} completed points",
                                   r.failures.size(), r.selected, r.merged));
    }
  });

  CLI::App* merge = app.add_subcommand("merge", "Merge sweep folders (e.g. the shards of a job array) into one sweep.csv");
  merge->add_option("dirs", a->dirs, "Sweep folders")->required()->check(CLI::ExistingDirectory);
  merge->add_option("-o,--out", a->merge_out, "Output CSV (default: <first dir>/sweep.csv)");
  merge->callback([a] {
    std::string out = a->merge_out.empty() ? (std::filesystem::path(a->dirs.front()) / "sweep.csv").string() : a->merge_out;
    MergeResult r = merge_sweeps(a->dirs, out);
    fmt::print("servesim merge: {} points from {} folders -> {}\n", r.points, a->dirs.size(), out);
  });
}

}  // namespace servesim::cli
