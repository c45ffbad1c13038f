// `servesim calibrate import|list|crossval`: public measured tables into the
// profile format (costmodel/measured_import.h), the profiles that exist per
// GPU and engine stack, and the cross-validation of a profile's fits
// (costmodel/profile_crossval.h). docs/costmodel.md, "Measured public data".
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "configs/profile_catalog.h"
#include "configs/scenario_config.h"
#include "costmodel/kernel_fits.h"
#include "costmodel/measured_import.h"
#include "costmodel/profile_crossval.h"
#include "costmodel/profile_table.h"
#include "costmodel/sparse_ratio_checks.h"
#include "reports/output_dir.h"
#include "sim/cli/commands.h"
#include "sim/core/error.h"

namespace servesim::cli {
namespace {

struct ImportArgs {
  std::vector<std::string> inputs, borrowed, borrowed_kernels;
  std::string borrowed_stack;
  std::string out, gpu, stack, description, provenance;
  std::int64_t sms = 0;
};

void run_import(const ImportArgs& a, const std::string& command) {
  std::vector<ImportInput> in;
  for (const auto& p : a.inputs) in.push_back({p, "", {}});
  if (!a.borrowed.empty() && a.borrowed_stack.empty())
    throw InputError("calibrate import: --borrow needs --borrowed-stack (the engine stack those tables come from)");
  for (const auto& p : a.borrowed) in.push_back({p, a.borrowed_stack, a.borrowed_kernels});
  ImportOptions o{a.gpu, a.sms, a.stack, a.description, a.provenance, command};
  const ImportReport r = import_measured(in, o);
  std::int64_t written = 0;
  for (const auto& f : r.files) {
    fmt::print("{:<18} {:>6} read {:>6} imported {:>5} zero {:>5} filtered  {}\n", f.format, "", f.rows_read,
               f.rows_written, f.zero_skipped, f.filtered, f.path);
    written += f.rows_written;
  }
  const auto parent = std::filesystem::path(a.out).parent_path();
  if (!parent.empty()) ensure_output_dir(parent.string());
  write_file(a.out, r.text);
  fmt::print("wrote {} ({} rows from {} files; gpu {}, stack {})\n", a.out, written, r.files.size(), a.gpu, a.stack);
}

struct CrossvalArgs {
  std::string profile, out, against;
};

void run_disagreement(const ProfileTable& a, const std::string& other) {
  const ProfileTable b = ProfileTable::load(other);
  auto stack = [](const ProfileTable& t) {
    const std::string s = t.provenance_value("stack");
    return s.empty() ? std::string(kOwnStack) : s;
  };
  fmt::print("same shapes measured by two stacks (borrowed rows excluded): {} ({}) vs {} ({}); ratio = second / "
             "first\n", a.file(), stack(a), b.file(), stack(b));
  fmt::print("{:<10} {:>8} {:>8} {:>8} {:>8}  {}\n", "kernel", "matches", "p10", "median", "p90", "largest example");
  for (const auto& d : stack_disagreement(a, b))
    fmt::print("{:<10} {:>8} {:>8.3f} {:>8.3f} {:>8.3f}  {}\n", d.kernel, d.matches, d.p10, d.median, d.p90, d.example);
}

void run_crossval(const CrossvalArgs& a) {
  const ProfileTable table = ProfileTable::load(a.profile);
  if (!a.against.empty()) return run_disagreement(table, a.against);
  fmt::print("profile: {} ({} rows) {}\n", table.file(), table.points().size(), table.provenance_summary());
  const CrossvalResult r = crossval_profile(table);
  fmt::print("{:<12} {:<26} {:>7} {:>8} {:>8} {:>8}  {}\n", "experiment", "part", "points", "median", "p90", "max",
             "target");
  bool all = true;
  for (const auto& e : r.rows) {
    fmt::print("{:<12} {:<26} {:>7} {:>7.2f}% {:>7.2f}% {:>7.2f}%  {}\n", e.experiment, e.part, e.error.points,
               100 * e.error.median, 100 * e.error.p90, 100 * e.error.max, e.target_text());
    all = all && e.meets_target();
  }
  for (const auto& n : r.notes) fmt::print("note: {}\n", n);
  fmt::print("{}\n", all ? "every part meets its target" : "some parts miss their target");
  if (!a.out.empty()) {
    write_file(a.out, crossval_csv(r));
    fmt::print("wrote {}\n", a.out);
  }
}

}  // namespace

void add_import_commands(CLI::App& cal) {
  auto ia = std::make_shared<ImportArgs>();
  CLI::App* imp = cal.add_subcommand(
      "import", "Convert published measured tables (Vidur, AIConfigurator, LLMCompass) into a servesim profile");
  imp->add_option("inputs", ia->inputs, "Measured CSV files or folders (searched for *.csv), read unchanged")
      ->required();
  imp->add_option("--borrow", ia->borrowed, "Files or folders from ANOTHER engine stack, for parts this stack lacks "
                                            "(marked borrowed in every row and the report)");
  imp->add_option("--borrowed-stack", ia->borrowed_stack, "The engine stack the --borrow tables come from");
  imp->add_option("--borrow-kernels", ia->borrowed_kernels, "Only these kernels of the --borrow tables (e.g. "
                                                            "elementwise decode prefill); default all")
      ->delimiter(',');
  imp->add_option("-o,--out", ia->out, "Output profile CSV")->required();
  imp->add_option("--gpu", ia->gpu, "GPU the tables were measured on (provenance 'gpu')")->required();
  imp->add_option("--gpu-sms", ia->sms, "The GPU's SM count (GEMM wave quantization)")->required();
  imp->add_option("--stack", ia->stack, "Engine stack that measured them, e.g. vllm-0.14")->required();
  imp->add_option("--stack-description", ia->description, "One line describing the stack");
  imp->add_option("--provenance", ia->provenance,
                  "Markdown provenance table (the corpus README): repo, commit, path, blob per file");
  imp->callback([ia] {
    std::string cmd = "servesim calibrate import";
    for (const auto& s : ia->inputs) cmd += " " + s;
    for (const auto& s : ia->borrowed) cmd += " --borrow " + s;
    if (!ia->borrowed_stack.empty()) cmd += " --borrowed-stack " + ia->borrowed_stack;
    for (const auto& s : ia->borrowed_kernels) cmd += " --borrow-kernels " + s;
    cmd += fmt::format(" --gpu '{}' --gpu-sms {} --stack {}", ia->gpu, ia->sms, ia->stack);
    run_import(*ia, cmd);
  });

  auto ca = std::make_shared<CrossvalArgs>();
  CLI::App* cv = cal.add_subcommand(
      "crossval", "Cross-validate an imported profile: leave one model out, TP transport, token extrapolation, "
                  "all-reduce by size");
  cv->add_option("profile", ca->profile, "Profile CSV (imported or measured)")->required()->check(CLI::ExistingFile);
  cv->add_option("-o,--out", ca->out, "Write the table as CSV");
  cv->add_option("--against", ca->against, "Instead: compare with another stack's profile on identical shapes "
                                            "(the disagreement table)")->check(CLI::ExistingFile);
  cv->callback([ca] { run_crossval(*ca); });

  struct SparseArgs {
    std::string profile, hardware = "h100-sxm";
    bool dense_only = false;
  };
  auto sp = std::make_shared<SparseArgs>();
  CLI::App* sc = cal.add_subcommand(
      "sparse-check", "Published sparse speedups (MInference, Quest) against this profile's (docs/sparse_kernels.md)");
  sc->add_option("profile", sp->profile, "Profile CSV")->required()->check(CLI::ExistingFile);
  sc->add_option("--hardware", sp->hardware, "Hardware name or file the profile measured (default h100-sxm)");
  sc->add_flag("--dense-only", sp->dense_only, "Ignore the profile's quest/minf/andpro rows (derived pricing)");
  sc->callback([sp] {
    const ProfileTable table = ProfileTable::load(sp->profile);
    fmt::print("profile: {} ({} rows) {}\n", table.file(), table.points().size(), table.provenance_summary());
    auto fits = std::make_shared<const KernelFits>(KernelFits::fit(table, [&](const ProfilePoint& p) {
      return !sp->dense_only ||
             !(p.kernel.starts_with("quest") || p.kernel.starts_with("minf") || p.kernel.starts_with("andpro"));
    }));
    fmt::print("{}", format_sparse_ratio_checks(sparse_ratio_checks(fits, load_hardware_named(sp->hardware))));
  });

  CLI::App* ls = cal.add_subcommand("list", "List the measured profiles shipped per GPU and engine stack");
  ls->callback([] {
    fmt::print("{:<12} {:<12} {:<9} {:>6}  {}\n", "hardware", "stack", "default", "rows", "profile");
    for (const auto& p : shipped_profiles())
      fmt::print("{:<12} {:<12} {:<9} {:>6}  {}\n", p.hardware, p.stack, p.is_default ? "yes" : "", p.rows, p.path);
  });
}

}  // namespace servesim::cli
