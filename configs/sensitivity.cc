#include "configs/sensitivity.h"

#include <atomic>
#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

#include "sim/core/error.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

// Removes the scratch folder of the extra runs on every exit path.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    static std::atomic<int> n{0};
    path = fs::temp_directory_path() / fmt::format("servesim_sensitivity_{}_{}", ::getpid(), n++);
    fs::remove_all(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void add_latency(std::vector<SensitivityRow>& rows, const char* metric, const LatencySummary& v, const LatencySummary& f,
                 const LatencySummary& s) {
  const std::pair<const char*, const std::optional<double> LatencySummary::*> stats[] = {
      {"mean", &LatencySummary::mean}, {"p50", &LatencySummary::p50}, {"p90", &LatencySummary::p90},
      {"p99", &LatencySummary::p99}};
  for (const auto& [stat, member] : stats) rows.push_back({metric, stat, v.*member, f.*member, s.*member});
}

}  // namespace

SensitivityResult run_sensitivity(const ScenarioConfig& c, const RunOutput& base, double pct) {
  if (!(pct > 0 && pct <= 20)) throw InputError(fmt::format("--sensitivity: must be in (0, 20] percent, got {}", pct));
  SensitivityResult r;
  r.pct = pct;
  r.faster_scale = c.cost_model.time_scale * (1 - pct / 100);
  r.slower_scale = c.cost_model.time_scale * (1 + pct / 100);
  for (const double s : {r.faster_scale, r.slower_scale})
    if (!(s >= 0.1 && s <= 10))
      throw InputError(fmt::format("--sensitivity {}: cost_model.time_scale {} x (1 -/+ {}) leaves [0.1, 10]", pct,
                                   c.cost_model.time_scale, pct / 100));
  const ScratchDir scratch;
  auto run_at = [&](double scale, const char* name) {
    ScenarioConfig x = c;
    x.cost_model.time_scale = scale;
    x.report.write_requests = false;  // only the summary is read: no per-request file in the scratch folder
    return execute_run(x, RunOptions{(scratch.path / name).string(), false});
  };
  const RunOutput faster = run_at(r.faster_scale, "faster");
  const RunOutput slower = run_at(r.slower_scale, "slower");
  const SummaryValues &v = base.values, &f = faster.values, &s = slower.values;
  r.rows.push_back({"throughput_rps", "", v.throughput_rps, f.throughput_rps, s.throughput_rps});
  r.rows.push_back({"output_tokens_per_s", "", v.output_tokens_per_s, f.output_tokens_per_s, s.output_tokens_per_s});
  add_latency(r.rows, "ttft_s", v.ttft, f.ttft, s.ttft);
  add_latency(r.rows, "tpot_s", v.tpot, f.tpot, s.tpot);
  add_latency(r.rows, "e2e_s", v.e2e, f.e2e, s.e2e);
  add_latency(r.rows, "queue_s", v.queue, f.queue, s.queue);
  if (v.slo_attainment) r.rows.push_back({"slo_attainment", "", v.slo_attainment, f.slo_attainment, s.slo_attainment});
  if (v.goodput_rps) r.rows.push_back({"goodput_rps", "", v.goodput_rps, f.goodput_rps, s.goodput_rps});
  return r;
}

std::string sensitivity_csv(const SensitivityResult& s) {
  std::string csv = "metric,stat,value,faster,slower,change_faster,change_slower\n";
  auto cell = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  auto change = [](const std::optional<double>& x, const std::optional<double>& base) {
    return x && base && *base != 0 ? fmt::format("{:.6f}", (*x - *base) / *base) : std::string();
  };
  for (const SensitivityRow& r : s.rows)
    csv += fmt::format("{},{},{},{},{},{},{}\n", r.metric, r.stat, cell(r.value), cell(r.faster), cell(r.slower),
                       change(r.faster, r.value), change(r.slower, r.value));
  return csv;
}

}  // namespace servesim
