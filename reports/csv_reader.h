// Minimal RFC 4180 CSV reading for servesim's own output files (summary.csv,
// requests.csv, sweep.csv): quoted fields with doubled quotes, no embedded
// newlines. Used by `servesim merge` and `servesim plot`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

std::vector<std::string> split_csv_line(std::string_view line);

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Index of a column, or -1.
  int column(std::string_view name) const;
};

// Reads a whole (small) CSV file. Throws InputError naming file and line on a
// row whose field count differs from the header's.
CsvTable read_csv(const std::string& path);

}  // namespace servesim
