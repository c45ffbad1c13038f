// `servesim sweep SWEEP.yaml [--jobs N] [--out DIR] [--shard K/N] [--repeat R] [--set k=v]`
// and `servesim merge DIR... [-o sweep.csv] [--allow-missing]`. Both write
// sweep_summary.csv beside sweep.csv; sweep then prints the comparison table
// of its runs (reports/compare.h) on stdout, which carries only messages.
// merge holds an exclusive lock on the output CSV's folder and a shared one on
// every other input folder, so it cannot read a shard a sweep is writing.
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "configs/sweep_runner.h"
#include "reports/output_dir.h"
#include "reports/compare.h"
#include "reports/csv_reader.h"
#include "reports/sweep_merge.h"
#include "reports/sweep_summary.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"

namespace servesim::cli {
namespace {

// Warnings travel: how many points have which kind, from sweep_summary.csv.
void print_sweep_warnings(const std::string& dir) {
  const std::string path = dir + "/sweep_summary.csv";
  if (!std::filesystem::exists(path)) return;
  const CsvTable t = read_csv(path);
  const int tags = t.column("warning_tags");
  if (tags < 0) return;
  std::map<std::string, std::size_t> count;
  std::size_t points = 0;
  for (const auto& row : t.rows) {
    if (row[tags].empty()) continue;
    ++points;
    std::size_t from = 0;
    while (from <= row[tags].size()) {
      const std::size_t comma = std::min(row[tags].find(',', from), row[tags].size());
      ++count[row[tags].substr(from, comma - from)];
      from = comma + 1;
    }
  }
  if (points == 0) return;
  std::string kinds;
  for (const auto& [k, n] : count) kinds += fmt::format("{}{}: {}", kinds.empty() ? "" : ", ", k, n);
  fmt::print("warning: {} of {} points have warnings ({}); the warnings column of {} says which and why\n", points,
             t.rows.size(), kinds, path);
}

}  // namespace

void add_sweep_commands(CLI::App& app) {
  struct Args {
    std::string file, out, shard, merge_out;
    int jobs = 1;
    std::size_t repeat = 0;
    bool allow_missing = false;
    std::vector<std::string> sets, dirs;
  };
  // --shard is checked while parsing: a usage error (exit 2) before any work.
  CLI::Validator shard_check(
      [](std::string& s) {
        try {
          parse_shard(s);
          return std::string();
        } catch (const InputError& e) {
          return std::string(e.what());
        }
      },
      "K/N");
  // An integer in [lo, hi], said as such ("--jobs 0" was "not in range 0.000000 to 1.797e308",
  // "--repeat abc" "not in range 1 to 1000").
  auto integer_in = [](long long lo, long long hi) {
    return CLI::Validator(
        [lo, hi](std::string& s) {
          long long v = 0;
          size_t used = 0;
          try {
            v = std::stoll(s, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used == 0 || used != s.size()) return fmt::format("'{}' is not an integer", s);
          if (v < lo || v > hi) return fmt::format("{} is out of range: an integer from {} to {}", s, lo, hi);
          return std::string();
        },
        fmt::format("INT in [{} - {}]", lo, hi));
  };
  auto a = std::make_shared<Args>();
  CLI::App* sweep = app.add_subcommand("sweep", "Run a grid of scenarios (in parallel threads) and write sweep.csv");
  sweep->add_option("sweep", a->file, "Sweep YAML file")->required()->check(CLI::ExistingFile);
  sweep->add_option("-j,--jobs", a->jobs, "Points run in parallel (results do not depend on it)")->check(integer_in(1, std::numeric_limits<int>::max()));
  sweep->add_option("-o,--out", a->out, "Sweep folder (default runs/sweeps/<name>)");
  sweep->add_option("--shard", a->shard,
                    "Run only the K-th of N shards (1 <= K <= N): points with index % N == K-1, e.g. --shard 3/16")
      ->check(shard_check);
  sweep->add_option("-r,--repeat", a->repeat,
                    "Runs per point, each with its own seed (overrides the file's repeat:; seeds: docs/sweeps.md)")
      ->check(integer_in(1, static_cast<long long>(kMaxRepeat)));
  sweep->add_option("-s,--set", a->sets, "Override a key in every point, e.g. --set workload.requests=500")->take_all();
  sweep->callback([a] {
    SweepSpec spec = load_sweep(a->file, a->repeat);
    SweepOutcome r = run_sweep(spec, SweepOptions{a->out, a->jobs, a->shard, a->sets, true});
    const char* unit = spec.repeat > 1 ? "runs" : "points";
    fmt::print("servesim sweep: {}: {} {} selected{}{}, {} ran, {} already done, {} failed\n", spec.name, r.selected,
               unit, spec.repeat > 1 ? fmt::format(" ({} per point)", spec.repeat) : "",
               a->shard.empty() ? "" : " (shard " + a->shard + ")", r.ran, r.skipped, r.failures.size());
    fmt::print("  {}/sweep.csv: {} {}; sweep_summary.csv: mean, std, 95% CI per point\n", r.out_dir, r.merged, unit);
    print_sweep_comparison(r.out_dir);
    print_sweep_warnings(r.out_dir);
    if (!r.failures.empty()) {
      for (const auto& f : r.failures) fmt::print(stderr, "  failed: {}\n", f);
      throw InputError(fmt::format("{} of {} points failed; sweep.csv holds only the {} completed points",
                                   r.failures.size(), r.selected, r.merged));
    }
  });

  CLI::App* merge = app.add_subcommand("merge", "Merge sweep folders (e.g. the shards of a job array) into one sweep.csv");
  merge->add_option("dirs", a->dirs, "Sweep folders")->required()->check(CLI::ExistingDirectory);
  merge->add_option("-o,--out", a->merge_out, "Output CSV (default: <first dir>/sweep.csv)");
  merge->add_flag("--allow-missing", a->allow_missing,
                  "Write the finished points even when some points of the sweep are missing (named on stderr)");
  merge->callback([a] {
    namespace fs = std::filesystem;
    std::string out = a->merge_out.empty() ? (fs::path(a->dirs.front()) / "sweep.csv").string() : a->merge_out;
    fs::path out_dir = fs::path(out).parent_path();
    if (out_dir.empty()) out_dir = ".";
    OutputLock write_lock(out_dir.string());
    std::vector<std::unique_ptr<OutputLock>> read_locks;
    for (const auto& d : a->dirs) {
      std::error_code ec;
      if (!fs::equivalent(d, out_dir, ec))
        read_locks.push_back(std::make_unique<OutputLock>(d, OutputLock::Mode::kShared));
    }
    MergeOptions mo;
    mo.allow_missing = a->allow_missing;
    MergeResult r = merge_sweeps(a->dirs, out, mo);
    write_sweep_summary(out, summary_path_for(out));
    if (!r.missing.empty())
      fmt::print(stderr, "servesim merge: warning: {} points missing: {}\n", r.missing.size(),
                 fmt::join(r.missing, ", "));
    fmt::print("servesim merge: {} runs from {} folders -> {} and {}\n", r.points, a->dirs.size(), out,
               summary_path_for(out));
  });
}

}  // namespace servesim::cli
