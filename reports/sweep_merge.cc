#include "reports/sweep_merge.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <yaml-cpp/yaml.h>

#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "sim/core/error.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {
struct Row {
  std::size_t dir = 0, index = 0;
  std::string id;
  std::map<std::string, std::string> values;
};

void add_column(std::vector<std::string>& cols, const std::string& c) {
  if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
}
}  // namespace

MergeResult merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_csv) {
  std::vector<Row> rows;
  std::vector<std::string> swept, summary;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    fs::path points = fs::path(dirs[d]) / "points";
    if (!fs::is_directory(points)) throw InputError(fmt::format("{}: not a sweep folder (no points/)", dirs[d]));
    std::vector<fs::path> pdirs;
    for (const auto& e : fs::directory_iterator(points))
      if (e.is_directory() && fs::exists(e.path() / "DONE")) pdirs.push_back(e.path());
    std::sort(pdirs.begin(), pdirs.end());
    for (const auto& p : pdirs) {
      Row r;
      r.dir = d;
      YAML::Node meta;
      try {
        meta = YAML::LoadFile((p / "point.yaml").string());
        r.index = meta["index"].as<std::size_t>();
        r.id = meta["id"].as<std::string>();
      } catch (const YAML::Exception& e) {
        throw InputError(fmt::format("{}: unreadable point.yaml: {}", (p / "point.yaml").string(), e.what()));
      }
      for (const auto& o : meta["overrides"]) {
        std::string k = o["key"].as<std::string>();
        r.values[k] = o["value"].as<std::string>();
        add_column(swept, k);
      }
      CsvTable t = read_csv((p / "summary.csv").string());
      if (t.rows.size() != 1) throw InputError(fmt::format("{}: expected one row", (p / "summary.csv").string()));
      for (std::size_t i = 0; i < t.header.size(); ++i) {
        add_column(summary, t.header[i]);
        r.values.emplace(t.header[i], t.rows[0][i]);  // a swept key keeps its swept value
      }
      rows.push_back(std::move(r));
    }
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return std::tie(a.dir, a.index) < std::tie(b.dir, b.index); });
  MergeResult res;
  res.points = rows.size();
  res.columns.push_back("point");
  for (const auto& c : swept) add_column(res.columns, c);
  for (const auto& c : summary) add_column(res.columns, c);
  CsvWriter w(out_csv);
  for (const auto& c : res.columns) w.field(c);
  w.end_row();
  for (const auto& r : rows) {
    w.field(r.id);
    for (std::size_t i = 1; i < res.columns.size(); ++i) {
      auto it = r.values.find(res.columns[i]);
      if (it == r.values.end()) w.empty(); else w.field(it->second);
    }
    w.end_row();
  }
  w.close();
  return res;
}

}  // namespace servesim
