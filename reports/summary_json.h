// summary.json: summary.csv's one row as a JSON object, the same columns in
// the same order with the same values, typed: text columns (kSummaryTextColumns)
// as strings, `oracle` and `calibrated` as booleans, every other column as a
// number written exactly as in summary.csv (so both parse to the same double),
// and an empty cell (not defined) as null. A cell of a number column that is
// not a finite JSON number is written as a string rather than lost.
#pragma once
#include <string>
#include <string_view>

#include "reports/run_report.h"

namespace servesim {

// The summary.csv columns that hold text (identity and warnings).
bool is_summary_text_column(std::string_view column);

// The JSON text (one object, two-space indented, newline-terminated).
std::string summary_json(const SummaryFields& fields);

}  // namespace servesim
