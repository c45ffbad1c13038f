// RunReport: the RunObserver that writes a run folder:
//   requests.csv  streamed row by row as requests are reported (memory does
//                 not grow with finished requests); each reported request's
//                 row and latency samples are done on a helper thread
//                 (ReportOptions::background_rows), in report order
//   clients.csv, workers.csv, summary.csv  written by finish()
//   client_service.csv (when ReportOptions::service_series) per-client
//                 cumulative service, as the fairness measures count it, at
//                 every sample_service() time and at the end; a client's row
//                 is written only when its values changed since its last row
//   summary.json  summary.csv's row as typed JSON (reports/summary_json.h)
// Measurement window (ReportOptions::window, reports/window.h): summary.csv's
// per-request metrics (throughput, token rates, latencies, SLO attainment,
// goodput) cover the requests that arrived inside it; the fairness columns
// and clients.csv's service columns the service delivered during its time
// span (FairnessTracker; whole-run copies in the run_* columns); counts by
// status, cache and engine columns the whole run. With a window set, a
// compact record of every request is kept until finish() (memory grows with
// requests); without one nothing is kept. SLOs (ReportOptions::slo,
// reports/slo.h): per-request verdicts in requests.csv, attainment per client
// in clients.csv and overall in summary.csv, with goodput.
// Each CSV's columns are defined once, as a table of (name, writer) in
// run_report.cc. Column definitions and units: docs/reports.md (keep the two
// in sync).
// Every file is written to a temporary name and renamed when complete
// (CsvWriter); kRunOutputs lists everything execute_run writes into a run
// folder, completion marker first (it is removed first and written last).
// Percentiles come from QuantileSketch (exact up to 4096 samples per metric,
// then within 0.1% relative error).
#pragma once
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/csv_writer.h"
#include "reports/fairness_tracker.h"
#include "reports/ordered_handoff.h"
#include "reports/quantile_sketch.h"
#include "reports/slo.h"
#include "reports/window.h"
#include "sim/core/request_source.h"
#include "sim/core/service_weights.h"
#include "sim/run_observer.h"
#include "sim/simulation.h"
#include "sim/worker_stats.h"

