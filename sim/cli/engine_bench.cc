// Benchmark (not a test): simulates N synthetic requests (default 1,000,000)
// on 16 workers end to end — generate, route, batch, cost, and stream
// requests.csv — and prints wall time, events/s and peak memory.
//   servesim_engine_bench [--requests N] [--workers W] [--out DIR] [--repeat R]
// Peak RSS should not grow with N (requests.csv is streamed; finished requests
// are freed): compare --requests 250000 with the default. After it, whether the
// heap grew past the huge-page threshold (sim/core/heap_huge_pages.h).
//
// --templates: the same three clients (rates, own prompt and output lengths)
// with shared-prefix templates (Zipf-popular system prompts and documents,
// 64-token prefix blocks), so the prefix caches work.
// --policies fcfs,lpm,dlpm,d2lpm,preble_e2: runs each scheduling system and
// prints a wall-time table relative to the first (fcfs/lpm/dlpm route with
// least_outstanding; d2lpm = global d2lpm + local dlpm; preble_e2 = global
// preble_e2 + local preble_local). Each system writes its run folder in
// DIR/<system> (--out DIR), as each backend of --backends does, so every
// system's outputs are kept for comparison.
// --pd: the same workload and worker count as prefill/decode pools (W/2
// prefill-role + the rest decode-role workers, RDMA KV transfers with
// contention and back-pressure; docs/simulation.md), to compare its wall time
// with the colocated run.
// --backends roofline,calibrated: the same scenario priced by each cost-model
// backend (cost_model.backend), --repeat rounds, each round running every backend
// once in the listed order (alternating, so a drift in the machine's speed falls
// on all of them alike); prints each backend's min/median wall and the median and
// range over rounds of its wall (and of its CPU time, user + system) divided by the
// first backend's in the same round, then each round's wall ratio
// (issue 32 item 8: the measured model no slower than the roofline). The cost
// model is built (profile loaded and fitted) before the clock starts, as in every run.
// --scale: the scale checks (docs/performance.md), each case in its own child process
// (so each peak RSS is its own): 1M requests at 16 workers, 200k at 1,024
// workers, 10M at 16 (memory must stay flat: compare its RSS with 1M's), PD
// with KV transfers (1M), templates with prefix caching (1M); --requests
// scales every case (N, N/5, 10·N). One line per case.
// --set KEY=VALUE (repeatable): a scenario override, e.g.
// --set report.window.warmup_s=600 --set report.window.cooldown_requests=100000
// (the measurement window's memory: docs/reports.md).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "configs/run_builder.h"
#include "sim/cli/bench_scenarios.h"
#include "sim/core/heap_huge_pages.h"

using namespace servesim;

namespace {
// A scheduling system by name: (local, global).
std::pair<std::string, std::string> system_policies(const std::string& name) {
  if (name == "d2lpm") return {"dlpm", "d2lpm"};
  if (name == "preble_e2") return {"preble_local", "preble_e2"};
  return {name, "least_outstanding"};
}

std::string summary_value(const RunOutput& r, const std::string& key) {
  for (const auto& [k, v] : r.summary)
    if (k == key) return v;
  return "";
}

// "a,b,,c" -> {a, b, c}.
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> names;
  for (std::size_t a = 0; a <= list.size();) {
    const std::size_t b = std::min(list.find(',', a), list.size());
    if (b > a) names.push_back(list.substr(a, b - a));
    a = b + 1;
  }
  return names;
}

std::uint64_t total_iterations(const RunOutput& r) {
  std::uint64_t n = 0;
  for (const auto& w : r.workers) n += w.iterations;
  return n;
}

