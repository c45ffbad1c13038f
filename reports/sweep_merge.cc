#include "reports/sweep_merge.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <yaml-cpp/yaml.h>

#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/output_dir.h"
#include "sim/core/error.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {
struct Row {
  std::size_t index = 0;
  std::string id, point, repetition, seed;
  std::map<std::string, std::string> values;
  std::vector<std::string> swept;  // this row's swept keys, in its point.yaml order
  std::vector<std::string> summary;  // its summary.csv header
};

void add_column(std::vector<std::string>& cols, const std::string& c) {
  if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
}

// "K/N" as written by run_sweep; {0, 0} for "all".
std::pair<std::size_t, std::size_t> shard_of(const SweepMeta& m, const std::string& dir) {
  if (m.shard == "all") return {0, 0};
  const auto slash = m.shard.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t k = std::stoul(m.shard.substr(0, slash)), n = std::stoul(m.shard.substr(slash + 1));
      if (k >= 1 && k <= n) return {k, n};
    }
  } catch (const std::exception&) {
  }
  throw InputError(fmt::format("{}/{}: shard: expected K/N or all, got '{}'", dir, kSweepMetaFile, m.shard));
}

void add_swept(Row& r, const std::string& column, const YAML::Node& v);

// A swept value under its snake_case column; a map value also (only) as one
// column per entry: <column>_<key>, its `name` entry as <column> itself.
void add_swept_text(Row& r, const std::string& column, const std::string& text) {
  YAML::Node v;
  try {
    v = YAML::Load(text);
  } catch (const YAML::Exception&) {
  }
  if (v.IsMap()) {
    add_swept(r, column, v);
    return;
  }
  r.values[column] = text;
  add_column(r.swept, column);
}

void add_swept(Row& r, const std::string& column, const YAML::Node& v) {
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string k = it->first.Scalar();
    const std::string c = k == "name" ? column : column + "_" + swept_column(k);
    if (it->second.IsMap()) {
      add_swept(r, c, it->second);
    } else if (it->second.IsScalar()) {
      r.values[c] = it->second.Scalar();
      add_column(r.swept, c);
    } else {
      YAML::Emitter e;
      e << YAML::Flow << it->second;
      r.values[c] = e.c_str();
      add_column(r.swept, c);
    }
  }
}

std::string list_some(const std::vector<std::string>& items, std::size_t most = 10) {
  std::string s;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) s += (i ? ", " : "") + items[i];
  if (items.size() > most) s += fmt::format(" (and {} more)", items.size() - most);
  return s;
}
}  // namespace

std::string swept_column(const std::string& key) {
  std::string c = key;
  for (char& ch : c)
    if (ch == '.' || ch == '-' || ch == ' ') ch = '_';
  return c;
}

void write_sweep_meta(const std::string& dir, const SweepMeta& m) {
  YAML::Node n;
  n["sweep"] = m.name;
  n["file"] = m.file;
  n["identity"] = m.identity;
  n["settings"] = m.settings;
  n["shard"] = m.shard;
  n["ids"] = YAML::Node(YAML::NodeType::Sequence);
  for (const auto& id : m.ids) n["ids"].push_back(id);
  YAML::Emitter e;
  e << n;
  write_file((fs::path(dir) / kSweepMetaFile).string(),
             fmt::format("# Written by servesim sweep: which sweep this folder holds (resume and merge check it).\n"
                         "{}\n",
                         e.c_str()));
}

std::optional<SweepMeta> read_sweep_meta(const std::string& dir) {
  const fs::path p = fs::path(dir) / kSweepMetaFile;
  if (!fs::exists(p)) return std::nullopt;
  try {
    YAML::Node n = YAML::LoadFile(p.string());
    SweepMeta m;
    m.name = n["sweep"].as<std::string>();
    m.file = n["file"].as<std::string>();
    m.identity = n["identity"].as<std::string>();
    m.settings = n["settings"].as<std::string>();
    m.shard = n["shard"].as<std::string>();
    for (const auto& id : n["ids"]) m.ids.push_back(id.as<std::string>());
    return m;
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: unreadable sweep metadata: {}", p.string(), e.what()));
  }
}

