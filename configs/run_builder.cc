#include "configs/run_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "configs/cost_noise.h"
#include "costmodel/explaining_cost_model.h"
#include "costmodel/noisy_cost_model.h"
#include "costmodel/priced_cost_model.h"
#include "costmodel/scaled_cost_model.h"
#include "reports/batch_recorder.h"
#include "reports/output_dir.h"
#include "reports/progress.h"
#include "reports/timeline_writer.h"
#include "traces/read_ahead_source.h"
#include "traces/generators/synthetic_workload.h"
#include "sim/simulation.h"
#include "sim/core/heap_huge_pages.h"
#include "sim/core/number_format.h"

namespace servesim {
namespace {

// The run-to-run cost noise's stream, apart from cost_model.estimate_noise's.
constexpr std::uint64_t kCostNoiseSalt = 0xC0575EEDull;

// Forwards engine callbacks to the report, the timeline and the progress bar (and
// polls the heap's huge pages with the progress updates).
class RunObservers final : public RunObserver {
 public:
  RunObservers(RunReport& report, ProgressBar* progress, TimelineWriter* timeline, BatchRecorder* recorder)
      : report_(report), progress_(progress), timeline_(timeline), recorder_(recorder) {}
  void on_iteration(WorkerId w, Time start, Time duration, const BatchShape& b) override {
    if (recorder_) recorder_->on_iteration(w, start, duration, b);
  }
  bool wants_iterations() const override { return recorder_ != nullptr; }
  void on_request(const RequestOutcome& r) override { report_.on_request(r); }
  void on_queued(ClientId c, Time t) override { report_.on_queued(c, t); }
  void on_arrival(Time t) override { report_.on_arrival(t); }
  void on_admitted(const RequestSpec& s, Time t, std::int64_t cached, bool first) override {
    report_.on_admitted(s, t, cached, first);
  }
  void on_output_tokens(ClientId c, Time t, std::int64_t n) override { report_.on_output_tokens(c, t, n); }
  std::optional<Time> sample_interval() const override {
    return timeline_ ? std::optional<Time>(timeline_->interval()) : std::nullopt;
  }
  void on_sample(Time t, const ClusterView& c) override {
    timeline_->sample(t, c);
    report_.sample_service(t);
  }
  void on_progress(Time now, std::uint64_t reported, std::uint64_t) override {
    if (progress_) progress_->update(now, reported);
    heap_huge_pages_poll();  // a large heap's growth in huge pages (sim/core/heap_huge_pages.h)
  }

 private:
  RunReport& report_;
  ProgressBar* progress_;
  TimelineWriter* timeline_;
  BatchRecorder* recorder_;
};

void write_resolved(const ScenarioConfig& c, const std::string& dir) {
  YAML::Emitter e;
  e << c.resolved();
  write_file(dir + "/config.resolved.yaml",
             fmt::format("# The exact configuration of this run (defaults filled in, seed included).\n"
                         "# Re-run it with: servesim run <this file>\n{}\n",
                         e.c_str()));
}

// Summary values reported by the local policies (LocalPolicy::metrics),
// merged over workers, in first-reported order, after the identity columns.
void add_policy_metrics(const Simulation& sim, SummaryFields& out) {
  struct Merged {
    std::string name;
    PolicyMetric::Merge merge;
    double sum = 0, weight = 0;
  };
  std::vector<Merged> merged;
  std::vector<PolicyMetric> m;
  for (const auto& w : sim.worker_list()) {
    m.clear();
    w->policy().metrics(m);
    for (const PolicyMetric& x : m) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const Merged& a) { return a.name == x.name; });
      if (it == merged.end()) it = merged.insert(merged.end(), Merged{x.name, x.merge});
      if (x.merge == PolicyMetric::Merge::kSum) {
        it->sum += x.value;
      } else if (x.weight > 0) {
        it->sum += x.value * x.weight;
        it->weight += x.weight;
      }
    }
  }
  for (const Merged& a : merged) {
    if (a.merge == PolicyMetric::Merge::kSum)
      out.emplace_back(a.name, fmt::format("{:.6g}", a.sum));
    else
      out.emplace_back(a.name, a.weight > 0 ? fmt::format("{:.6g}", a.sum / a.weight) : "");
  }
}

