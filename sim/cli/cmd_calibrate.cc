// `servesim calibrate fit|validate|synth|fit-roofline`: thin wrappers over costmodel/
// (kernel_fits.h, profile_validation.h, synthetic_profile.h, roofline_fit.h). See
// docs/costmodel.md for the method and how to calibrate a new GPU.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "costmodel/kernel_fits.h"
#include "configs/scenario_config.h"
#include "costmodel/profile_validation.h"
#include "costmodel/roofline_fit.h"
#include "costmodel/synthetic_profile.h"
#include "sim/cli/commands.h"
#include "reports/output_dir.h"
#include "sim/core/error.h"

namespace servesim::cli {
void add_fidelity_command(CLI::App& calibrate);  // cmd_fidelity.cc
void add_import_commands(CLI::App& calibrate);   // cmd_calibrate_import.cc
namespace {

struct FitArgs {
  std::string profile;
  std::string out;
};

struct ValidateArgs {
  std::string profile;
  std::string out;
  double holdout = 0.2;
  std::uint64_t seed = 1;
};

struct SynthArgs {
  std::string out;
  std::uint64_t seed = 1;
  double noise = 0.02;
  bool quick = false;
};

// Every output of calibrate (fit summary, validation, knobs, profile) is a
// result: checked writes to "<path>.tmp", renamed into place (reports/
// output_dir.h), so a full disk is an error naming the file, never a short file.
void write_output(const std::string& path, const std::string& text) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) ensure_output_dir(parent.string());
  write_file(path, text);
}

void print_provenance(const ProfileTable& t) {
  fmt::print("profile: {} ({} rows)\n", t.file(), t.points().size());
  for (const auto& [k, v] : t.provenance()) fmt::print("  # {}={}\n", k, v);
  if (t.synthetic())
    fmt::print("  NOTE: this profile is SYNTHETIC (generated from formulas, not measured); numbers below describe the "
               "method, not a GPU\n");
}

std::string csv_cell(std::string s) {
  for (char& c : s)
    if (c == ',') c = ';';
  return s;
}

void run_fit(const FitArgs& a) {
  const ProfileTable table = ProfileTable::load(a.profile);
  print_provenance(table);
  const auto start = std::chrono::steady_clock::now();
  const KernelFits fits = KernelFits::fit(table);
  const double ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e3;
  const auto rows = fits.summary();
  fmt::print("fitted {} models in {:.1f} ms (residuals: relative error at the fitted points)\n", rows.size(), ms);
  fmt::print("{:<16} {:<34} {:>6} {:>8} {:>8}  {}\n", "family", "key", "points", "median", "p90", "form");
  std::string csv = "family,key,points,median_rel_err,p90_rel_err,max_rel_err,form\n";
  for (const auto& r : rows) {
    if (r.family != "gemm")  // 40+ GEMM curves: in the CSV, summarized below
      fmt::print("{:<16} {:<34} {:>6} {:>7.2f}% {:>7.2f}%  {}\n", r.family, r.key.substr(0, 34), r.residuals.points,
                 100 * r.residuals.median, 100 * r.residuals.p90, r.form);
    csv += fmt::format("{},{},{},{:.5f},{:.5f},{:.5f},{}\n", r.family, csv_cell(r.key), r.residuals.points,
                       r.residuals.median, r.residuals.p90, r.residuals.max, csv_cell(r.form));
  }
  if (!fits.gemm().empty()) {
    int dips = 0;
    for (const auto& [key, g] : fits.gemm()) dips += g.curve.kept_dips();
    fmt::print("gemm: {} weight shapes, monotone curves over M{} (see fit_summary.csv); {}\n", fits.gemm().size(),
               dips ? fmt::format(" except {} measured dips (gemm_dense)", dips) : std::string(),
               fits.gemm_guide().describe());
  }
  fmt::print("copy bandwidth ceiling: {:.0f} GB/s\n", fits.copy_gbps());
  for (const auto& p : fits.problems()) fmt::print("warning: {}\n", p);
  std::string prov;
  for (const auto& [k, v] : table.provenance()) prov += fmt::format("{}={}\n", k, v);
  write_output(a.out + "/fit_summary.csv", csv);
  write_output(a.out + "/provenance.txt", prov);
  fmt::print("wrote {0}/fit_summary.csv and {0}/provenance.txt\n", a.out);
  fmt::print("scenarios refit from the profile CSV when they load it (milliseconds); use it with\n"
             "  cost_model: {{backend: calibrated, profile: {}}}\n", a.profile);
}

