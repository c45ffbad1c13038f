#include "configs/sweep_runner.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "configs/run_builder.h"
#include "reports/output_dir.h"
#include "reports/sweep_merge.h"
#include "reports/sweep_summary.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPointMeta = "point.yaml";

void write_point_meta(const fs::path& dir, const SweepPoint& p, const std::string& key, std::uint64_t seed) {
  YAML::Node n;
  n["index"] = p.index;
  n["id"] = p.id;
  n["point"] = p.point;
  n["repetition"] = p.repetition;
  n["seed"] = seed;
  n["config_key"] = key;
  n["overrides"] = YAML::Node(YAML::NodeType::Sequence);
  for (const auto& [k, v] : p.overrides) {
    YAML::Node o;
    o["key"] = k;
    o["value"] = v;
    n["overrides"].push_back(o);
  }
  YAML::Emitter e;
  e << n;
  write_file((dir / kPointMeta).string(), std::string(e.c_str()) + "\n");
}

// The config_key of a finished point: empty when it is not finished (no
// DONE), or its point.yaml is missing or unreadable (it is then re-run).
std::string finished_key(const fs::path& dir) {
  if (!fs::exists(dir / kDoneMarker)) return "";
  try {
    YAML::Node n = YAML::LoadFile((dir / kPointMeta).string());
    return n["config_key"] ? n["config_key"].as<std::string>() : "";
  } catch (const YAML::Exception&) {
    return "";
  }
}

// Size and modification time (ns) of every existing file a scalar of the
// resolved config names (trace files, profiles, models), in tree order.
void file_identities(const YAML::Node& n, std::string& out) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    std::error_code ec;
    if (s.empty() || s.size() > 4096 || !fs::is_regular_file(s, ec)) return;
    const auto size = fs::file_size(s, ec);
    if (ec) return;
    const auto mtime = fs::last_write_time(s, ec);
    if (ec) return;
    out += fmt::format("file {} size {} mtime {}\n", s, size,
                       std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count());
  } else if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) file_identities(it->second, out);
  } else if (n.IsSequence()) {
    for (const auto& x : n) file_identities(x, out);
  }
}

// The folder must hold this sweep (same identity and shard) or no sweep yet.
void check_sweep_folder(const std::string& dir, const SweepMeta& want) {
  std::optional<SweepMeta> have = read_sweep_meta(dir);
  if (!have) {
    if (fs::exists(fs::path(dir) / "points"))
      throw InputError(fmt::format("{}: holds sweep points but no {} (written by an older servesim?); remove the "
                                   "folder or choose another --out",
                                   dir, kSweepMetaFile));
    return;
  }
  if (have->identity != want.identity)
    throw InputError(fmt::format("{}: holds a different sweep ('{}' from {}, identity {}; this is '{}' from {}, "
                                 "identity {}); remove the folder or choose another --out",
                                 dir, have->name, have->file, have->identity, want.name, want.file, want.identity));
  auto shard = [](const std::string& s) { return s == "all" ? std::string("the whole sweep") : "shard " + s; };
  if (have->shard != want.shard)
    throw InputError(fmt::format("{}: holds {} of this sweep, this run is {}; give each shard its own --out", dir,
                                 shard(have->shard), shard(want.shard)));
}

// The configuration of one run: the base scenario with the sweep's `set:`,
// the point's values and --set; repetition r > 0 then replaces the seed it
// resolved to by repetition_seed(seed, r). With repeat > 1 every run is marked
// a repetition (variance.repetitions), before the sweep's own keys.
ScenarioConfig run_config(const SweepSpec& spec, const SweepPoint& p, const std::vector<std::string>& extra) {
  auto sets = spec.assignments(p);
  // Every run of a repeated point is a repetition (r = 0 too): `variance.resample: auto`
  // then resamples a trace (traces/variance_source.h), so the runs are drawn alike.
  if (spec.repeat > 1) sets.insert(sets.begin(), "variance.repetitions=true");
  sets.insert(sets.end(), extra.begin(), extra.end());
  ScenarioConfig c = load_scenario(spec.base, sets);
  if (p.repetition == 0) return c;
  sets.push_back(fmt::format("seed={}", repetition_seed(c.seed, p.repetition)));
  return load_scenario(spec.base, sets);
}

}  // namespace