// explain.csv: busy seconds by part over all workers, parts with time only.
std::vector<ExplainRow> write_explain(const std::vector<std::shared_ptr<const ExplainingCostModel>>& explainers,
                                      const std::string& dir) {
  PartTimes sum{};
  for (const auto& e : explainers)
    for (std::size_t i = 0; i < kPartCount; ++i) sum[i] += e->busy_us()[i];
  double total = 0;
  for (double x : sum) total += x;
  std::vector<ExplainRow> rows;
  std::string csv = "part,busy_s,share\n";
  for (std::size_t i = 0; i < kPartCount; ++i) {
    if (sum[i] <= 0) continue;
    rows.push_back({std::string(kPartNames[i]), sum[i] * 1e-6, total > 0 ? sum[i] / total : 0});
    csv += fmt::format("{},{:.6f},{:.6f}\n", rows.back().part, rows.back().busy_s, rows.back().share);
  }
  write_file(dir + "/explain.csv", csv);  // temporary name, checked, renamed
  return rows;
}

}  // namespace

std::string policy_label(const YAML::Node& resolved) {
  std::string params;
  for (const auto& kv : resolved) {
    const std::string key = kv.first.as<std::string>();
    if (key == "name") continue;
    std::string value;
    if (kv.second.IsScalar()) {
      value = kv.second.as<std::string>();
      // A floating-point number as its shortest exact text (0.6, not 0.59999999999999998).
      if (value.find_first_of(".eE") != std::string::npos)
        if (auto t = shortest_double_text(value)) value = *t;
    } else {
      YAML::Emitter e;
      e << YAML::Flow << kv.second;
      value = e.c_str();
    }
    params += fmt::format("{}{}={}", params.empty() ? "" : ",", key, value);
  }
  const std::string name = resolved["name"].as<std::string>();
  return params.empty() ? name : fmt::format("{}({})", name, params);
}

std::shared_ptr<const CostModel> make_cost_model(const ScenarioConfig& c, const WorkerConfig& w) {
  if (c.cost_model.backend == CostBackend::kFixed) return std::make_shared<FixedCostModel>(c.cost_model.fixed);
  if (c.cost_model.backend == CostBackend::kCalibrated) {
    CalibratedOptions o = c.cost_model.calibrated;
    o.tp = w.tp;  // the worker's pool's
    return std::make_shared<CalibratedCostModel>(c.cost_model.fits.at(w.profile), c.model, w.hardware, w.attention, o);
  }
  RooflineOptions o = c.cost_model.roofline;
  o.tp = w.tp;
  return std::make_shared<RooflineCostModel>(c.model, w.hardware, o, w.attention);
}