// The process's CPU time (user + system, all threads), seconds.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Runs `c` `repeat` times; `walls` gets the sorted wall times (and `cpus`, when
// given, the CPU times in run order); returns the last run.
RunOutput timed_runs(const ScenarioConfig& c, const std::string& out, int repeat, std::vector<double>& walls,
                     std::vector<double>* cpus = nullptr) {
  RunOutput r;
  for (int i = 0; i < repeat; ++i) {
    const double c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    r = execute_run(c, RunOptions{out, false});
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (cpus) cpus->push_back(cpu_seconds() - c0);
  }
  std::sort(walls.begin(), walls.end());
  return r;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}
// Whether the runs' heap grew past the huge-page threshold (sim/core/heap_huge_pages.h).
void print_memory() {
  fmt::print("  peak RSS   {:.1f} MB\n", peak_rss_mb());
  const HeapHugePagesState h = heap_huge_pages_state();
  if (!huge_pages::enabled())
    fmt::print("  heap pages small (SERVESIM_HUGE_PAGES=off)\n");
  else if (h.on)
    fmt::print("  heap pages huge past {} MiB of heap ({} madvise calls)\n", kHeapHugeAfter >> 20, h.advice_calls);
  else
    fmt::print("  heap pages small (the heap stayed under {} MiB)\n", kHeapHugeAfter >> 20);
}
}  // namespace

