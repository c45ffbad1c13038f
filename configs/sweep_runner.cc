#include "configs/sweep_runner.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "configs/run_builder.h"
#include "reports/sweep_merge.h"

namespace servesim {
namespace fs = std::filesystem;

namespace {
void write_point_meta(const fs::path& dir, const SweepPoint& p) {
  YAML::Node n;
  n["index"] = p.index;
  n["id"] = p.id;
  n["overrides"] = YAML::Node(YAML::NodeType::Sequence);
  for (const auto& [k, v] : p.overrides) {
    YAML::Node o;
    o["key"] = k;
    o["value"] = v;
    n["overrides"].push_back(o);
  }
  YAML::Emitter e;
  e << n;
  std::ofstream(dir / "point.yaml") << e.c_str() << "\n";
}
}  // namespace

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& o) {
  SweepOutcome out;
  out.out_dir = o.out_dir.empty() ? "runs/sweeps/" + spec.name : o.out_dir;
  std::vector<SweepPoint> points = select_shard(spec.points, o.shard);
  out.selected = points.size();
  fs::create_directories(fs::path(out.out_dir) / "points");

  std::vector<const SweepPoint*> todo;
  for (const auto& p : points) {
    if (fs::exists(fs::path(out.out_dir) / "points" / p.id / "DONE"))
      ++out.skipped;
    else
      todo.push_back(&p);
  }
  // Validate every point's config up front: a typo in the grid fails fast,
  // before hours of simulation.
  for (const SweepPoint* p : todo) {
    auto sets = spec.assignments(*p);
    sets.insert(sets.end(), o.extra_sets.begin(), o.extra_sets.end());
    try {
      load_scenario(spec.base, sets);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: point {} ({}): {}", spec.file, p->index, p->id, e.what()));
    }
  }

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
        auto sets = spec.assignments(p);
        sets.insert(sets.end(), o.extra_sets.begin(), o.extra_sets.end());
        ScenarioConfig c = load_scenario(spec.base, sets);
        fs::remove(dir / "DONE");
        execute_run(c, RunOptions{dir.string(), false});
        write_point_meta(dir, p);
        std::ofstream(dir / "DONE").flush();
      } catch (const std::exception& e) {
        error = e.what();
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (!error.empty()) out.failures.push_back(p.id + ": " + error);
      else ++out.ran;
      if (o.progress)
        fmt::print(stderr, "[{}/{}] {} {} ({:.1f} s)\n", done, todo.size(), p.id, error.empty() ? "done" : "FAILED",
                   secs);
    }
  };
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(todo.size())));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

  out.merged = merge_sweeps({out.out_dir}, (fs::path(out.out_dir) / "sweep.csv").string()).points;
  return out;
}

}  // namespace servesim