namespace {

WorkerRole worker_role(PoolRole r) {
  switch (r) {
    case PoolRole::kPrefill: return WorkerRole::kPrefill;
    case PoolRole::kDecode: return WorkerRole::kDecode;
    case PoolRole::kMixed: break;
  }
  return WorkerRole::kMixed;
}

// PD: roles, links (tp NICs or NVLink ports per worker), KV bytes per token,
// the decode policy and the decider (docs/simulation.md, "KV transfer").
PdSetup make_pd_setup(const ScenarioConfig& c, const PolicyContext& decode_ctx) {
  PdSetup pd;
  const bool rdma = c.pd.link == PdLink::kRdma;
  for (const WorkerConfig& w : c.workers) {
    pd.roles.push_back(worker_role(c.pools[w.pool].role));
    const double link = (rdma ? w.hardware.interconnect.rdma_nic_gbps : w.hardware.interconnect.nvlink_gbps) * w.tp;
    pd.egress_gbps.push_back(link);
    pd.ingress_gbps.push_back(link);
    const double latency_us = rdma ? w.hardware.interconnect.rdma_latency_us : w.hardware.interconnect.nvlink_latency_us;
    pd.latency = std::max(pd.latency, seconds_to_time(latency_us * 1e-6));
    pd.kv_bytes_per_token.push_back(static_cast<double>(c.model.kv_bytes_per_token()));
    pd.layers.push_back(c.model.layers);
  }
  pd.decode_global = c.decode_global_policy.make(decode_ctx);
  pd.decider = c.pd.decider;
  pd.threshold_tokens = c.pd.threshold_tokens;
  pd.streaming = c.pd.streaming;
  return pd;
}

// cluster.kv_store (sim/kv_store.h): capacity in pages of the cluster's page
// size at the model's KV bytes per token; each worker's link from the store
// (link_gbps, else tp x its hardware's RDMA NIC bandwidth).
KvStoreSetup make_kv_store_setup(const ScenarioConfig& c) {
  KvStoreSetup s;
  const KvStoreConfig& k = c.kv_store;
  s.kv_bytes_per_token = static_cast<double>(c.model.kv_bytes_per_token());
  s.page_size = c.memory.page_size;
  s.capacity_pages =
      static_cast<std::int64_t>(std::floor(k.capacity_gb * 1e9 / (s.kv_bytes_per_token * static_cast<double>(s.page_size))));
  s.bandwidth_gbps = k.bandwidth_gbps;
  s.latency = seconds_to_time(k.latency_us * 1e-6);
  s.placement = k.placement;
  for (const WorkerConfig& w : c.workers) s.link_gbps.push_back(k.link_gbps > 0 ? k.link_gbps : w.hardware.interconnect.rdma_nic_gbps * w.tp);
  return s;
}

// summary.csv fields of a run with a cluster KV store (none without one, so
// other runs' outputs stay as they were): prompt tokens served per tier at
// first admissions over all workers, as shares of the prompt tokens, and the
// store's own counters.
void add_kv_store_metrics(const Simulation& sim, const std::vector<WorkerStats>& ws, SummaryFields& out) {
  const KvStore* store = sim.kv_store();
  if (!store) return;
  std::int64_t prompt = 0, hbm = 0, host = 0, ssd = 0, st = 0, loaded = 0;
  Time load_ns = 0;
  for (const WorkerStats& s : ws) {
    prompt += s.prompt_tokens;
    hbm += s.cached_tokens;
    host += s.host.hit_tokens;
    ssd += s.ssd.hit_tokens;
    st += s.store.hit_tokens;
    loaded += s.store.loaded_tokens;
    load_ns += s.store_load_ns;
  }
  auto share = [&](std::int64_t x) {
    return prompt > 0 ? fmt::format("{:.6g}", static_cast<double>(x) / static_cast<double>(prompt)) : std::string();
  };
  const KvTierStats& k = store->tier().stats();
  out.emplace_back("store_hit_rate", share(st));
  out.emplace_back("total_hit_rate", share(hbm + host + ssd + st));
  out.emplace_back("store_loaded_tokens", std::to_string(loaded));
  out.emplace_back("store_load_s", fmt::format("{:.6g}", time_to_seconds(load_ns)));
  out.emplace_back("store_stored_blocks", std::to_string(k.stored_blocks));
  out.emplace_back("store_dropped_blocks", std::to_string(k.dropped_blocks));
  out.emplace_back("store_peak_pages", std::to_string(k.peak_pages));
  out.emplace_back("store_capacity_pages", std::to_string(k.capacity_pages));
}

}  // namespace

