#include "reports/run_report.h"

#include <algorithm>
#include <filesystem>

#include "sim/error.h"

namespace servesim {
namespace {

void account(ClientAccumulator& a, const RequestOutcome& r) {
  a.requests++;
  switch (r.status) {
    case RequestStatus::kFinished: a.finished++; break;
    case RequestStatus::kRejected: a.rejected++; break;
    case RequestStatus::kUnfinished: a.unfinished++; break;
    case RequestStatus::kNotArrived: a.not_arrived++; break;
  }
  if (r.admitted) {
    a.input_tokens += r.spec->prompt_tokens;
    a.cached_tokens += r.cached_tokens;
  }
  a.output_tokens += r.generated_tokens;
  a.preemptions += r.preemptions;
  if (r.status != RequestStatus::kFinished) return;
  const double arrival = time_to_seconds(*r.arrival), finish = time_to_seconds(*r.finish);
  const double first = time_to_seconds(*r.first_token);
  a.lat.ttft.add(first - arrival);
  a.lat.e2e.add(finish - arrival);
  a.lat.queue.add(time_to_seconds(*r.admitted) - arrival);
  a.lat.normalized.add((finish - arrival) / static_cast<double>(r.spec->output_tokens));
  if (r.spec->output_tokens > 1) a.lat.tpot.add((finish - first) / static_cast<double>(r.spec->output_tokens - 1));
}

const char* kLatencyNames[] = {"ttft", "tpot", "e2e", "queue"};

void latency_header(CsvWriter& w) {
  for (const char* n : kLatencyNames)
    for (const char* s : {"mean", "p50", "p90", "p99", "max"}) w.field(fmt::format("{}_{}_s", n, s));
}

void latency_fields(CsvWriter& w, const LatencyStats& l) {
  for (const QuantileSketch* q : {&l.ttft, &l.tpot, &l.e2e, &l.queue}) {
    if (q->count() == 0) {
      for (int i = 0; i < 5; ++i) w.empty();
      continue;
    }
    w.seconds(q->mean()).seconds(q->quantile(0.5)).seconds(q->quantile(0.9)).seconds(q->quantile(0.99));
    w.seconds(q->max());
  }
}

}  // namespace

RunReport::RunReport(ReportOptions opt) : opt_(std::move(opt)), fairness_(opt_.w_in, opt_.w_out) {
  std::error_code ec;
  std::filesystem::create_directories(opt_.out_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create output folder: {}", opt_.out_dir, ec.message()));
  if (opt_.write_requests) {
    requests_ = std::make_unique<CsvWriter>(opt_.out_dir + "/requests.csv");
    for (const char* h : {"id", "client", "worker", "arrival_s", "admitted_s", "first_token_s", "finish_s", "ttft_s",
                          "tpot_s", "e2e_s", "prompt_tokens", "cached_tokens", "output_tokens", "generated_tokens",
                          "preemptions", "status", "reason"})
      requests_->field(std::string_view(h));
    requests_->end_row();
  }
  if (opt_.service_series) {
    service_ = std::make_unique<CsvWriter>(opt_.out_dir + "/client_service.csv");
    for (const char* h : {"time_s", "client", "service", "extend_service", "backlogged"})
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
    service_->seconds(time_to_seconds(t)).field(static_cast<std::int64_t>(c)).amount(now.service).amount(now.extend);
    service_->field(static_cast<std::int64_t>(now.backlogged)).end_row();
  }
}

void RunReport::on_request(const RequestOutcome& r) {
  if (clients_.size() <= r.spec->client) clients_.resize(r.spec->client + 1);
  account(clients_[r.spec->client], r);
  account(overall_, r);
  if (r.finish) last_finish_ = std::max(last_finish_, *r.finish);
  if (!requests_) return;
  CsvWriter& w = *requests_;
  w.field(r.spec->id).field(static_cast<std::int64_t>(r.spec->client));
  if (r.routed) w.field(static_cast<std::int64_t>(r.worker)); else w.empty();
  auto t = [&](const std::optional<Time>& x) { x ? w.seconds(time_to_seconds(*x)) : w.empty(); };
  t(r.arrival);
  t(r.admitted);
  t(r.first_token);
  t(r.finish);
  if (r.first_token && r.arrival) w.seconds(time_to_seconds(*r.first_token - *r.arrival)); else w.empty();
  if (r.finish && r.spec->output_tokens > 1)
    w.seconds(time_to_seconds(*r.finish - *r.first_token) / static_cast<double>(r.spec->output_tokens - 1));
  else
    w.empty();
  if (r.finish) w.seconds(time_to_seconds(*r.finish - *r.arrival)); else w.empty();
  w.field(r.spec->prompt_tokens).field(r.cached_tokens).field(r.spec->output_tokens).field(r.generated_tokens);
  w.field(static_cast<std::int64_t>(r.preemptions)).field(status_name(r.status)).field(r.reason);
  w.end_row();
}

SummaryFields RunReport::finish(const ClientTable& clients, const SimulationTotals& totals,
                                const std::vector<WorkerStats>& workers, const SummaryFields& identity) {
  if (requests_) requests_->close();
  const double span = std::max(1e-9, time_to_seconds(std::max(totals.end_time, last_finish_) - totals.first_arrival));
  fairness_.finish(std::max(totals.end_time, last_finish_));
  if (service_) {
    sample_service(std::max({totals.end_time, last_finish_, service_t_}));
    service_->close();
  }

  {
    CsvWriter w(opt_.out_dir + "/clients.csv");
    for (const char* h : {"client", "requests", "finished", "rejected", "unfinished", "not_arrived", "input_tokens",
                          "cached_tokens", "output_tokens", "service", "service_rate_per_s", "extend_service",
                          "backlogged_s", "throughput_rps", "preemptions"})
      w.field(std::string_view(h));
    latency_header(w);
    w.end_row();
    clients_.resize(std::max(clients_.size(), clients.size()));
    for (ClientId c = 0; c < clients_.size(); ++c) {
      const ClientAccumulator& a = clients_[c];
      double service = opt_.w_in * static_cast<double>(a.input_tokens) + opt_.w_out * static_cast<double>(a.output_tokens);
      w.field(c < clients.size() ? clients.name(c) : fmt::format("client{}", c));
      w.field(a.requests).field(a.finished).field(a.rejected).field(a.unfinished).field(a.not_arrived);
      w.field(a.input_tokens).field(a.cached_tokens).field(a.output_tokens).amount(service).field(service / span);
      w.amount(opt_.w_in * static_cast<double>(a.input_tokens - a.cached_tokens) +
               opt_.w_out * static_cast<double>(a.output_tokens));
      w.field(fairness_.backlogged_s(c));
      w.field(static_cast<double>(a.finished) / span).field(a.preemptions);
      latency_fields(w, a.lat);
      w.end_row();
    }
    w.close();
  }
  {
    CsvWriter w(opt_.out_dir + "/workers.csv");
    for (const char* h : {"worker", "iterations", "busy_s", "busy_fraction", "prefill_tokens", "decode_tokens",
                          "prompt_tokens", "cached_tokens", "cache_hit_rate", "admitted", "finished", "preemptions",
                          "peak_kv_pages", "kv_capacity_pages", "peak_kv_fraction", "peak_running", "peak_waiting"})
      w.field(std::string_view(h));
    w.end_row();
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const WorkerStats& s = workers[i];
      w.field(static_cast<std::int64_t>(i)).field(s.iterations).seconds(time_to_seconds(s.busy_ns));
      w.field(time_to_seconds(s.busy_ns) / span).field(s.prefill_tokens).field(s.decode_tokens);
      w.field(s.prompt_tokens).field(s.cached_tokens);
      w.field(s.prompt_tokens ? static_cast<double>(s.cached_tokens) / static_cast<double>(s.prompt_tokens) : 0.0);
      w.field(s.admitted).field(s.finished).field(s.preemptions).field(s.peak_kv_pages).field(s.kv_capacity_pages);
      w.field(static_cast<double>(s.peak_kv_pages) / static_cast<double>(std::max<std::int64_t>(1, s.kv_capacity_pages)));
      w.field(s.peak_running).field(s.peak_waiting);
      w.end_row();
    }
    w.close();
  }

  SummaryFields out = identity;
  auto put = [&](const std::string& k, const std::string& v) { out.emplace_back(k, v); };
  auto num = [](double v) { return fmt::format("{:.6g}", v); };
  auto sec = [](double v) { return fmt::format("{:.6f}", v); };
  const ClientAccumulator& a = overall_;
  std::int64_t preempt = 0, prompt = 0, cached = 0;
  for (const auto& s : workers) {
    preempt += s.preemptions;
    prompt += s.prompt_tokens;
    cached += s.cached_tokens;
  }
  put("requests", std::to_string(a.requests));
  put("finished", std::to_string(a.finished));
  put("rejected", std::to_string(a.rejected));
  put("unfinished", std::to_string(a.unfinished));
  put("not_arrived", std::to_string(a.not_arrived));
  put("duration_s", sec(span));
  put("throughput_rps", num(static_cast<double>(a.finished) / span));
  put("input_tokens_per_s", num(static_cast<double>(a.input_tokens) / span));
  put("output_tokens_per_s", num(static_cast<double>(a.output_tokens) / span));
  const char* names[] = {"ttft", "tpot", "e2e", "queue"};
  const QuantileSketch* qs[] = {&a.lat.ttft, &a.lat.tpot, &a.lat.e2e, &a.lat.queue};
  for (int i = 0; i < 4; ++i) {
    bool any = qs[i]->count() > 0;
    put(fmt::format("{}_mean_s", names[i]), any ? sec(qs[i]->mean()) : "");
    put(fmt::format("{}_p50_s", names[i]), any ? sec(qs[i]->quantile(0.5)) : "");
    put(fmt::format("{}_p90_s", names[i]), any ? sec(qs[i]->quantile(0.9)) : "");
    put(fmt::format("{}_p99_s", names[i]), any ? sec(qs[i]->quantile(0.99)) : "");
  }
  put("normalized_latency_mean_s_per_token", a.lat.normalized.count() ? num(a.lat.normalized.mean()) : "");
  put("cache_hit_rate", num(prompt ? static_cast<double>(cached) / static_cast<double>(prompt) : 0.0));
  put("preemptions", std::to_string(preempt));
  const FairnessTracker::Measures f = fairness_.measures(clients.size(), span);
  put("service_diff_max", num(f.diff_max));
  put("service_diff_mean", num(f.diff_mean));
  put("extend_service_diff_max", num(f.extend_diff_max));
  put("extend_service_diff_mean", num(f.extend_diff_mean));
  put("jain_service_rate", num(f.jain));
  put("jain_extend_service_rate", num(f.jain_extend));
  put("events", std::to_string(totals.events));

  CsvWriter w(opt_.out_dir + "/summary.csv");
  for (const auto& [k, v] : out) w.field(k);
  w.end_row();
  for (const auto& [k, v] : out) w.field(v);
  w.end_row();
  w.close();
  return out;
}

}  // namespace servesim