MergeResult merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_csv, const MergeOptions& opt) {
  SIM_CHECK(!dirs.empty(), "merge_sweeps without folders");
  // Which sweep and shard each folder holds; all must be of one sweep, and
  // the shards disjoint.
  std::vector<SweepMeta> metas;
  std::vector<std::pair<std::size_t, std::size_t>> shards;
  std::map<std::size_t, std::size_t> shard_dir;  // k -> folder
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    std::optional<SweepMeta> m = read_sweep_meta(dirs[d]);
    if (!m)
      throw InputError(fmt::format("{}: not a sweep folder of this servesim version (no {})", dirs[d], kSweepMetaFile));
    metas.push_back(*m);
    shards.push_back(shard_of(*m, dirs[d]));
    const SweepMeta& a = metas.front();
    if (m->identity != a.identity || m->ids.size() != a.ids.size())
      throw InputError(fmt::format("{} holds sweep '{}' (identity {}) but {} holds sweep '{}' (identity {}): folders of "
                                   "different sweeps cannot be merged",
                                   dirs[d], m->name, m->identity, dirs[0], a.name, a.identity));
    if (m->settings != a.settings)
      throw InputError(fmt::format("{} and {} were run with different settings (the sweep file's set: block or "
                                   "--set): their points are not comparable",
                                   dirs[d], dirs[0]));
    if (dirs.size() > 1 && shards.back().second == 0)
      throw InputError(fmt::format("{} holds the whole sweep (run without --shard): merging it with other folders "
                                   "would duplicate points",
                                   dirs[d]));
    if (shards.back().second != shards.front().second)
      throw InputError(fmt::format("{} is shard {} but {} is shard {}: shards of different splits overlap", dirs[d],
                                   m->shard, dirs[0], a.shard));
    if (auto [it, fresh] = shard_dir.emplace(shards.back().first, d); !fresh && shards.back().second != 0)
      throw InputError(fmt::format("{} and {} both hold shard {}", dirs[it->second], dirs[d], m->shard));
  }
  const SweepMeta& meta = metas.front();

  std::vector<Row> rows;
  std::vector<std::string> where(meta.ids.size());  // folder of each point found
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    fs::path points = fs::path(dirs[d]) / "points";
    if (!fs::is_directory(points)) continue;  // no point finished yet
    std::vector<fs::path> pdirs;
    for (const auto& e : fs::directory_iterator(points))
      if (e.is_directory() && fs::exists(e.path() / kDoneMarker)) pdirs.push_back(e.path());
    std::sort(pdirs.begin(), pdirs.end());
    for (const auto& p : pdirs) {
      Row r;
      YAML::Node meta_node;
      try {
        meta_node = YAML::LoadFile((p / "point.yaml").string());
        r.index = meta_node["index"].as<std::size_t>();
        r.id = meta_node["id"].as<std::string>();
        // point.yaml of a sweep without repetitions (or of an older servesim): the run is the point.
        r.point = meta_node["point"] ? meta_node["point"].as<std::string>() : r.id;
        r.repetition = meta_node["repetition"] ? meta_node["repetition"].as<std::string>() : "0";
        for (const auto& o : meta_node["overrides"])
          add_swept_text(r, swept_column(o["key"].as<std::string>()), o["value"].as<std::string>());
        if (meta_node["seed"]) r.values["seed"] = meta_node["seed"].as<std::string>();  // a swept seed is the base
      } catch (const YAML::Exception& e) {
        throw InputError(fmt::format("{}: unreadable point.yaml: {}", (p / "point.yaml").string(), e.what()));
      }
      if (r.index >= meta.ids.size() || meta.ids[r.index] != r.id || p.filename() != r.id)
        throw InputError(fmt::format("{}: point {} (index {}) is not a point of sweep '{}'", p.string(), r.id,
                                     r.index, meta.name));
      const auto [k, n] = shards[d];
      if (n != 0 && r.index % n != k - 1)
        throw InputError(fmt::format("{}: point {} is not part of the folder's shard {}", p.string(), r.id,
                                     metas[d].shard));
      if (!where[r.index].empty())
        throw InputError(fmt::format("point {} is in both {} and {}", r.id, where[r.index], dirs[d]));
      where[r.index] = dirs[d];
      CsvTable t = read_csv((p / "summary.csv").string());
      if (t.rows.size() != 1) throw InputError(fmt::format("{}: expected one row", (p / "summary.csv").string()));
      for (std::size_t i = 0; i < t.header.size(); ++i) {
        r.summary.push_back(t.header[i]);
        r.values.emplace(t.header[i], t.rows[0][i]);  // a swept key keeps its swept value
      }
      rows.push_back(std::move(r));
    }
  }

  MergeResult res;
  for (std::size_t i = 0; i < meta.ids.size(); ++i)
    if (where[i].empty()) res.missing.push_back(meta.ids[i]);
  if (!res.missing.empty() && !opt.allow_missing) {
    std::string shards_missing;
    if (const std::size_t n = shards.front().second; n != 0) {
      std::vector<std::string> ks;
      for (std::size_t k = 1; k <= n; ++k)
        if (!shard_dir.count(k)) ks.push_back(fmt::format("{}/{}", k, n));
      if (!ks.empty()) shards_missing = "; shards not given: " + list_some(ks);
    }
    throw InputError(fmt::format("{} of the {} points of sweep '{}' are missing or unfinished: {}{}; run them (a "
                                 "re-run skips finished points) or merge with --allow-missing",
                                 res.missing.size(), meta.ids.size(), meta.name, list_some(res.missing),
                                 shards_missing));
  }

  // Point order; columns in first-seen order over the rows in that order.
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
  std::vector<std::string> swept, summary;
  for (const Row& r : rows) {
    for (const auto& c : r.swept) add_column(swept, c);
    for (const auto& c : r.summary) add_column(summary, c);
  }
  res.points = rows.size();
  res.columns = {"point", "repetition", "seed", "run"};
  for (const auto& c : swept) add_column(res.columns, c);
  for (const auto& c : summary) add_column(res.columns, c);
  CsvWriter w(out_csv);
  for (const auto& c : res.columns) w.field(c);
  w.end_row();
  for (const auto& r : rows) {
    w.field(r.point).field(r.repetition);
    auto seed = r.values.find("seed");
    if (seed == r.values.end()) w.empty(); else w.field(seed->second);
    w.field(r.id);
    for (std::size_t i = 4; i < res.columns.size(); ++i) {
      auto it = r.values.find(res.columns[i]);
      if (it == r.values.end()) w.empty(); else w.field(it->second);
    }
    w.end_row();
  }
  w.close();
  return res;
}

}  // namespace servesim
