// One function per top-level CLI command group; main.cc adds them all to the
// CLI11 app. Each lives in its own cmd_*.cc file beside this one.
#pragma once
#include <CLI/CLI.hpp>

namespace servesim::cli {

void add_run_command(CLI::App& app);     // servesim run SCENARIO.yaml
void add_trace_commands(CLI::App& app);  // servesim trace stats|gen
void add_sweep_commands(CLI::App& app);  // servesim sweep, servesim merge
void add_plot_command(CLI::App& app);    // servesim plot
void add_compare_command(CLI::App& app); // servesim compare
void add_report_command(CLI::App& app);  // servesim report (HTML)
void add_calibrate_commands(CLI::App& app);  // servesim calibrate fit|validate|synth
void add_ltr_commands(CLI::App& app);        // servesim ltr train

}  // namespace servesim::cli