void run_validate(const ValidateArgs& a) {
  if (!(a.holdout > 0 && a.holdout < 1)) throw InputError(fmt::format("--holdout {} must be in (0, 1)", a.holdout));
  const ProfileTable table = ProfileTable::load(a.profile);
  print_provenance(table);
  const ValidationResult r = validate_profile(table, ValidationOptions{a.holdout, a.seed});
  fmt::print("held-out validation: {:.0f}% of fitted rows held out (seed {}); composite rows predicted from parts\n",
             100 * a.holdout, a.seed);
  fmt::print("{:<22} {:<10} {:>7} {:>9} {:>8} {:>8} {:>8}  target (median <= 5%, p90 <= 10%)\n", "family", "kind",
             "fitted", "predicted", "median", "p90", "max");
  bool all = true;
  for (const auto& f : r.families) {
    fmt::print("{:<22} {:<10} {:>7} {:>9} {:>7.2f}% {:>7.2f}% {:>7.2f}%  {}\n", f.family, f.kind, f.fitted,
               f.error.points, 100 * f.error.median, 100 * f.error.p90, 100 * f.error.max,
               f.meets_target() ? "ok" : "MISSED");
    all = all && f.meets_target();
  }
  for (const auto& p : r.problems) fmt::print("warning: {}\n", p);
  fmt::print("{}\n", all ? "every family meets the target" : "some families miss the target");
  if (!a.out.empty()) {
    write_output(a.out + "/validation.csv", validation_csv(r));
    write_output(a.out + "/validation_points.csv", validation_points_csv(r));
    fmt::print("wrote {0}/validation.csv and {0}/validation_points.csv\n", a.out);
  }
}

}  // namespace

void add_calibrate_commands(CLI::App& app) {
  CLI::App* cal = app.add_subcommand("calibrate", "Fit and validate kernel profiles measured by servesim-kernels bench");
  cal->require_subcommand(1);

  auto fa = std::make_shared<FitArgs>();
  CLI::App* fit = cal->add_subcommand("fit", "Fit every kernel family of a profile; print and write coefficients and residuals");
  fit->add_option("profile", fa->profile, "Profile CSV written by servesim-kernels bench")
      ->required()
      ->check(CLI::ExistingFile);
  fit->add_option("-o,--out", fa->out, "Output folder for fit_summary.csv and provenance.txt")->required();
  fit->callback([fa] { run_fit(*fa); });

  auto va = std::make_shared<ValidateArgs>();
  CLI::App* val = cal->add_subcommand(
      "validate", "Hold out a deterministic share of a profile, fit the rest, report per-family median/p90 error");
  val->add_option("profile", va->profile, "Profile CSV written by servesim-kernels bench")
      ->required()
      ->check(CLI::ExistingFile);
  val->add_option("-o,--out", va->out, "Output folder for validation.csv and validation_points.csv");
  val->add_option("--holdout", va->holdout, "Share of fitted rows held out (default 0.2)");
  val->add_option("--seed", va->seed, "Selects the held-out rows (default 1)");
  val->callback([va] { run_validate(*va); });

  struct RooflineArgs {
    std::string profile, hardware = "h100-sxm", out;
  };
  auto ra = std::make_shared<RooflineArgs>();
  CLI::App* rf = cal->add_subcommand(
      "fit-roofline", "Derive the roofline's hardware knobs from a profile; write a knob YAML (cost_model.knobs)");
  rf->add_option("profile", ra->profile, "Profile CSV written by servesim-kernels bench")->required();
  rf->add_option("--hardware", ra->hardware, "Hardware name or file whose datasheet ceilings the fractions use "
                                              "(default h100-sxm)");
  rf->add_option("-o,--out", ra->out, "Output knob YAML")->required();
  rf->callback([ra] {
    const ProfileTable table = ProfileTable::load(ra->profile);
    print_provenance(table);
    const RooflineKnobFit f = fit_roofline_knobs(table, load_hardware_named(ra->hardware));
    for (const auto& n : f.notes) fmt::print("  {}\n", n);
    write_output(ra->out, roofline_knobs_yaml(f, table));
    fmt::print("wrote {} (use: cost_model: {{backend: roofline, knobs: {}}})\n", ra->out, ra->out);
  });

  add_fidelity_command(*cal);  // cmd_fidelity.cc
  add_import_commands(*cal);   // cmd_calibrate_import.cc: import, crossval, list

  auto sa = std::make_shared<SynthArgs>();
  CLI::App* syn = cal->add_subcommand(
      "synth", "Write a SYNTHETIC profile (known formulas + noise, bench schema) for tests and demos; never a calibration");
  syn->add_option("-o,--out", sa->out, "Output CSV")->required();
  syn->add_option("--seed", sa->seed, "Noise seed (default 1)");
  syn->add_option("--noise", sa->noise, "Sigma of the multiplicative log-normal noise (default 0.02)");
  syn->add_flag("--quick", sa->quick, "The bench's --quick grid");
  syn->callback([sa] {
    if (sa->noise < 0) throw InputError("--noise must be >= 0");
    SyntheticOptions o;
    o.seed = sa->seed;
    o.noise = sa->noise;
    o.quick = sa->quick;
    write_output(sa->out, synthetic_profile_csv(o));
    fmt::print("wrote a SYNTHETIC profile (generated, not measured; reports using it say calibrated=false) to {}\n",
               sa->out);
  });
}

}  // namespace servesim::cli