std::string point_config_key(const ScenarioConfig& c) {
  const YAML::Node resolved = c.resolved();
  YAML::Emitter e;
  e << resolved;
  std::string text = std::string(e.c_str()) + "\n";
  file_identities(resolved, text);
  return hash_hex(text);
}

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& o) {
  SweepOutcome out;
  out.out_dir = o.out_dir.empty() ? "runs/sweeps/" + spec.name : o.out_dir;
  std::vector<SweepPoint> points = select_shard(spec.points, o.shard);
  out.selected = points.size();

  // Resolve every point's config before the folder is touched: a typo in the
  // grid fails fast, before hours of simulation, and a point is done only
  // when its finished run had exactly this resolved config (and input files).
  for (const auto& p : points) {
    try {
      out.keys.push_back(point_config_key(run_config(spec, p, o.extra_sets)));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: point {} ({}): {}", spec.file, p.index, p.id, e.what()));
    }
  }

  // One process per sweep folder, and one sweep per folder.
  OutputLock lock(out.out_dir);
  SweepMeta meta;
  meta.name = spec.name;
  meta.file = spec.file;
  meta.identity = spec.identity();
  std::string settings;
  for (const auto& [k, v] : spec.fixed) settings += k + "=" + v + "\n";
  settings += "--set\n";
  for (const auto& s : o.extra_sets) settings += s + "\n";
  meta.settings = hash_hex(settings);
  meta.shard = o.shard.empty() ? "all" : fmt::format("{}/{}", parse_shard(o.shard).k, parse_shard(o.shard).n);
  for (const auto& p : spec.points) meta.ids.push_back(p.id);
  check_sweep_folder(out.out_dir, meta);
  remove_outputs(out.out_dir, {"sweep.csv", "sweep_summary.csv"});
  fs::create_directories(fs::path(out.out_dir) / "points");
  write_sweep_meta(out.out_dir, meta);

  std::vector<const SweepPoint*> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (finished_key(fs::path(out.out_dir) / "points" / points[i].id) == out.keys[i])
      ++out.skipped;
    else
      todo.push_back(&points[i]);
  }

  const auto start = std::chrono::steady_clock::now();
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(todo.size())));
  if (o.progress && !todo.empty())
    fmt::print(stderr, "servesim sweep: {} runs to do ({} already done), {} at a time\n", todo.size(), out.skipped,
               jobs);
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::size_t done = 0;
  auto worker = [&] {
    for (;;) {
      std::size_t i = next.fetch_add(1);
      if (i >= todo.size()) return;
      const SweepPoint& p = *todo[i];
      fs::path dir = fs::path(out.out_dir) / "points" / p.id;
      auto t0 = std::chrono::steady_clock::now();
      std::string error;
      try {
        ScenarioConfig c = run_config(spec, p, o.extra_sets);
        // Marker first, then the point's description, then the run (which
        // removes its own earlier files and writes DONE last).
        remove_outputs(dir.string(), {kDoneMarker, kPointMeta});
        ensure_output_dir(dir.string());
        write_point_meta(dir, p, point_config_key(c), c.seed);
        // Points run in parallel keep each run on its own thread: the cores are
        // the other points' (a run's helper threads are for a run on its own).
        RunOptions ro{dir.string(), false};
        ro.background = jobs == 1;
        execute_run(c, ro);
      } catch (const std::exception& e) {
        error = e.what();
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> guard(mu);
      ++done;
      if (!error.empty()) out.failures.push_back(p.id + ": " + error);
      else ++out.ran;
      if (o.progress) {
        // Total, share and a time-left estimate (elapsed per finished run x runs left; stderr only).
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double left = elapsed / static_cast<double>(done) * static_cast<double>(todo.size() - done);
        fmt::print(stderr, "[{}/{} {:3.0f}%{}] {} {} ({:.1f} s)\n", done, todo.size(),
                   100.0 * static_cast<double>(done) / static_cast<double>(todo.size()),
                   done < todo.size() ? fmt::format(", ~{:.0f} s left", left) : std::string(", all done"), p.id,
                   error.empty() ? "done" : "FAILED", secs);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  std::sort(out.failures.begin(), out.failures.end());

  MergeOptions mo;
  mo.allow_missing = true;  // this folder holds one shard, and failed points are reported above
  const std::string csv = (fs::path(out.out_dir) / "sweep.csv").string();
  out.merged = merge_sweeps({out.out_dir}, csv, mo).points;
  write_sweep_summary(csv, summary_path_for(csv));
  return out;
}

}  // namespace servesim