int main(int argc, char** argv) {
  if (const std::string bad = huge_pages::env_error(); !bad.empty()) {
    fmt::print(stderr, "engine_bench: {}\n", bad);
    return 1;
  }
  CLI::App app{"servesim engine benchmark"};
  std::uint64_t requests = 1000000;
  int workers = 16, repeat = 1;
  std::string out = (std::filesystem::temp_directory_path() / "servesim_engine_bench").string();
  app.add_option("--requests", requests, "synthetic requests");
  app.add_option("--workers", workers, "workers");
  app.add_option("--repeat", repeat, "runs (min/median/max are printed)");
  app.add_option("--out", out, "run folder (with --policies or --backends: one folder per system or backend in it)");
  bool templates = false;
  std::string policies;
  app.add_flag("--templates", templates, "clients with shared-prefix templates (prefix caching at work)");
  app.add_option("--policies", policies, "comma-separated systems to compare, e.g. fcfs,lpm,dlpm,d2lpm,preble_e2");
  bool pd = false;
  app.add_flag("--pd", pd, "prefill/decode pools (W/2 prefill + W - W/2 decode workers) with KV transfers");
  std::vector<std::string> overrides;
  app.add_option("--set", overrides, "KEY=VALUE scenario override (repeatable)");
  std::string backends;
  app.add_option("--backends", backends,
                 "comma-separated cost_model.backend values to compare in alternating rounds, e.g. roofline,calibrated");
  bool scale = false;
  app.add_flag("--scale", scale, "the scale checks (1M@16, 200k@1024, 10M@16, PD, templates), one child process each");
  CLI11_PARSE(app, argc, argv);
  // --pd: cluster.workers becomes two pools of the same total.
  auto to_pd = [&](YAML::Node& root) {
    if (!pd) return;
    if (workers < 2) throw InputError("--pd needs --workers >= 2");
    root["cluster"].remove("workers");
    YAML::Node pre, dec;
    pre["name"] = "prefill";
    pre["role"] = "prefill";
    pre["workers"] = workers / 2;
    dec["name"] = "decode";
    dec["role"] = "decode";
    dec["workers"] = workers - workers / 2;
    root["cluster"]["pools"].push_back(pre);
    root["cluster"]["pools"].push_back(dec);
    root["cluster"]["pd"]["link"] = "rdma";
  };
  // One scale case: runs in a child process and prints one line.
  auto scale_case = [&](const char* kind, std::uint64_t n, int w, bool use_templates, bool use_pd) {
    const std::string name = fmt::format("{}{}@{}", kind, n, w);
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid > 0) {
      int status = 0;
      waitpid(pid, &status, 0);
      return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    int rc = 0;
    try {
      workers = w;
      pd = use_pd;
      YAML::Node root = YAML::Load(use_templates ? bench::kTemplateScenario : bench::kScenario);
      apply_override(root, fmt::format("workload.requests={}", n));
      apply_override(root, fmt::format("cluster.workers={}", w));
      for (const auto& s : overrides) apply_override(root, s);
      to_pd(root);
      ScenarioConfig c = parse_scenario(root, "<engine_bench>");
      std::vector<double> walls;
      RunOutput r = timed_runs(c, out, 1, walls);
      fmt::print("  {:<16} {:>9} {:>7} {:>9.3f} {:>10} {:>10.2f} {:>9.1f} {:>9}\n", name, r.totals.requests, w, walls[0],
                 r.totals.events, static_cast<double>(r.totals.events) / walls[0] / 1e6, peak_rss_mb(),
                 r.totals.finished);
    } catch (const std::exception& e) {
      fmt::print(stderr, "engine_bench: {}: {}\n", name, e.what());
      rc = 1;
    }
    std::fflush(stdout);
    _exit(rc);
  };
  try {
    if (scale) {
      fmt::print("engine_bench --scale: one child process per case (peak RSS per case)\n");
      fmt::print("  {:<16} {:>9} {:>7} {:>9} {:>10} {:>10} {:>9} {:>9}\n", "case", "requests", "workers", "wall_s",
                 "events", "M_ev/s", "rss_MB", "finished");
      bool ok = scale_case("", requests, 16, false, false);
      ok = scale_case("", requests / 5, 1024, false, false) && ok;
      ok = scale_case("", requests * 10, 16, false, false) && ok;
      ok = scale_case("pd:", requests, 16, false, true) && ok;
      ok = scale_case("tmpl:", requests, 16, true, false) && ok;
      return ok ? 0 : 1;
    }
    std::vector<std::string> sets = {fmt::format("workload.requests={}", requests),
                                     fmt::format("cluster.workers={}", workers)};
    sets.insert(sets.end(), overrides.begin(), overrides.end());
    // The bench's scenario with `sets`, then `extra`, applied (and --pd's pools).
    auto config_with = [&](const std::vector<std::string>& extra) {
      YAML::Node root = YAML::Load(templates ? bench::kTemplateScenario : bench::kScenario);
      for (const auto& s : sets) apply_override(root, s);
      for (const auto& s : extra) apply_override(root, s);
      to_pd(root);
      return parse_scenario(root, "<engine_bench>");
    };
    if (!policies.empty() && !backends.empty()) throw InputError("--policies and --backends: give one of them");
    if (repeat < 1) throw InputError(fmt::format("--repeat {}: must be at least 1", repeat));
    if (!backends.empty()) {
      const std::vector<std::string> names = split_list(backends);
      if (names.size() < 2) throw InputError(fmt::format("--backends {}: name at least two backends", backends));
      std::vector<ScenarioConfig> configs;
      for (const std::string& name : names) configs.push_back(config_with({"cost_model.backend=" + name}));
      fmt::print("engine_bench: {} requests, {} workers, {} workload{}, {} alternating rounds\n", requests, workers,
                 templates ? "shared-prefix template" : "synthetic", pd ? " (PD pools)" : "", repeat);
      std::vector<std::vector<double>> walls(names.size()), ratios(names.size()), cpus(names.size()),
          cpu_ratios(names.size());
      std::vector<RunOutput> last(names.size());
      for (int round = 0; round < repeat; ++round) {
        for (std::size_t k = 0; k < names.size(); ++k) {
          std::vector<double> one;
          last[k] = timed_runs(configs[k], (std::filesystem::path(out) / names[k]).string(), 1, one, &cpus[k]);
          walls[k].push_back(one[0]);
          ratios[k].push_back(one[0] / walls[0].back());
          cpu_ratios[k].push_back(cpus[k].back() / cpus[0].back());
        }
        fmt::print(stderr, "  round {}/{} done\n", round + 1, repeat);
      }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
      };
      auto vs_first = [&](std::size_t k, const std::vector<double>& r) {
        if (k == 0) return std::string("1");
        const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
        return fmt::format("{:.3f}x ({:.3f}-{:.3f}x)", median(r), *lo, *hi);
      };
      fmt::print("  {:<12} {:>7} {:>9} {:>7} {:>8} {:>11} {:>10} {:>8}  {:<26} {}\n", "backend", "min_s", "median_s",
                 "max_s", "cpu_s", "events", "iterations", "K_req/s", "wall / first's",
                 "cpu / first's (per round: median (min-max))");
      for (std::size_t k = 0; k < names.size(); ++k) {
        const double med = median(walls[k]);
        fmt::print("  {:<12} {:>7.2f} {:>9.3f} {:>7.2f} {:>8.3f} {:>11} {:>10} {:>8.0f}  {:<26} {}\n", names[k],
                   *std::min_element(walls[k].begin(), walls[k].end()), med,
                   *std::max_element(walls[k].begin(), walls[k].end()), median(cpus[k]), last[k].totals.events,
                   total_iterations(last[k]), static_cast<double>(last[k].totals.requests) / med / 1e3, vs_first(k, ratios[k]),
                   vs_first(k, cpu_ratios[k]));
      }
      for (std::size_t k = 1; k < names.size(); ++k) {
        std::string list;
        for (double r : ratios[k]) list += fmt::format(" {:.3f}", r);
        fmt::print("  {} / {} wall, per round:{}\n", names[k], names[0], list);
      }
      print_memory();
      return 0;
    }
    if (!policies.empty()) {
      const std::vector<std::string> names = split_list(policies);
      if (names.empty()) throw InputError(fmt::format("--policies '{}': name at least one system", policies));
      fmt::print("engine_bench: {} requests, {} workers, {} workload, {} runs each\n", requests, workers,
                 templates ? "shared-prefix template" : "synthetic", repeat);
      fmt::print("  {:<10} {:>9} {:>9} {:>8} {:>9} {:>10} {:>9}\n", "system", "min_s", "median_s", "vs_first",
                 "hit_rate", "e2e_mean_s", "events");
      double first = 0;
      for (const std::string& name : names) {
        const auto [local, global] = system_policies(name);
        const ScenarioConfig c = config_with({"policy.local=" + local, "policy.global=" + global});
        std::vector<double> walls;
        RunOutput r = timed_runs(c, (std::filesystem::path(out) / name).string(), repeat, walls);
        const double med = walls[walls.size() / 2];
        if (first == 0) first = med;
        fmt::print("  {:<10} {:>9.3f} {:>9.3f} {:>7.2f}x {:>9} {:>10} {:>9}\n", name, walls.front(), med, med / first,
                   summary_value(r, "cache_hit_rate"), summary_value(r, "e2e_mean_s"), r.totals.events);
        std::fflush(stdout);
      }
      print_memory();
      return 0;
    }
    const ScenarioConfig c = config_with({});
    std::vector<double> walls;
    RunOutput r = timed_runs(c, out, repeat, walls);
    const double med = walls[walls.size() / 2];
    fmt::print("engine_bench: {} requests, {} workers{}, {} finished, {:.0f} s simulated\n", r.totals.requests,
               workers, pd ? " (PD pools)" : "", r.totals.finished, time_to_seconds(r.totals.end_time));
    fmt::print("  wall time  min {:.3f} s  median {:.3f} s  max {:.3f} s  ({} runs)\n", walls.front(), med,
               walls.back(), repeat);
    fmt::print("  events     {}  ({:.2f} M events/s, {:.0f} K requests/s)\n", r.totals.events,
               static_cast<double>(r.totals.events) / med / 1e6, static_cast<double>(r.totals.requests) / med / 1e3);
    fmt::print("  iterations {}  peak live requests {}\n", total_iterations(r), r.totals.peak_live_requests);
    print_memory();
  } catch (const std::exception& e) {
    fmt::print(stderr, "engine_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