RunOutput execute_run(const ScenarioConfig& c, const RunOptions& o) {
  RunOutput out;
  out.out_dir = o.out_dir.empty() ? c.report.out_dir : o.out_dir;
  // One writer per folder; the outputs of an earlier run go before anything
  // is written, so a failure leaves no stale file beside the partial ones.
  OutputLock lock(out.out_dir);
  remove_outputs(out.out_dir, kRunOutputs);
  write_resolved(c, out.out_dir);

  ClientTable clients;
  // The requests are read or generated ahead on a thread of their own (traces/read_ahead_source.h).
  std::unique_ptr<RequestSource> source = std::make_unique<ReadAheadSource>(
      [&](ClientTable& t) { return with_variance(c.workload->open(t, c.seed), c.variance, c.seed); }, clients,
      o.background);

  SimulationSetup setup;
  setup.max_context = c.model.max_context;
  setup.horizon = c.horizon;
  PolicyContext pctx{c.workers.size(), c.seed};
  if (c.disaggregated()) {  // each routing policy sees its pool only (sim/pool_view.h)
    std::size_t prefill = 0, decode = 0;
    for (const WorkerConfig& w : c.workers) {
      prefill += c.pools[w.pool].role != PoolRole::kDecode;
      decode += c.pools[w.pool].role != PoolRole::kPrefill;
    }
    pctx.workers = prefill;
    setup.pd = make_pd_setup(c, PolicyContext{decode, c.seed});
  }
  setup.global = c.global_policy.make(pctx);
  if (c.kv_store.enabled()) setup.store = make_kv_store_setup(c);
  // One cost model instance per distinct worker (equal by value: hardware,
  // attention, KV capacity, profile); workers equal to an earlier one share it.
  const std::vector<std::size_t> first = first_equal_worker(c.workers);
  std::vector<std::shared_ptr<const CostModel>> cost_of(c.workers.size());
  std::vector<std::shared_ptr<const ExplainingCostModel>> explainers;
  for (std::size_t i = 0; i < c.workers.size(); ++i) {
    const WorkerConfig& w = c.workers[i];
    WorkerSetup ws;
    const PoolConfig* pool = c.pools.empty() ? nullptr : &c.pools[w.pool];
    ws.policy = pool && pool->local_policy ? pool->local_policy->make(pctx) : c.local_policy.make(pctx);
    auto& cost = cost_of[first[i]];
    if (!cost) cost = priced(make_cost_model(c, w));  // the pricing fast path where the backend has one
    ws.cost = cost;
    // Policies may see a noisy estimate of the same model (cost_model.estimate_noise).
    if (c.cost_model.estimate_noise > 0)
      ws.estimate_cost = std::make_shared<NoisyCostModel>(cost, c.cost_model.estimate_noise, c.seed);
    // Repetitions may price the truth with run-to-run noise (variance.cost_noise);
    // policies keep estimating with the noiseless model.
    if (const double sigma = cost_noise_sigma(c, w); sigma > 0) {
      if (!ws.estimate_cost) ws.estimate_cost = cost;
      ws.cost = std::make_shared<NoisyCostModel>(cost, sigma, c.seed ^ kCostNoiseSalt,
                                                 fmt::format("run-to-run noise sigma={:.4g} (variance.cost_noise)", sigma));
    }
    // cost_model.time_scale: the engine's iterations take s times the price; policies
    // keep estimating with the unscaled model.
    if (c.cost_model.time_scale != 1) {
      if (!ws.estimate_cost) ws.estimate_cost = cost;
      ws.cost = std::make_shared<ScaledCostModel>(ws.cost, c.cost_model.time_scale);
    }
    if (o.substitute_cost) {  // the engine runs on the substitute; policies keep the plain model
      if (!ws.estimate_cost) ws.estimate_cost = cost;
      ws.cost = o.substitute_cost(ws.cost);
    }
    if (o.explain) {  // the engine's iterations are recorded; policies keep the plain model
      if (!ws.estimate_cost) ws.estimate_cost = cost;
      explainers.push_back(std::make_shared<ExplainingCostModel>(ws.cost));
      ws.cost = explainers.back();
    }
    ws.batching = pool ? pool->batching : c.batching;
    ws.kv_capacity_pages = w.kv.pages;
    ws.page_size = c.memory.page_size;
    ws.kv_eviction = make_kv_eviction(w.attention);  // null, or private KV shrinks after prefill
    ws.kv_tiers = w.kv_tiers;  // lower KV tiers (sim/kv_tier.h), when enabled
    ws.kv_bytes_per_token = static_cast<double>(c.model.kv_bytes_per_token());
    ws.host_default_gbps = c.tp * w.hardware.pcie_gbps;
    out.capacities.push_back(w.kv);
    setup.workers.push_back(std::move(ws));
  }
  out.cost_identity = setup.workers.front().cost->identity();
  out.calibrated = setup.workers.front().cost->calibrated();

  const ReportConfig& rc = c.report;
  RunReport report(ReportOptions{out.out_dir, rc.w_in, rc.w_out, rc.write_requests, rc.timeline_interval > 0, c.slo,
                                 c.window, &clients, o.background});
  std::optional<std::uint64_t> total;
  if (auto* s = dynamic_cast<const SyntheticWorkload*>(c.workload.get()); s && !s->spec().stop.duration_s)
    total = static_cast<std::uint64_t>(*s->spec().stop.count);
  ProgressBar progress(total);
  std::unique_ptr<TimelineWriter> timeline;
  if (rc.timeline_interval > 0)
    timeline = std::make_unique<TimelineWriter>(out.out_dir + "/timeline.csv", rc.timeline_interval);
  std::unique_ptr<BatchRecorder> recorder;
  if (!o.record_batches.empty()) {
    std::vector<BatchRecordWorker> rw;
    for (std::size_t i = 0; i < c.workers.size(); ++i) {
      const AttentionMethods& a = c.workers[i].attention;
      std::shared_ptr<const CostModel> cost = cost_of[first[i]];
      rw.push_back({[cost](const BatchShape& b) {
                      const PartTimes p = cost->parts(b);
                      return std::vector<double>(p.begin(), p.end());
                    },
                    cost->identity(),
                    fmt::format("{}/{}/{}", method_name(a.prefill), method_name(a.decode), method_name(a.kv)),
                    a.describe(), c.workers[i].hardware.name});
    }
    recorder = std::make_unique<BatchRecorder>(
        BatchRecordOptions{o.record_batches, o.record_every, c.model.name, c.tp,
                           std::vector<std::string>(kPartNames.begin(), kPartNames.end())},
        std::move(rw));
  }
  RunObservers observers(report, o.progress ? &progress : nullptr, timeline.get(), recorder.get());
  Simulation sim(std::move(setup), *source, observers);
  out.totals = sim.run();
  if (o.progress) progress.update(out.totals.end_time, out.totals.requests, true);
  for (const auto& w : sim.worker_list()) {
    out.workers.push_back(w->stats());
    if (!c.pools.empty()) {
      const PoolConfig& p = c.pools[c.workers[w->id()].pool];
      out.workers.back().pool = p.name;
      out.workers.back().role = pool_role_name(p.role);
    }
  }
  if (timeline) timeline->close();
  if (recorder) recorder->close();
  if (o.explain) out.explain = write_explain(explainers, out.out_dir);

  SummaryFields identity = {
      {"scenario", c.name},
      {"seed", std::to_string(c.seed)},
      {"model", c.model.name},
      {"hardware", c.hardware.name},
      {"workers", std::to_string(c.workers.size())},
      {"tp", std::to_string(c.tp)},
      {"policy_local", policy_label(c.local_policy.resolved)},
      {"policy_global", policy_label(c.global_policy.resolved)},
      {"oracle", c.local_policy.oracle || c.global_policy.oracle ? "true" : "false"},
      {"batching_mode", c.batching.mode == BatchMode::kMixed ? "mixed" : "prefill_first"},
      {"cost_model", out.cost_identity},
      {"calibrated", out.calibrated ? "true" : "false"},
  };
  add_policy_metrics(sim, identity);
  add_kv_store_metrics(sim, out.workers, identity);
  RunSummary summary = report.finish(clients, out.totals, out.workers, identity);
  out.summary = std::move(summary.fields);
  out.values = summary.values;
  write_file(out.out_dir + "/" + kDoneMarker, "");  // last: every file above was committed
  return out;
}

}  // namespace servesim
