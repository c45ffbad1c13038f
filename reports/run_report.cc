#include "reports/run_report.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "reports/run_warnings.h"
#include "reports/summary_json.h"
#include "sim/core/error.h"

namespace servesim {
namespace {

RequestRecord make_record(const ReportedRequest& q) {
  const RequestOutcome& r = q.o;
  RequestRecord x;
  x.arrival = r.arrival;
  x.admitted = r.admitted;
  x.first_token = r.first_token;
  x.finish = r.finish;
  x.client = q.client;
  x.status = r.status;
  x.prompt_tokens = q.prompt_tokens;
  x.cached_tokens = r.cached_tokens;
  x.output_tokens = q.output_tokens;
  x.generated_tokens = r.generated_tokens;
  x.preemptions = r.preemptions;
  x.slo = q.slo;
  return x;
}

// Counts r into `a`: everything but the latency sketches.
void count_request(ClientAccumulator& a, const RequestRecord& r) {
  a.requests++;
  switch (r.status) {
    case RequestStatus::kFinished: a.finished++; break;
    case RequestStatus::kRejected: a.rejected++; break;
    case RequestStatus::kUnfinished: a.unfinished++; break;
    case RequestStatus::kNotArrived: a.not_arrived++; break;
  }
  if (r.admitted) {
    a.input_tokens += r.prompt_tokens;
    a.cached_tokens += r.cached_tokens;
  }
  a.output_tokens += r.generated_tokens;
  a.preemptions += r.preemptions;
  if (r.status != RequestStatus::kNotArrived && r.slo.counted) {  // unfinished: counted, not met
    a.slo_counted++;
    a.ttft_counted += r.slo.has_ttft;
    a.tpot_counted += r.slo.has_tpot;
    a.e2e_counted += r.slo.has_e2e;
    a.ttft_met += r.slo.ttft.value_or(false);
    a.tpot_met += r.slo.tpot.value_or(false);
    a.e2e_met += r.slo.e2e.value_or(false);
    if (r.slo.meets()) {
      a.slo_met++;
      a.slo_output_tokens += r.generated_tokens;
    }
  }
}

// Accounts r to its client's accumulator and to the overall one (two
// different objects): counts, and a finished request's latencies in both
// accumulators' sketches (QuantileSketch::add_both: each value's bucket
// computed once).
void account(ClientAccumulator& client, ClientAccumulator& all, const RequestRecord& r) {
  count_request(client, r);
  count_request(all, r);
  if (r.status != RequestStatus::kFinished) return;
  const double arrival = time_to_seconds(*r.arrival), finish = time_to_seconds(*r.finish);
  const double first = time_to_seconds(*r.first_token);
  QuantileSketch::add_both(client.lat.ttft, all.lat.ttft, first - arrival);
  QuantileSketch::add_both(client.lat.e2e, all.lat.e2e, finish - arrival);
  QuantileSketch::add_both(client.lat.queue, all.lat.queue, time_to_seconds(*r.admitted) - arrival);
  QuantileSketch::add_both(client.lat.normalized, all.lat.normalized,
                           (finish - arrival) / static_cast<double>(r.output_tokens));
  if (r.output_tokens > 1)
    QuantileSketch::add_both(client.lat.tpot, all.lat.tpot,
                             (finish - first) / static_cast<double>(r.output_tokens - 1));
}

// A CSV column: its name and how a row writes it, side by side, so header
// and values cannot drift apart.
template <class Row>
struct Column {
  std::string name;
  std::function<void(CsvWriter&, const Row&)> write;
};

template <class Row>
void write_header(CsvWriter& w, const std::vector<Column<Row>>& columns) {
  for (const Column<Row>& c : columns) w.field(std::string_view(c.name));
  w.end_row();
}

template <class Row>
void write_row(CsvWriter& w, const std::vector<Column<Row>>& columns, const Row& row) {
  for (const Column<Row>& c : columns) c.write(w, row);
  w.end_row();
}

// The four latency metrics, in column order.
struct LatencyMetric {
  const char* name;
  const QuantileSketch LatencyStats::*sketch;
};
constexpr LatencyMetric kLatencyMetrics[] = {
    {"ttft", &LatencyStats::ttft}, {"tpot", &LatencyStats::tpot}, {"e2e", &LatencyStats::e2e},
    {"queue", &LatencyStats::queue}};

// <metric>_{mean,p50,p90,p99,max}_s for every metric; empty cells when the
// metric has no sample. `stats` picks a row's LatencyStats.
template <class Row>
void add_latency_columns(std::vector<Column<Row>>& columns, const LatencyStats& (*stats)(const Row&)) {
  using Stat = double (*)(const QuantileSketch&);
  const std::pair<const char*, Stat> kStats[] = {
      {"mean", [](const QuantileSketch& q) { return q.mean(); }},
      {"p50", [](const QuantileSketch& q) { return q.quantile(0.5); }},
      {"p90", [](const QuantileSketch& q) { return q.quantile(0.9); }},
      {"p99", [](const QuantileSketch& q) { return q.quantile(0.99); }},
      {"max", [](const QuantileSketch& q) { return q.max(); }}};
  for (const LatencyMetric& m : kLatencyMetrics)
    for (const auto& [stat_name, stat] : kStats)
      columns.push_back({fmt::format("{}_{}_s", m.name, stat_name), [sketch = m.sketch, stat = stat, stats](CsvWriter& w, const Row& r) {
                           const QuantileSketch& q = stats(r).*sketch;
                           q.count() ? w.seconds(stat(q)) : w.empty();
                         }});
}

// requests.csv's columns in order (one row per reported request): each a name
// and how a row writes it, side by side, so header and values cannot drift
// apart. `col(name, write)` is called once per column; write(w, row.o, row)
// writes the cell. A template
// over `col` rather than a table of std::function: writing a row (once per
// request) is then one inlined sequence of field writes.
template <class Col>
void request_columns(Col&& col) {
  using R = RequestOutcome;
  using Row = ReportedRequest;
  auto time = [](CsvWriter& w, const std::optional<Time>& t) { t ? w.seconds_ns(*t) : w.empty(); };
  auto verdict = [](CsvWriter& w, const std::optional<bool>& v) { v ? w.field(static_cast<int>(*v)) : w.empty(); };
  col("id", [](CsvWriter& w, const R&, const Row& row) { w.field(row.id); });
  col("client", [](CsvWriter& w, const R&, const Row& row) { w.field(static_cast<std::int64_t>(row.client)); });
  col("client_name", [](CsvWriter& w, const R&, const Row& row) { w.field(*row.client_name); });
  col("worker", [](CsvWriter& w, const R& r, const Row&) {
    r.routed ? w.field(static_cast<std::int64_t>(r.worker)) : w.empty();
  });
  col("arrival_s", [time](CsvWriter& w, const R& r, const Row&) { time(w, r.arrival); });
  col("admitted_s", [time](CsvWriter& w, const R& r, const Row&) { time(w, r.admitted); });
  col("first_token_s", [time](CsvWriter& w, const R& r, const Row&) { time(w, r.first_token); });
  col("finish_s", [time](CsvWriter& w, const R& r, const Row&) { time(w, r.finish); });
  col("ttft_s", [](CsvWriter& w, const R& r, const Row&) {
    r.first_token && r.arrival ? w.seconds_ns(*r.first_token - *r.arrival) : w.empty();
  });
  col("tpot_s", [](CsvWriter& w, const R& r, const Row& row) {
    if (r.finish && row.output_tokens > 1)
      w.seconds(time_to_seconds(*r.finish - *r.first_token) / static_cast<double>(row.output_tokens - 1));
    else
      w.empty();
  });
  col("e2e_s", [](CsvWriter& w, const R& r, const Row&) { r.finish ? w.seconds_ns(*r.finish - *r.arrival) : w.empty(); });
  col("prompt_tokens", [](CsvWriter& w, const R&, const Row& row) { w.field(row.prompt_tokens); });
  col("cached_tokens", [](CsvWriter& w, const R& r, const Row&) { w.field(r.cached_tokens); });
  col("output_tokens", [](CsvWriter& w, const R&, const Row& row) { w.field(row.output_tokens); });
  col("generated_tokens", [](CsvWriter& w, const R& r, const Row&) { w.field(r.generated_tokens); });
  col("preemptions", [](CsvWriter& w, const R& r, const Row&) { w.field(static_cast<std::int64_t>(r.preemptions)); });
  col("status", [](CsvWriter& w, const R& r, const Row&) { w.plain(status_name(r.status)); });  // unquoted: csv_writer_test
  col("reason", [](CsvWriter& w, const R&, const Row& row) { w.field(std::string_view(row.reason)); });
  col("slo_ttft_met", [verdict](CsvWriter& w, const R&, const Row& row) { verdict(w, row.slo.ttft); });
  col("slo_tpot_met", [verdict](CsvWriter& w, const R&, const Row& row) { verdict(w, row.slo.tpot); });
  col("slo_e2e_met", [verdict](CsvWriter& w, const R&, const Row& row) { verdict(w, row.slo.e2e); });
  col("slo_met", [verdict](CsvWriter& w, const R&, const Row& row) { verdict(w, row.slo.met); });
  // PD placement and hand-off (docs/reports.md); appended so earlier columns keep their positions.
  col("prefill_worker", [](CsvWriter& w, const R& r, const Row&) {
    r.prefill_worker ? w.field(static_cast<std::int64_t>(*r.prefill_worker)) : w.empty();
  });
  col("decode_worker", [](CsvWriter& w, const R& r, const Row&) {
    r.decode_worker ? w.field(static_cast<std::int64_t>(*r.decode_worker)) : w.empty();
  });
  col("transfer_start_s", [time](CsvWriter& w, const R& r, const Row&) { time(w, r.transfer_start); });
  col("transfer_end_s", [time](CsvWriter& w, const R& r, const Row&) { time(w, r.transfer_end); });
  col("transfer_bytes", [](CsvWriter& w, const R& r, const Row&) {
    r.transfer_bytes ? w.field(*r.transfer_bytes) : w.empty();
  });
  col("kv_wait_s", [](CsvWriter& w, const R& r, const Row&) { r.kv_wait ? w.seconds_ns(*r.kv_wait) : w.empty(); });
}

void write_request_header(CsvWriter& w) {
  request_columns([&w](const char* name, const auto&) { w.field(std::string_view(name)); });
  w.end_row();
}

void write_request_row(CsvWriter& w, const ReportedRequest& row) {
  request_columns([&](const char*, const auto& write) { write(w, row.o, row); });
  w.end_row();
}

// clients.csv: one row per client. Counts and tokens: the whole run;
// throughput and latencies: the window's requests; service and backlog: the
// window's time span (the run_* copies: the whole run). Without a window the
// window is the whole run.
struct ClientRow {
  std::string name;
  const ClientAccumulator* a;
  double service, extend_service, backlogged_s, service_span;  // the window's time span
  double span;                      // the window's length (the run's without one)
  const ClientAccumulator* window;  // the client's requests in the measurement window
  bool has_slo;
  double run_service, run_extend_service, run_backlogged_s, run_span;
};

const std::vector<Column<ClientRow>>& client_columns() {
  using R = ClientRow;
  static const std::vector<Column<R>> columns = [] {
    std::vector<Column<R>> c = {
        {"client", [](CsvWriter& w, const R& r) { w.field(r.name); }},
        {"requests", [](CsvWriter& w, const R& r) { w.field(r.a->requests); }},
        {"finished", [](CsvWriter& w, const R& r) { w.field(r.a->finished); }},
        {"rejected", [](CsvWriter& w, const R& r) { w.field(r.a->rejected); }},
        {"unfinished", [](CsvWriter& w, const R& r) { w.field(r.a->unfinished); }},
        {"not_arrived", [](CsvWriter& w, const R& r) { w.field(r.a->not_arrived); }},
        {"input_tokens", [](CsvWriter& w, const R& r) { w.field(r.a->input_tokens); }},
        {"cached_tokens", [](CsvWriter& w, const R& r) { w.field(r.a->cached_tokens); }},
        {"output_tokens", [](CsvWriter& w, const R& r) { w.field(r.a->output_tokens); }},
        {"service", [](CsvWriter& w, const R& r) { w.amount(r.service); }},
        {"service_rate_per_s", [](CsvWriter& w, const R& r) { w.field(r.service / r.service_span); }},
        {"extend_service", [](CsvWriter& w, const R& r) { w.amount(r.extend_service); }},
        {"backlogged_s", [](CsvWriter& w, const R& r) { w.field(r.backlogged_s); }},
        {"throughput_rps", [](CsvWriter& w, const R& r) { w.field(static_cast<double>(r.window->finished) / r.span); }},
        {"preemptions", [](CsvWriter& w, const R& r) { w.field(r.a->preemptions); }},
    };
    add_latency_columns<R>(c, [](const R& r) -> const LatencyStats& { return r.window->lat; });
    c.push_back({"slo_met", [](CsvWriter& w, const R& r) { r.has_slo ? w.field(r.window->slo_met) : w.empty(); }});
    c.push_back({"slo_attainment", [](CsvWriter& w, const R& r) {
                   r.has_slo && r.window->slo_counted
                       ? w.field(static_cast<double>(r.window->slo_met) / static_cast<double>(r.window->slo_counted))
                       : w.empty();
                 }});
    // Whole-run service (the columns above follow the measurement window).
    c.push_back({"run_service", [](CsvWriter& w, const R& r) { w.amount(r.run_service); }});
    c.push_back({"run_service_rate_per_s", [](CsvWriter& w, const R& r) { w.field(r.run_service / r.run_span); }});
    c.push_back({"run_extend_service", [](CsvWriter& w, const R& r) { w.amount(r.run_extend_service); }});
    c.push_back({"run_backlogged_s", [](CsvWriter& w, const R& r) { w.field(r.run_backlogged_s); }});
    return c;
  }();
  return columns;
}

// workers.csv: one row per worker.
// Prompt tokens at first admission served by no cache tier (computed).
std::int64_t recomputed_tokens(const WorkerStats& s) {
  return s.prompt_tokens - s.cached_tokens - s.host.hit_tokens - s.ssd.hit_tokens;
}
// tokens / prompt_tokens; an empty field when the worker admitted no prompt (a decode-role
// worker, or one no request reached): there is no rate to give, and 0 would read as "no hits".
void write_prompt_share(CsvWriter& w, const WorkerStats& s, std::int64_t tokens) {
  if (s.prompt_tokens == 0)
    w.field(std::string_view{});
  else
    w.field(static_cast<double>(tokens) / static_cast<double>(s.prompt_tokens));
}

struct WorkerRow {
  std::int64_t index;
  const WorkerStats* s;
  double span;
};

const std::vector<Column<WorkerRow>>& worker_columns() {
  using R = WorkerRow;
  static const std::vector<Column<R>> columns = {
      {"worker", [](CsvWriter& w, const R& r) { w.field(r.index); }},
      {"iterations", [](CsvWriter& w, const R& r) { w.field(r.s->iterations); }},
      {"busy_s", [](CsvWriter& w, const R& r) { w.seconds_ns(r.s->busy_ns); }},
      {"busy_fraction", [](CsvWriter& w, const R& r) { w.field(time_to_seconds(r.s->busy_ns) / r.span); }},
      {"prefill_tokens", [](CsvWriter& w, const R& r) { w.field(r.s->prefill_tokens); }},
      {"decode_tokens", [](CsvWriter& w, const R& r) { w.field(r.s->decode_tokens); }},
      {"prompt_tokens", [](CsvWriter& w, const R& r) { w.field(r.s->prompt_tokens); }},
      {"cached_tokens", [](CsvWriter& w, const R& r) { w.field(r.s->cached_tokens); }},
      {"cache_hit_rate", [](CsvWriter& w, const R& r) { write_prompt_share(w, *r.s, r.s->cached_tokens); }},
      {"admitted", [](CsvWriter& w, const R& r) { w.field(r.s->admitted); }},
      {"finished", [](CsvWriter& w, const R& r) { w.field(r.s->finished); }},
      {"preemptions", [](CsvWriter& w, const R& r) { w.field(r.s->preemptions); }},
      {"peak_kv_pages", [](CsvWriter& w, const R& r) { w.field(r.s->peak_kv_pages); }},
      {"kv_capacity_pages", [](CsvWriter& w, const R& r) { w.field(r.s->kv_capacity_pages); }},
      {"peak_kv_fraction", [](CsvWriter& w, const R& r) {
         w.field(static_cast<double>(r.s->peak_kv_pages) /
                 static_cast<double>(std::max<std::int64_t>(1, r.s->kv_capacity_pages)));
       }},
      {"peak_running", [](CsvWriter& w, const R& r) { w.field(r.s->peak_running); }},
      {"peak_waiting", [](CsvWriter& w, const R& r) { w.field(r.s->peak_waiting); }},
      // Tiered KV cache (zeros without kv_cache tiers; docs/reports.md).
      {"host_hit_tokens", [](CsvWriter& w, const R& r) { w.field(r.s->host.hit_tokens); }},
      {"ssd_hit_tokens", [](CsvWriter& w, const R& r) { w.field(r.s->ssd.hit_tokens); }},
      {"host_hit_rate", [](CsvWriter& w, const R& r) { write_prompt_share(w, *r.s, r.s->host.hit_tokens); }},
      {"ssd_hit_rate", [](CsvWriter& w, const R& r) { write_prompt_share(w, *r.s, r.s->ssd.hit_tokens); }},
      {"recompute_rate", [](CsvWriter& w, const R& r) { write_prompt_share(w, *r.s, recomputed_tokens(*r.s)); }},
      {"kv_load_s", [](CsvWriter& w, const R& r) { w.seconds_ns(r.s->kv_load_ns); }},
      {"kv_stall_s", [](CsvWriter& w, const R& r) { w.seconds_ns(r.s->kv_stall_ns); }},
      {"host_peak_pages", [](CsvWriter& w, const R& r) { w.field(r.s->host.peak_pages); }},
      {"host_capacity_pages", [](CsvWriter& w, const R& r) { w.field(r.s->host.capacity_pages); }},
      {"ssd_peak_pages", [](CsvWriter& w, const R& r) { w.field(r.s->ssd.peak_pages); }},
      {"ssd_capacity_pages", [](CsvWriter& w, const R& r) { w.field(r.s->ssd.capacity_pages); }},
      {"pool", [](CsvWriter& w, const R& r) { w.field(r.s->pool); }},
      {"role", [](CsvWriter& w, const R& r) { w.field(r.s->role); }},
      {"handoffs", [](CsvWriter& w, const R& r) { w.field(r.s->handoffs); }},
      {"received", [](CsvWriter& w, const R& r) { w.field(r.s->received); }},
  };
  return columns;
}

// summary.csv after the identity columns: name and text of each typed value.
// Counts as integers, seconds with 6 decimals, rates with 6 significant
// digits; an empty optional is an empty cell.
std::string num(double v) { return fmt::format("{:.6g}", v); }
std::string sec(double v) { return fmt::format("{:.6f}", v); }
std::string sec(const std::optional<double>& v) { return v ? sec(*v) : ""; }
std::string opt_num(const std::optional<double>& v) { return v ? num(*v) : ""; }
// A rate or fairness value over the measurement window: empty when the window
// holds no request (no data is not 0 req/s, and no service is not "perfectly fair").
std::string in_window(const SummaryValues& v, double x) { return v.window_empty ? std::string() : num(x); }

const std::vector<std::pair<std::string, std::function<std::string(const SummaryValues&)>>>& summary_columns() {
  using V = SummaryValues;
  using Entry = std::pair<std::string, std::function<std::string(const V&)>>;
  static const std::vector<Entry> columns = [] {
    std::vector<Entry> c = {
        {"requests", [](const V& v) { return std::to_string(v.requests); }},
        {"finished", [](const V& v) { return std::to_string(v.finished); }},
        {"rejected", [](const V& v) { return std::to_string(v.rejected); }},
        {"unfinished", [](const V& v) { return std::to_string(v.unfinished); }},
        {"not_arrived", [](const V& v) { return std::to_string(v.not_arrived); }},
        {"duration_s", [](const V& v) { return sec(v.duration_s); }},
        {"throughput_rps", [](const V& v) { return in_window(v, v.throughput_rps); }},
        {"input_tokens_per_s", [](const V& v) { return in_window(v, v.input_tokens_per_s); }},
        {"output_tokens_per_s", [](const V& v) { return in_window(v, v.output_tokens_per_s); }},
    };
    const std::pair<const char*, LatencySummary V::*> metrics[] = {
        {"ttft", &V::ttft}, {"tpot", &V::tpot}, {"e2e", &V::e2e}, {"queue", &V::queue}};
    const std::pair<const char*, std::optional<double> LatencySummary::*> stats[] = {
        {"mean", &LatencySummary::mean}, {"p50", &LatencySummary::p50}, {"p90", &LatencySummary::p90},
        {"p99", &LatencySummary::p99}};
    for (const auto& [metric, lat] : metrics)
      for (const auto& [stat, value] : stats)
        c.push_back({fmt::format("{}_{}_s", metric, stat), [lat = lat, value = value](const V& v) { return sec(v.*lat.*value); }});
    const std::vector<Entry> rest = {
        {"normalized_latency_mean_s_per_token",
         [](const V& v) { return v.normalized_latency_s_per_token ? num(*v.normalized_latency_s_per_token) : ""; }},
        {"cache_hit_rate", [](const V& v) { return num(v.cache_hit_rate); }},
        {"preemptions", [](const V& v) { return std::to_string(v.preemptions); }},
        {"service_diff_max", [](const V& v) { return in_window(v, v.fairness.diff_max); }},
        {"service_diff_mean", [](const V& v) { return in_window(v, v.fairness.diff_mean); }},
        {"extend_service_diff_max", [](const V& v) { return in_window(v, v.fairness.extend_diff_max); }},
        {"extend_service_diff_mean", [](const V& v) { return in_window(v, v.fairness.extend_diff_mean); }},
        {"jain_service_rate", [](const V& v) { return in_window(v, v.fairness.jain); }},
        {"jain_extend_service_rate", [](const V& v) { return in_window(v, v.fairness.jain_extend); }},
        // The same over the whole run (the six above follow the measurement window).
        {"run_service_diff_max", [](const V& v) { return num(v.fairness_run.diff_max); }},
        {"run_service_diff_mean", [](const V& v) { return num(v.fairness_run.diff_mean); }},
        {"run_extend_service_diff_max", [](const V& v) { return num(v.fairness_run.extend_diff_max); }},
        {"run_extend_service_diff_mean", [](const V& v) { return num(v.fairness_run.extend_diff_mean); }},
        {"run_jain_service_rate", [](const V& v) { return num(v.fairness_run.jain); }},
        {"run_jain_extend_service_rate", [](const V& v) { return num(v.fairness_run.jain_extend); }},
        {"events", [](const V& v) { return std::to_string(v.events); }},
        {"slo_met", [](const V& v) { return v.slo_met ? std::to_string(*v.slo_met) : std::string(); }},
        {"slo_attainment", [](const V& v) { return opt_num(v.slo_attainment); }},
        {"slo_ttft_attainment", [](const V& v) { return opt_num(v.slo_ttft_attainment); }},
        {"slo_tpot_attainment", [](const V& v) { return opt_num(v.slo_tpot_attainment); }},
        {"slo_e2e_attainment", [](const V& v) { return opt_num(v.slo_e2e_attainment); }},
        {"goodput_rps", [](const V& v) { return v.window_empty ? std::string() : opt_num(v.goodput_rps); }},
        {"goodput_output_tokens_per_s",
         [](const V& v) { return v.window_empty ? std::string() : opt_num(v.goodput_output_tokens_per_s); }},
        {"window_start_s", [](const V& v) { return sec(v.window_start_s); }},
        {"window_end_s", [](const V& v) { return sec(v.window_end_s); }},
        {"window_requests", [](const V& v) { return std::to_string(v.window_requests); }},
        {"window_finished", [](const V& v) { return std::to_string(v.window_finished); }},
        {"warnings", [](const V& v) { return join_warnings(v.warnings); }},
        {"host_hit_rate", [](const V& v) { return num(v.host_hit_rate); }},
        {"ssd_hit_rate", [](const V& v) { return num(v.ssd_hit_rate); }},
        {"recompute_rate", [](const V& v) { return num(v.recompute_rate); }},
    };
    c.insert(c.end(), rest.begin(), rest.end());
    return c;
  }();
  return columns;
}

}  // namespace

std::vector<std::string> summary_column_names() {
  std::vector<std::string> out;
  for (const auto& c : summary_columns()) out.push_back(c.first);
  return out;
}

namespace {

LatencySummary latency_summary(const QuantileSketch& q) {
  if (q.count() == 0) return {};
  return {q.mean(), q.quantile(0.5), q.quantile(0.9), q.quantile(0.99)};
}

}  // namespace

RunReport::RunReport(ReportOptions opt)
    : opt_(std::move(opt)),
      slo_any_(opt_.slo.any()),
      fairness_(opt_.w_in, opt_.w_out),
      rows_(kRowRing, [this](ReportedRequest& q) { consume(q); }, opt_.background_rows) {
  if (opt_.window.set()) fairness_.enable_window(opt_.window);
  std::error_code ec;
  std::filesystem::create_directories(opt_.out_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create output folder: {}", opt_.out_dir, ec.message()));
  if (opt_.write_requests) {
    requests_ = std::make_unique<CsvWriter>(opt_.out_dir + "/requests.csv");
    write_request_header(*requests_);
  }
  if (opt_.service_series) {
    service_ = std::make_unique<CsvWriter>(opt_.out_dir + "/client_service.csv");
    for (const char* h : {"time_s", "client", "client_name", "service", "extend_service", "backlogged"})
      service_->field(std::string_view(h));
    service_->end_row();
  }
}

void RunReport::sample_service(Time t) {
  SIM_CHECK(service_ && t >= service_t_, "sample_service({}) out of order or without service_series", t);
  service_t_ = t;
  const std::size_t n = fairness_.clients();
  if (service_last_.size() < n) service_last_.resize(n);
  for (ClientId c = 0; c < n; ++c) {
    const ServiceRow now{fairness_.service(c), fairness_.extend_service(c), fairness_.backlogged(c)};
    ServiceRow& last = service_last_[c];
    if (now == last) continue;
    last = now;
    service_->seconds_ns(t).field(static_cast<std::int64_t>(c)).field(client_name(c));
    service_->amount(now.service).amount(now.extend);
    service_->field(static_cast<std::int64_t>(now.backlogged)).end_row();
  }
}

const std::string& RunReport::client_name(ClientId c) {
  if (opt_.clients && c < opt_.clients->size()) return opt_.clients->name(c);
  while (fallback_names_.size() <= c) fallback_names_.push_back(fmt::format("client{}", fallback_names_.size()));
  return fallback_names_[c];
}

const SloThresholds& RunReport::client_slo(ClientId c) {
  if (slo_of_.size() <= c) slo_of_.resize(c + 1);
  if (!slo_of_[c]) slo_of_[c] = opt_.slo.of(client_name(c));
  return *slo_of_[c];
}

void RunReport::on_request(const RequestOutcome& r) {
  const ClientId c = r.spec->client;
  ReportedRequest& q = rows_.slot();
  q.o = r;
  q.o.spec = nullptr;  // (the engine frees the request: its fields are copied below)
  q.o.reason = {};
  q.id = r.spec->id;
  q.client = c;
  q.prompt_tokens = r.spec->prompt_tokens;
  q.output_tokens = r.spec->output_tokens;
  q.reason.assign(r.reason);
  q.slo = slo_any_ ? evaluate_slo(client_slo(c), r) : SloVerdict{};
  while (row_names_.size() <= c) row_names_.push_back(client_name(static_cast<ClientId>(row_names_.size())));
  q.client_name = &row_names_[c];
  if (r.finish) last_finish_ = std::max(last_finish_, *r.finish);
  rows_.commit();
}

void RunReport::consume(const ReportedRequest& q) {
  if (clients_.size() <= q.client) clients_.resize(q.client + 1);
  const RequestRecord rec = make_record(q);
  account(clients_[q.client], overall_, rec);
  if (opt_.window.set()) records_.push_back(rec);
  if (requests_) write_request_row(*requests_, q);
}

// Per-request values of summary.csv from the accumulator of the window's
// requests, over `duration` seconds.
static void fill_request_values(SummaryValues& v, const ClientAccumulator& a, double duration, bool slo) {
  v.throughput_rps = static_cast<double>(a.finished) / duration;
  v.input_tokens_per_s = static_cast<double>(a.input_tokens) / duration;
  v.output_tokens_per_s = static_cast<double>(a.output_tokens) / duration;
  v.ttft = latency_summary(a.lat.ttft);
  v.tpot = latency_summary(a.lat.tpot);
  v.e2e = latency_summary(a.lat.e2e);
  v.queue = latency_summary(a.lat.queue);
  if (a.lat.normalized.count()) v.normalized_latency_s_per_token = a.lat.normalized.mean();
  v.window_finished = a.finished;
  if (!slo) return;
  auto share = [](std::uint64_t met, std::uint64_t counted) {
    return counted ? std::optional<double>(static_cast<double>(met) / static_cast<double>(counted)) : std::nullopt;
  };
  v.slo_met = a.slo_met;
  v.slo_attainment = share(a.slo_met, a.slo_counted);
  v.slo_ttft_attainment = share(a.ttft_met, a.ttft_counted);
  v.slo_tpot_attainment = share(a.tpot_met, a.tpot_counted);
  v.slo_e2e_attainment = share(a.e2e_met, a.e2e_counted);
  v.goodput_rps = static_cast<double>(a.slo_met) / duration;
  v.goodput_output_tokens_per_s = static_cast<double>(a.slo_output_tokens) / duration;
}

RunSummary RunReport::finish(const ClientTable& clients, const SimulationTotals& totals,
                             const std::vector<WorkerStats>& workers, const SummaryFields& identity) {
  rows_.finish();  // every request's row is consumed (and rethrows the consumer's error)
  if (!opt_.clients) opt_.clients = &clients;
  if (requests_) requests_->close();
  const Time run_end = std::max(totals.end_time, last_finish_);
  const double span = std::max(1e-9, time_to_seconds(run_end - totals.first_arrival));
  fairness_.finish(run_end);
  if (service_) {
    sample_service(std::max({totals.end_time, last_finish_, service_t_}));
    service_->close();
  }
  clients_.resize(std::max(clients_.size(), clients.size()));

  // The measurement window: its requests' accumulators (overall, per client).
  RunSummary out;
  SummaryValues& v = out.values;
  ClientAccumulator window_all;
  std::vector<ClientAccumulator> window_clients;
  const ClientAccumulator* win = &overall_;
  const std::vector<ClientAccumulator>* win_clients = &clients_;
  double duration = span;
  std::optional<FairnessTracker::WindowMeasures> fair_win;  // window set and measured
  bool fair_win_missing = false;
  v.window_start_s = time_to_seconds(totals.first_arrival);
  v.window_end_s = time_to_seconds(run_end);
  v.window_requests = overall_.requests - overall_.not_arrived;
  if (opt_.window.set()) {
    std::erase_if(records_, [](const RequestRecord& r) { return !r.arrival || r.status == RequestStatus::kNotArrived; });
    std::stable_sort(records_.begin(), records_.end(),
                     [](const RequestRecord& x, const RequestRecord& y) { return *x.arrival < *y.arrival; });
    std::vector<Time> arrivals;
    arrivals.reserve(records_.size());
    for (const RequestRecord& r : records_) arrivals.push_back(*r.arrival);
    const WindowSelection sel = select_window(arrivals, opt_.window, totals.first_arrival, run_end);
    window_clients.resize(clients_.size());
    for (std::size_t i = sel.first; i < sel.last; ++i) {
      account(window_clients[records_[i].client], window_all, records_[i]);
    }
    win = &window_all;
    win_clients = &window_clients;
    duration = std::max(1e-9, time_to_seconds(sel.end - sel.start));
    v.window_start_s = time_to_seconds(sel.start);
    v.window_end_s = time_to_seconds(sel.end);
    v.window_requests = window_all.requests;
    fair_win = fairness_.window_measures(sel.start, sel.end, clients.size());
    fair_win_missing = !fair_win;
  }
  v.fairness_run = fairness_.measures(clients.size(), span);
  v.fairness = fair_win ? fair_win->m : v.fairness_run;

  {
    CsvWriter w(opt_.out_dir + "/clients.csv");
    write_header(w, client_columns());
    for (ClientId c = 0; c < clients_.size(); ++c) {
      const ClientAccumulator& a = clients_[c];
      const double run_service =
          opt_.w_in * static_cast<double>(a.input_tokens) + opt_.w_out * static_cast<double>(a.output_tokens);
      const double run_extend = opt_.w_in * static_cast<double>(a.input_tokens - a.cached_tokens) +
                                opt_.w_out * static_cast<double>(a.output_tokens);
      ClientRow row{c < clients.size() ? clients.name(c) : fmt::format("client{}", c), &a, run_service, run_extend,
                    fairness_.backlogged_s(c), span, duration, &(*win_clients)[c],
                    opt_.slo.any() && client_slo(c).any(),
                    run_service, run_extend, fairness_.backlogged_s(c), span};
      if (fair_win) {
        auto at = [c](const std::vector<double>& x) { return c < x.size() ? x[c] : 0.0; };
        row.service = at(fair_win->service);
        row.extend_service = at(fair_win->extend_service);
        row.backlogged_s = at(fair_win->backlogged_s);
        row.service_span = duration;
      }
      write_row(w, client_columns(), row);
    }
    w.close();
  }
  {
    CsvWriter w(opt_.out_dir + "/workers.csv");
    write_header(w, worker_columns());
    for (std::size_t i = 0; i < workers.size(); ++i)
      write_row(w, worker_columns(), WorkerRow{static_cast<std::int64_t>(i), &workers[i], span});
    w.close();
  }

  const ClientAccumulator& a = overall_;
  std::int64_t prompt = 0, cached = 0, host = 0, ssd = 0;
  for (const auto& s : workers) {
    v.preemptions += s.preemptions;
    prompt += s.prompt_tokens;
    cached += s.cached_tokens;
    host += s.host.hit_tokens;
    ssd += s.ssd.hit_tokens;
  }
  v.requests = a.requests;
  v.finished = a.finished;
  v.rejected = a.rejected;
  v.unfinished = a.unfinished;
  v.not_arrived = a.not_arrived;
  v.duration_s = span;
  fill_request_values(v, *win, duration, opt_.slo.any());
  v.cache_hit_rate = prompt ? static_cast<double>(cached) / static_cast<double>(prompt) : 0.0;
  if (prompt) {
    v.host_hit_rate = static_cast<double>(host) / static_cast<double>(prompt);
    v.ssd_hit_rate = static_cast<double>(ssd) / static_cast<double>(prompt);
    v.recompute_rate = static_cast<double>(prompt - cached - host - ssd) / static_cast<double>(prompt);
  }
  v.events = totals.events;

  WarningInputs warn;
  warn.window_requests = v.window_requests;
  warn.window_rejected = win->rejected;
  warn.window_unfinished = win->unfinished;
  warn.window_set = opt_.window.set();
  warn.window_start_s = v.window_start_s;
  warn.window_end_s = v.window_end_s;
  for (const auto& [k, x] : identity)
    if (k == "policy_global") warn.policy_global = x;
  for (const auto& [name, t] : opt_.slo.clients)
    if (std::find(clients.names().begin(), clients.names().end(), name) == clients.names().end())
      warn.unknown_slo_clients.push_back(name);
  v.warnings = run_warnings(warn, workers);
  v.window_empty = opt_.window.set() && v.window_requests == 0;
  if (fair_win_missing)
    v.warnings.push_back(
        "the fairness columns and clients.csv's service columns cover the whole run, not the measurement window: "
        "the engine reported no arrival at the window's start (RunObserver::on_arrival)");

  out.fields = identity;
  for (const auto& [name, text] : summary_columns()) out.fields.emplace_back(name, text(v));
  CsvWriter w(opt_.out_dir + "/summary.csv");
  for (const auto& [k, x] : out.fields) w.field(k);
  w.end_row();
  for (const auto& [k, x] : out.fields) w.field(x);
  w.end_row();
  w.close();
  write_file(opt_.out_dir + "/summary.json", summary_json(out.fields));
  return out;
}

}  // namespace servesim
