// The comparison table of `servesim compare DIR...` and of the end of
// `servesim sweep`: the headline metrics of several runs side by side.
//
// A row per run: its label (the folder as given, or a sweep run's id and
// swept values) and, read by name from its summary.csv (or sweep.csv row),
// whichever of these columns exist, in this order: finished, unfinished,
// rejected, throughput_rps, output_tokens_per_s, ttft_mean_s, ttft_p99_s,
// tpot_mean_s, e2e_mean_s, e2e_p99_s, jain_service_rate, service_diff_max,
// then every column whose name starts with `goodput` or `slo_` (SLO
// attainment and goodput, when the run reports them). A column absent from
// every row is left out; a cell absent from one row is empty. Unknown
// columns are ignored, so newer summaries still compare.
//
// Text form: aligned columns, numbers with 4 significant digits (the CSV
// keeps the values as the runs wrote them).
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace servesim {

struct CompareTable {
  std::vector<std::string> header;               // "run", then the metrics
  std::vector<std::vector<std::string>> rows;    // same width as header
};

// One labelled run: column name -> value.
struct CompareInput {
  std::string label;
  std::map<std::string, std::string> values;
  std::vector<std::string> order;  // its column names in file order (for goodput / slo_ columns)
};

CompareTable compare_table(const std::vector<CompareInput>& runs);

// A run folder or a sweep point folder (its summary.csv): one input; a sweep
// folder (its sweep.csv): one input per run. InputError naming the folder
// when it holds neither.
std::vector<CompareInput> compare_inputs(const std::string& dir);

// Aligned text, one line per row; at most `max_rows` rows (then a line
// saying how many were left out).
std::string format_table(const CompareTable& t, std::size_t max_rows = static_cast<std::size_t>(-1));

// CsvWriter (temp and rename).
void write_compare_csv(const CompareTable& t, const std::string& path);

// The table of a sweep folder's sweep.csv on stdout (at most 40 rows); prints
// nothing when the folder has no sweep.csv.
void print_sweep_comparison(const std::string& sweep_dir);

}  // namespace servesim
