// The comparison table of `servesim compare DIR...` and of the end of
// `servesim sweep`: configurations side by side, aggregated over their
// repetitions, against a baseline.
//
// Inputs: a run folder or a sweep point folder (its summary.csv) is one run
// of its own configuration; a sweep folder (its sweep.csv) gives one run per
// row, and the rows of one sweep point (its repetitions) form one
// configuration, as do points that differ only in a swept `seed` (as in the
// plots). A configuration is labelled by its policies' names (the
// parameters left out: `dlpm/round_robin`) and its swept values other than
// the policies (`quantum=16`), so a sweep point reads as what it compares.
//
// Aggregated table (the default): one row per configuration, in input order:
// `config`, `runs`, `warnings` (the kinds present in any run,
// reports/run_warnings.h warning_tags, with how many runs), then per metric
// the mean ± the 95% Student t half-interval over its runs (empty interval
// with one run, or when the runs are identical: a 0-wide interval would be
// false precision). Against the baseline configuration (the first, or
// `baseline`) each other configuration gets, per metric, the difference of
// the means, their ratio and the two-sided p-value of "no difference":
// a paired t test when both have the same number of runs with the same seeds
// in the same order (the repetitions share their inputs: the same arrivals,
// lengths and resampling), else Welch's unequal-variance t test; `*` marks
// p < 0.05. With one run on either side there is no test (p empty).
//
// Metrics (default): throughput_rps, ttft_mean_s, ttft_p99_s, tpot_mean_s,
// e2e_mean_s, e2e_p99_s, unfinished, cache_hit_rate, two fairness measures
// (below), then every goodput* / slo_attainment column the runs report. The
// fairness measures are the two first of a family-ordered list that move
// (differ between runs): when a cache-aware policy is compared (lpm, dlpm,
// dfs_weight, preble_local; cache_aware, d2lpm, preble_e2) the extend-service
// measures come first (what DLPM charges; service measures over all prompt
// tokens credit cache hits as service), else the service measures; Jain's
// index over service *rates* comes last, since it does not move when every
// request finishes (docs/reports.md, "Which fairness column"). A metric
// absent from every run is left out.
//
// Nothing is cut: every configuration is a row (the sweep's end-of-run
// print names how many it left out and the command that shows them all).
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace servesim {

struct CompareTable {
  std::vector<std::string> header;               // first "config" (aggregated) or "run" (per run)
  std::vector<std::vector<std::string>> rows;    // same width as header
};

// One run: column name -> value, and which configuration it belongs to.
struct CompareInput {
  std::string label;   // the run: its folder as given, or a sweep run's id and swept values
  std::string config;  // the configuration's label (policies + swept values), shared by repetitions
  std::string group;   // the configuration's identity (folder, or sweep folder + point id)
  std::map<std::string, std::string> values;
  std::vector<std::string> order;  // its column names in file order (for goodput / slo_ columns)
};

// Per run (`servesim compare --runs`): the old side-by-side table, one row per run.
CompareTable compare_table(const std::vector<CompareInput>& runs);

struct CompareOptions {
  std::vector<std::string> metrics;  // empty: the defaults above
  std::string baseline;              // a configuration label or 1-based row number; empty: the first
};

// One configuration's aggregate, for tests and the HTML report.
struct MetricStats {
  std::size_t n = 0;
  double mean = 0, ci95 = 0;  // NaN when undefined
};

// The aggregated table (see above). CSV-ready: numbers as plain text; the
// text form is made by format_aggregate().
CompareTable compare_aggregate(const std::vector<CompareInput>& runs, const CompareOptions& options = {});

// Aligned text of compare_aggregate's table: "mean ±ci" cells, then a second
// block with the relative difference and p-value against the baseline.
std::string format_aggregate(const CompareTable& t);

// The default metrics for these runs (see above), in order.
std::vector<std::string> default_metrics(const std::vector<CompareInput>& runs);

// Two-sided p-values. Welch: from the two samples. Paired: from the pairwise
// differences. NaN when a side has fewer than 2 values or both have no spread.
double welch_p_value(const std::vector<double>& a, const std::vector<double>& b);
double paired_p_value(const std::vector<double>& a, const std::vector<double>& b);
// P(|T| > |t|) for Student's t with df degrees of freedom (df > 0, real).
double student_t_two_sided_p(double t, double df);

// A run folder or a sweep point folder (its summary.csv): one input; a sweep
// folder (its sweep.csv): one input per run. InputError naming the folder
// when it holds neither.
std::vector<CompareInput> compare_inputs(const std::string& dir);

// Aligned text, one line per row; at most `max_rows` rows (then a line
// saying how many were left out).
std::string format_table(const CompareTable& t, std::size_t max_rows = static_cast<std::size_t>(-1));

// CsvWriter (temp and rename).
void write_compare_csv(const CompareTable& t, const std::string& path);

// The aggregated table of a sweep folder's sweep.csv on stdout (at most 40
// configurations, then a line naming how many more and `servesim compare DIR`);
// prints nothing when the folder has no sweep.csv.
void print_sweep_comparison(const std::string& sweep_dir);

}  // namespace servesim