namespace servesim {

// The files of a run folder, completion marker (DONE) first: removed before a
// run starts (stale outputs of an earlier run), DONE written last by execute_run;
// sensitivity.csv (`servesim run --sensitivity`, configs/sensitivity.h) is added
// after it, from two further runs.
inline const std::vector<std::string> kRunOutputs = {
    "DONE", "summary.csv", "requests.csv", "clients.csv", "workers.csv", "timeline.csv", "client_service.csv",
    "config.resolved.yaml", "explain.csv", "summary.json", "sensitivity.csv"};

// Ordered (column, value) pairs: the config-identity part of summary.csv.
using SummaryFields = std::vector<std::pair<std::string, std::string>>;

// One latency metric over the finished requests, in seconds; empty when no
// request finished (tpot: none had more than one output token).
struct LatencySummary {
  std::optional<double> mean, p50, p90, p99;
};

// The run-wide values of summary.csv, typed (after the identity columns).
struct SummaryValues {
  std::uint64_t requests = 0, finished = 0, rejected = 0, unfinished = 0, not_arrived = 0;
  double duration_s = 0;
  double throughput_rps = 0, input_tokens_per_s = 0, output_tokens_per_s = 0;
  LatencySummary ttft, tpot, e2e, queue;
  std::optional<double> normalized_latency_s_per_token;
  double cache_hit_rate = 0;
  std::int64_t preemptions = 0;
  FairnessTracker::Measures fairness;      // over the window's time span
  FairnessTracker::Measures fairness_run;  // over the whole run (= fairness without a window)
  std::uint64_t events = 0;
  // SLOs (over the window's requests whose client has a threshold); empty
  // when no SLO is set (per metric: when that threshold is set for no client).
  std::optional<std::uint64_t> slo_met;
  std::optional<double> slo_attainment, slo_ttft_attainment, slo_tpot_attainment, slo_e2e_attainment;
  std::optional<double> goodput_rps, goodput_output_tokens_per_s;
  // The measurement window (the whole run when none is set).
  double window_start_s = 0, window_end_s = 0;
  std::uint64_t window_requests = 0, window_finished = 0;
  // report.window is set and holds no arrival: throughput, token rates,
  // goodput and the six windowed fairness columns are undefined (empty cells,
  // not 0 or a perfect 1) and `warnings` carries an error-level entry.
  bool window_empty = false;
  std::vector<std::string> warnings;  // reports/run_warnings.h
  // Tiered KV cache: shares of first-admission prompt tokens served from the
  // host / SSD tier and recomputed (cache_hit_rate is the HBM share).
  double host_hit_rate = 0, ssd_hit_rate = 0, recompute_rate = 0;
};

// What finish() returns: the typed values, and summary.csv's row as written
// (identity columns first), for sweeps and tests that read columns by name.
struct RunSummary {
  SummaryValues values;
  SummaryFields fields;
};

// summary.csv's columns after the identity columns, in order (the names of
// the table in run_report.cc).
std::vector<std::string> summary_column_names();

struct ReportOptions {
  std::string out_dir;
  // Service weights per input (prompt) and output token: the scenario's
  // report.w_in / report.w_out; initialised from the one home of their
  // defaults (sim/core/service_weights.h) so a default-constructed options
  // object never reads garbage.
  double w_in = kDefaultWIn;
  double w_out = kDefaultWOut;
  bool write_requests = true;
  bool service_series = false;  // client_service.csv (sampled with timeline.csv)
  SloConfig slo;                // scenario `slo:`; none set: SLO columns empty
  WindowOptions window;         // report.window; none set: the whole run
  // The run's client names (filled as the workload streams): the client_name
  // columns and per-client SLOs. Null: names are client<index>.
  const ClientTable* clients = nullptr;
  // Each reported request's own work (its latency samples, its requests.csv
  // row) runs on a thread of its own once the run has reported 1,024 requests
  // (reports/ordered_handoff.h, kStartAfter); false: on the engine's thread. The outputs are
  // the same either way.
  bool background_rows = true;
};

struct LatencyStats {
  QuantileSketch ttft, tpot, e2e, queue, normalized;
};

// What the report keeps of one request (the window's records).
struct RequestRecord {
  std::optional<Time> arrival, admitted, first_token, finish;
  ClientId client = 0;
  RequestStatus status = RequestStatus::kFinished;
  std::int64_t prompt_tokens = 0, cached_tokens = 0, output_tokens = 0, generated_tokens = 0;
  std::int32_t preemptions = 0;
  SloVerdict slo;
};

// What the report keeps of one reported request until its own work (latency
// samples, requests.csv row) is done: a copy, because that work may run on
// another thread after the engine freed the request.
struct ReportedRequest {
  RequestOutcome o;  // spec and reason are cleared: the fields below hold them
  RequestId id = 0;
  ClientId client = 0;
  std::int64_t prompt_tokens = 0, output_tokens = 0;
  std::string reason;
  const std::string* client_name = nullptr;  // RunReport::row_names_ (stable)
  SloVerdict slo;
};

struct ClientAccumulator {
  std::uint64_t requests = 0, finished = 0, rejected = 0, unfinished = 0, not_arrived = 0;
  std::int64_t input_tokens = 0, cached_tokens = 0, output_tokens = 0;
  std::int64_t preemptions = 0;
  LatencyStats lat;
  // SLOs: requests with a threshold set (arrived), those meeting every
  // threshold and their output tokens; per metric, counted and met.
  std::uint64_t slo_counted = 0, slo_met = 0;
  std::int64_t slo_output_tokens = 0;
  std::uint64_t ttft_counted = 0, ttft_met = 0, tpot_counted = 0, tpot_met = 0, e2e_counted = 0, e2e_met = 0;
};

class RunReport final : public RunObserver {
 public:
  explicit RunReport(ReportOptions opt);
  void on_request(const RequestOutcome& r) override;
  void on_queued(ClientId c, Time t) override { fairness_.on_queued(c, t); }
  void on_arrival(Time t) override { fairness_.on_arrival(t); }
  void on_admitted(const RequestSpec& s, Time t, std::int64_t cached, bool first) override {
    fairness_.on_admitted(s, t, cached, first);
  }
  void on_output_tokens(ClientId c, Time t, std::int64_t n) override { fairness_.on_output_tokens(c, t, n); }
  // Appends the service of every client that changed since its last row.
  // REQUIRES: service_series; t non-decreasing; every hook at or before t delivered.
  void sample_service(Time t);

  // Writes clients/workers/summary CSVs; returns the summary (for the stdout
  // summary and sweeps).
  RunSummary finish(const ClientTable& clients, const SimulationTotals& totals,
                    const std::vector<WorkerStats>& workers, const SummaryFields& identity);
  // REQUIRES: finish() was called (until then the requests' own work may be running).
  const ClientAccumulator& overall() const { return overall_; }

 private:
  const std::string& client_name(ClientId c);
  const SloThresholds& client_slo(ClientId c);
  ReportOptions opt_;
  bool slo_any_;  // opt_.slo.any(), asked once per request
  std::unique_ptr<CsvWriter> requests_;
  std::vector<ClientAccumulator> clients_;
  ClientAccumulator overall_;
  FairnessTracker fairness_;
  Time last_finish_ = 0;
  std::vector<std::string> fallback_names_;     // client<index> without a ClientTable
  std::vector<std::optional<SloThresholds>> slo_of_;  // per client, resolved on first use
  std::vector<RequestRecord> records_;          // window set only
  struct ServiceRow {
    double service = -1, extend = -1;
    bool backlogged = false;
    bool operator==(const ServiceRow&) const = default;
  };
  std::unique_ptr<CsvWriter> service_;
  std::vector<ServiceRow> service_last_;
  Time service_t_ = -1;
  // Reported requests: on_request (the engine's thread) copies each into rows_;
  // consume() does its work, on rows_' thread until finish(). consume() alone
  // touches requests_, clients_, overall_ and records_ until then.
  void consume(const ReportedRequest& q);
  std::deque<std::string> row_names_;  // per client: its name, for rows (never moves)
  static constexpr std::size_t kRowRing = 2048;
  OrderedHandoff<ReportedRequest> rows_;  // last: stopped before the members its thread uses go
};

}  // namespace servesim
