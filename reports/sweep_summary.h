// Repetition statistics of a sweep: sweep_summary.csv, one row per point of
// sweep.csv (its repetitions aggregated), and the mean / standard deviation /
// 95% confidence interval the plots draw.
//
// For n values x_i of a metric: mean = sum x_i / n; std = the sample standard
// deviation, sqrt(sum (x_i - mean)^2 / (n - 1)); ci95 = the half-width of the
// two-sided 95% confidence interval of the mean under Student's t
// distribution: t_{0.975, n-1} * std / sqrt(n) (the interval is mean ± ci95).
// With n = 1, std and ci95 are undefined (empty cells, NaN here).
//
// sweep_summary.csv: `point`, `runs` (rows of that point in sweep.csv), the
// swept columns (between `run` and `scenario` in sweep.csv), then for every
// other column that holds a number in every non-empty cell of sweep.csv:
// <column>_mean, <column>_std, <column>_ci95 (empty cells are not counted;
// `n` below is the count of the rest); a text column (scenario, model,
// policy_global, ...) is copied when all runs of the point agree, else empty.
// `repetition`, `seed` and `run` are not summarized.
//
// Warnings travel (reports/run_warnings.h): after `runs`, `runs_with_warnings`
// (runs whose `warnings` cell is not empty) and `warning_tags` (the kinds, by
// warning_tags(), comma-separated); the `warnings` column holds every distinct
// warnings cell of the point's runs, each prefixed "[k of n runs] " when not
// every run has it. A column equal in every run has empty std and ci95, not 0:
// a zero-width interval would claim a precision the runs do not have.
// Identical repetitions (n >= 2 and every headline metric, kHeadlineMetrics,
// equal across runs): every std and ci95 of the point is empty and `warnings`
// says so. Rows in the order of the
// points' first runs in sweep.csv (so the file is deterministic).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "reports/csv_reader.h"

namespace servesim {

// t_{0.975, df}: exact table for df <= 30, Cornish-Fisher expansion above
// (error below 1e-4). df = 0: NaN.
double student_t_975(std::size_t df);

struct MeanCi {
  std::size_t n = 0;
  double mean = 0, std = 0, ci95 = 0;  // std and ci95 NaN when n < 2; mean NaN when n = 0
};
MeanCi mean_ci(const std::vector<double>& values);

// Strict number parse of a whole cell: false for text, empty or trailing junk.
bool parse_number(const std::string& cell, double& out);

// Index of the first swept column and one past the last in a sweep.csv
// header: after `run` (or after `point` in files without it), up to
// `scenario` (or the end).
std::pair<int, int> swept_columns(const CsvTable& sweep);

// The measures whose equality across repetitions makes them "identical": what a
// reader takes an interval of. (The seed may still move other columns, e.g. the
// fairness of a trace's random client split, while every latency stays the same.)
inline constexpr const char* kHeadlineMetrics[] = {"throughput_rps", "ttft_mean_s", "tpot_mean_s", "e2e_mean_s",
                                                   "e2e_p99_s"};

// True when the rows agree on every headline metric present (else on every column in
// `numeric`, seed and repetition aside).
bool identical_runs(const CsvTable& t, const std::vector<std::size_t>& rows, const std::vector<int>& numeric);

// The aggregated `warnings` cell of a point's rows (see above); `warnings_column` -1: none.
std::string point_warnings(const CsvTable& t, const std::vector<std::size_t>& rows, int warnings_column,
                           bool identical);

// Reads `sweep_csv`, writes `out_csv` (CsvWriter: temp and rename); returns
// the number of points.
std::size_t write_sweep_summary(const std::string& sweep_csv, const std::string& out_csv);

// sweep.csv -> sweep_summary.csv beside it (same folder, "_summary" before ".csv").
std::string summary_path_for(const std::string& sweep_csv);

}  // namespace servesim
